"""The definitions use only what Step Functions accepts, and the AWS SDK tasks handle errors by their AWS names.

Executed in moto with the test integrations of `sagemaker_sync.py`: the optimized SageMaker integration serves only
CreateTrainingJob (the developer guide's list has no StopTrainingJob), and the aws-sdk SageMaker tasks report errors
as AWS SDK integrations do (`SageMaker.SageMakerException` for throttling).
"""

from __future__ import annotations

import pytest

from compiler import state_machine as sm
from compiler.state_machine import integrations
from tests.project import ENVIRONMENTS, loaded
from tests.statemachine import sagemaker_sync as sage
from tests.statemachine.conftest import NAMES
from tests.statemachine.harness import job_parts

# From the developer guide: StopTrainingJob is reached through the AWS SDK integration.
STOP = "arn:aws:states:::aws-sdk:sagemaker:stopTrainingJob"
DESCRIBE = "arn:aws:states:::aws-sdk:sagemaker:describeTrainingJob"
# The describe's retry of throttling: 4 repeats, 5 s doubling.
DESCRIBE_WAITS = [5, 10, 20, 40]


def tasks(definition: dict) -> dict[str, dict]:
    return {n: s for n, s in definition["States"].items() if s["Type"] == "Task"}


def test_every_definition_passes_the_integration_check(test_specs) -> None:
    specs = [sm.spec_for(w, ENVIRONMENTS[env]) for env in ENVIRONMENTS for w in loaded().workloads(env)]
    for spec in [*specs, *test_specs.values()]:
        definition = sm.build_definition(spec)
        assert integrations.definition_problems(definition) == [], spec.workload
        resources = {s["Resource"] for s in tasks(definition).values()}
        assert "arn:aws:states:::sagemaker:stopTrainingJob" not in resources


def test_stop_and_describe_use_the_aws_sdk_integration(specs) -> None:
    states = tasks(sm.build_definition(specs[NAMES[0]]))
    assert states["Stop job"]["Resource"] == STOP
    assert states["Describe job"]["Resource"] == DESCRIBE
    assert states["Describe job"]["Retry"][0]["ErrorEquals"] == ["SageMaker.SageMakerException"]


@pytest.mark.parametrize("name", NAMES[:2])
def test_a_job_still_running_when_the_wait_breaks_off_is_stopped(name: str, deployed) -> None:
    d = deployed[name]
    run = d.run({}, [sage.lost()])
    [request] = run.fake.calls
    assert run.fake.stopped == [request["TrainingJobName"]], run.history[-1]
    assert (run.status, run.error) == ("FAILED", "TrainingJobFailed")
    [note] = run.notifications
    assert note["job_name"] == request["TrainingJobName"]


def test_a_throttled_describe_is_retried_and_the_capacity_relaunch_happens(deployed_test) -> None:
    d = deployed_test["sm-fallback"]
    fake_script = [sage.capacity_error(), sage.completes()]
    run = d.run({}, fake_script, describe_throttle=2)
    assert run.status == "SUCCEEDED", run.cause
    assert [job_parts(d.spec, c["TrainingJobName"])[1] for c in run.fake.calls] == [0, 1]
    assert run.fake.describes == 3  # two throttled, then the capacity failure is read
    assert run.fake.waits[:2] == DESCRIBE_WAITS[:2]
    assert run.output["attempts"] == 2



# CreateTrainingJob fields (and one value) that no public source shows the optimized `.sync` integration accepting
# (its schema has lagged SageMaker: aws-step-functions-data-science-sdk-python#42): sent only when a spec asks.
UNEVIDENCED_FIELDS = {"RetryStrategy", "InfraCheckConfig", "RemoteDebugConfig", "SessionChainingConfig"}
UNEVIDENCED_RESOURCE_FIELDS = {"InstanceGroups", "TrainingPlanArn"}


@pytest.mark.parametrize("label", ["sm-generic", "sm-hostile", "sm-fallback", "sm-fallback-efa"])
def test_optional_fields_reach_train_only_when_the_spec_asks(test_specs, label: str) -> None:
    states = sm.build_definition(test_specs[label])["States"].values()
    trains = [s["Parameters"] for s in states if s.get("Resource") == sm.SYNC_RESOURCE]
    assert trains
    for parameters in trains:
        assert not {k.removesuffix(".$") for k in parameters} & UNEVIDENCED_FIELDS
        assert not {k.removesuffix(".$") for k in parameters["ResourceConfig"]} & UNEVIDENCED_RESOURCE_FIELDS
        assert all(c.get("InputMode") != "FastFile" for c in parameters.get("InputDataConfig", []))


def test_a_heterogeneous_cluster_sends_the_instance_groups_it_asks_for(test_specs) -> None:
    [train] = [s for s in sm.build_definition(test_specs["sm-hetero"])["States"].values()
               if s.get("Resource") == sm.SYNC_RESOURCE]
    assert [g["InstanceGroupName"] for g in train["Parameters"]["ResourceConfig"]["InstanceGroups"]] == ["gpu", "cpu"]
