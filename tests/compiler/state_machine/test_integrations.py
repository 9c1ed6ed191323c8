"""The definitions use only what Step Functions accepts, and the AWS SDK tasks handle errors by their AWS names.

Executed in moto with the test integrations of `sagemaker_sync.py`: every SageMaker task is an AWS SDK task
(create, describe, stop), and they report errors as AWS SDK integrations do (`SageMaker.SageMakerException` for
throttling).
"""

from __future__ import annotations

import pytest

from compiler import state_machine as sm
from compiler.state_machine import integrations
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.conftest import NAMES
from tests.compiler.state_machine.harness import job_parts
from tests.project import ENVIRONMENTS, loaded

# From the developer guide ("AWS SDK service integrations"): arn:aws:states:::aws-sdk:<service>:<apiAction>.
CREATE = "arn:aws:states:::aws-sdk:sagemaker:createTrainingJob"
STOP = "arn:aws:states:::aws-sdk:sagemaker:stopTrainingJob"
DESCRIBE = "arn:aws:states:::aws-sdk:sagemaker:describeTrainingJob"
# The describe's retry of throttling: 4 repeats, 5 s doubling.


def tasks(definition: dict) -> dict[str, dict]:
    return {n: s for n, s in definition["States"].items() if s["Type"] == "Task"}


def test_every_definition_passes_the_integration_check(test_specs) -> None:
    specs = [sm.spec_for(w, ENVIRONMENTS[env]) for env in ENVIRONMENTS for w in loaded().workloads(env)]
    for spec in [*specs, *test_specs.values()]:
        definition = sm.build_definition(spec)
        assert integrations.definition_problems(definition) == [], spec.workload
        resources = {s["Resource"] for s in tasks(definition).values()}
        assert not any(r.startswith("arn:aws:states:::sagemaker:") for r in resources), "no optimized SageMaker task"
        assert not any(r.endswith(".sync") for r in resources)


def test_create_stop_and_describe_use_the_aws_sdk_integration(specs) -> None:
    states = tasks(sm.build_definition(specs["gpt-smddp"]))  # a spec whose run may stop its own job
    assert states["Train"]["Resource"] == CREATE
    assert "Retry" not in states["Train"]  # a quota is not retried; throttling has states of its own
    assert [c["ErrorEquals"] for c in states["Train"]["Catch"]] == [
        ["SageMaker.ResourceLimitExceededException"], ["SageMaker.SageMakerException"], ["States.ALL"]]
    assert {states[n]["Resource"] for n in ("Stop watched job", "Stop unknown job", "Stop job lost from sight")} == {STOP}
    assert {states[n]["Resource"] for n in ("Describe job", "Describe the job again")} == {DESCRIBE}
    # The look-up after a failed create is not retried blindly: SageMaker's "no such job" is final.
    assert "Retry" not in states["Describe job"]
    assert states["Describe the job again"]["Retry"][0]["ErrorEquals"] == ["SageMaker.SageMakerException"]


@pytest.mark.parametrize("name", NAMES[:2])
def test_a_job_whose_create_answer_is_lost_is_found_and_waited_on(name: str, deployed) -> None:
    d = deployed[name]
    run = d.run({}, [sage.lost()])
    [request] = run.fake.calls
    assert run.fake.stop_calls == [], run.history[-1]
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.poll_waits == [60]  # found running by the describe, completed at the next look
    [note] = run.notifications
    assert (note["job_name"], note["status"]) == (request["TrainingJobName"], "Completed")


def test_a_throttled_describe_is_retried_and_the_capacity_relaunch_happens(deployed_test) -> None:
    d = deployed_test["sm-fallback"]
    fake_script = [sage.capacity_error(), sage.completes()]
    run = d.run({}, fake_script, describe_throttle=2)
    assert run.status == "SUCCEEDED", run.cause
    assert [job_parts(d.spec, c["TrainingJobName"])[1] for c in run.fake.calls] == [0, 1]
    assert run.fake.describes == 3 + 2  # two throttled, then the capacity failure; the relaunch: running, completed
    # Full jitter: each repeat waits up to 10 s, then 20 s (poll.DESCRIBE_RETRY).
    assert len(run.fake.waits) == 3 and 0 <= run.fake.waits[0] <= 10 and 0 <= run.fake.waits[1] <= 20
    assert run.output["attempts"] == 2



# Optional CreateTrainingJob fields (and one value) the SDK sends only when asked: the compiled request sends them only
# when a spec asks (the AWS SDK integration takes every member; this is about sending what the spec says).
UNEVIDENCED_FIELDS = {"RetryStrategy", "InfraCheckConfig", "RemoteDebugConfig", "SessionChainingConfig"}
UNEVIDENCED_RESOURCE_FIELDS = {"InstanceGroups", "TrainingPlanArn"}


@pytest.mark.parametrize("label", ["sm-generic", "sm-hostile", "sm-fallback", "sm-fallback-efa"])
def test_optional_fields_reach_train_only_when_the_spec_asks(test_specs, label: str) -> None:
    states = sm.build_definition(test_specs[label])["States"].values()
    trains = [s["Parameters"] for s in states if s.get("Resource") == sm.CREATE_RESOURCE]
    assert trains
    for parameters in trains:
        assert not {k.removesuffix(".$") for k in parameters} & UNEVIDENCED_FIELDS
        assert not {k.removesuffix(".$") for k in parameters["ResourceConfig"]} & UNEVIDENCED_RESOURCE_FIELDS
        assert all(c.get("InputMode") != "FastFile" for c in parameters.get("InputDataConfig", []))


def test_a_heterogeneous_cluster_sends_the_instance_groups_it_asks_for(test_specs) -> None:
    [train] = [s for s in sm.build_definition(test_specs["sm-hetero"])["States"].values()
               if s.get("Resource") == sm.CREATE_RESOURCE]
    assert [g["InstanceGroupName"] for g in train["Parameters"]["ResourceConfig"]["InstanceGroups"]] == ["gpu", "cpu"]
