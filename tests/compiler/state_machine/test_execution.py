"""Every shipped workload's state machine, executed in moto's interpreter against a scripted SageMaker.

For each run, every CreateTrainingJob request that reached "SageMaker" must pass the full service-model
check (max, pattern, enum) and equal the compiled request with the deploy-time values filled in, the
run id and attempt of its job name, the execution tag and the execution's overrides: nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest

from compiler import state_machine as sm
from compiler.facts import catalog
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.conftest import NAMES
from tests.compiler.state_machine.harness import check_requests, job_parts

pytestmark = pytest.mark.parametrize("name", NAMES)


def overrides_for(spec: sm.MachineSpec) -> dict[str, Any]:
    """A change to one value of each JSON type the spec has, plus instance count and runtime."""
    changed: dict[str, Any] = {}
    seen: set[type] = set()
    for key, value in spec.hyperparameters.items():
        if type(value) in seen:
            continue
        seen.add(type(value))
        if isinstance(value, bool):
            changed[key] = not value
        elif isinstance(value, int):
            changed[key] = value + 7
        elif isinstance(value, float):
            changed[key] = value * 3
        elif isinstance(value, str):
            changed[key] = value + "-b"
    ceiling = spec.policy.instance_count_max or spec.instance_count
    count = ceiling if ceiling > spec.instance_count else max(1, spec.instance_count - 1)
    return {"hyperparameters": changed, "instance_count": count, "max_run": spec.max_run // 2}


def hourly_price(spec: sm.MachineSpec, count: int) -> float:
    price = catalog.price(spec.instance_type, spec.price_region)
    assert price is not None
    return price * count


def test_empty_input_runs_the_spec_and_reports(name: str, deployed, specs) -> None:
    d, spec = deployed[name], specs[name]
    run = d.run({}, [sage.completes(billable_seconds=5400)])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {})
    [request] = run.fake.calls
    out = run.output
    assert out["job_name"] == request["TrainingJobName"]
    assert out["job_arn"].endswith(":training-job/" + request["TrainingJobName"])
    assert (out["status"], out["billable_seconds"], out["attempts"]) == ("Completed", 5400, 1)
    assert out["cost_per_hour_usd"] == pytest.approx(hourly_price(spec, spec.instance_count))
    assert (out["instance_type"], out["instance_count"]) == (spec.instance_type, spec.instance_count)
    assert out["model_artifacts"] == (
        request["OutputDataConfig"]["S3OutputPath"].rstrip("/") + f"/{request['TrainingJobName']}/output/model.tar.gz"
    )
    assert run.notifications == [out]


def test_overrides_reach_the_request(name: str, deployed, specs) -> None:
    d, spec = deployed[name], specs[name]
    overrides = overrides_for(spec)
    run = d.run(overrides, [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, overrides)
    assert run.output["instance_count"] == overrides["instance_count"]
    assert run.output["cost_per_hour_usd"] == pytest.approx(hourly_price(spec, overrides["instance_count"]))
    assert run.output["overrides"] == overrides


def test_failed_job_ends_with_its_failure_reason(name: str, deployed) -> None:
    d = deployed[name]
    run = d.run({}, [sage.fails("AlgorithmError: ExecuteUserScriptError: exit code 1")])
    assert run.status == "FAILED"
    assert run.error == "TrainingJobFailed"
    assert run.cause.endswith("Failed after 1 attempt(s): AlgorithmError: ExecuteUserScriptError: exit code 1")
    check_requests(d, run, {})
    [note] = run.notifications
    assert (note["status"], note["failure_reason"]) == ("Failed", "AlgorithmError: ExecuteUserScriptError: exit code 1")


def test_capacity_failure_relaunches_under_a_new_name(name: str, deployed, specs) -> None:
    d, spec = deployed[name], specs[name]
    if spec.capacity_relaunches < 1:
        pytest.skip("the spec allows no relaunch")
    run = d.run({}, [sage.capacity_error(), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {})
    first, second = run.fake.calls
    (id1, n1), (id2, n2) = job_parts(spec, first["TrainingJobName"]), job_parts(spec, second["TrainingJobName"])
    assert (id1 == id2, n1, n2) == (True, 0, 1)
    assert first.get("CheckpointConfig") == second.get("CheckpointConfig")  # the relaunch resumes
    assert run.fake.waits == [spec.capacity_wait_seconds]
    assert (run.output["attempts"], run.output["job_name"]) == (2, second["TrainingJobName"])


def test_capacity_failures_stop_at_the_spec_limit(name: str, deployed, specs) -> None:
    d, spec = deployed[name], specs[name]
    n = spec.capacity_relaunches
    run = d.run({}, [sage.capacity_error() for _ in range(n + 1)] + [sage.completes()])
    assert (run.status, run.error) == ("FAILED", "InsufficientCapacity")
    assert f"after {n + 1} attempt(s): CapacityError" in run.cause
    assert [job_parts(spec, c["TrainingJobName"])[1] for c in run.fake.calls] == list(range(n + 1))
    assert run.fake.waits == spec.capacity_waits()[:n]
    check_requests(d, run, {})


THROTTLED_CAUSE = sage.throttled().reason  # "Rate exceeded (Service: SageMaker, Status Code: 400, ...)"


# The names the AWS SDK integration reports (docs/aws-assumptions.md): throttling under the generic name with the
# service's message in the cause (SageMaker's "Rate exceeded", or AWS's common "request throttling" wording).
@pytest.mark.parametrize("cause", [THROTTLED_CAUSE, sage.sdk_cause("The request was denied due to request throttling.")])
def test_throttling_is_retried(name: str, cause: str, deployed) -> None:
    d = deployed[name]
    refusal = sage.api_error("SageMaker.SageMakerException", cause)
    run = d.run({}, [refusal, refusal, sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    assert len(run.fake.calls) == 3 and len(run.fake.created) == 1
    assert len({c["TrainingJobName"] for c in run.fake.calls}) == 1  # no job was created, so the name is free
    assert len(run.fake.waits) == 2 and all(w >= 0 for w in run.fake.waits)
    check_requests(d, run, {})


def test_a_quota_refusal_ends_the_run_naming_the_quota_and_its_fix(name: str, deployed, specs) -> None:
    # SageMaker's quota answer (ResourceLimitExceeded, the modelled error): no job, and waiting does not raise a quota.
    # A spec without fallback types ends at once, "not created", with SageMaker's message and how to raise it.
    d, spec = deployed[name], specs[name]
    if len({v.instance_type for v in spec.variants}) > 1:
        pytest.skip("a spec with fallback types moves to the next one (test_fallbacks.py)")
    quota = sage.quota_exceeded(spec.instance_type, limit=0, used=0)
    run = d.run({}, [quota, sage.completes()])
    assert (run.status, run.error) == ("FAILED", "TrainingJobNotCreated")
    assert len(run.fake.calls) == 1 and run.fake.created == [] and run.fake.waits == []
    assert run.fake.stop_calls == []  # nothing to stop: no job exists
    assert f"The account-level service limit '{spec.instance_type} for training job usage' is 0 Instances" in run.cause
    assert "raise that quota in Service Quotas" in run.cause
    assert "add capacity_retry.fallback_instance_types" in run.cause
    assert run.notifications[0]["status"] == "NotCreated"


def test_refused_request_is_reported_without_a_job(name: str, deployed) -> None:
    d = deployed[name]
    # SageMaker's describe says no job of the name exists ("Requested resource not found."): not created, no stop,
    # and no wait: the answer is final.
    run = d.run({}, [sage.api_error("SageMaker.ResourceInUseException", "a training job with this name exists")])
    assert (run.status, run.error) == ("FAILED", "TrainingJobNotCreated")
    assert run.fake.stop_calls == [] and run.fake.waits == []
    assert "SageMaker.ResourceInUseException: a training job with this name exists" in run.cause
    assert run.fake.created == []
    assert run.notifications[0]["status"] == "NotCreated"


def test_request_refused_as_invalid_is_invalid_input(name: str, deployed) -> None:
    # SageMaker's ValidationException as the AWS SDK integration reports it: the generic name, the service's message
    # in the cause (throttling arrives under the same generic name).
    error = "SageMaker.SageMakerException"
    d = deployed[name]
    cause = sage.sdk_cause("1 validation error detected: Value 'x' at 'trainingJobName' failed to satisfy constraint")
    run = d.run({}, [sage.api_error(error, cause)] * 7)
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT)
    assert run.cause == f"SageMaker refused the request: {cause}"
    assert len(run.fake.calls) == 1 and run.fake.waits == []  # refused once is refused: no repeat, no wait
    assert run.fake.created == [] and run.notifications == []


def test_execution_name_that_tags_refuse(name: str, deployed) -> None:
    d = deployed[name]
    run = d.run({}, [sage.completes()], name="retry(2)!")
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {}, execution_tag=d.arn)
    assert len(run.fake.calls) == 1  # known before the call: no refusal needed


def _invalid_inputs(spec: sm.MachineSpec) -> list[tuple[str, Any, str]]:
    """(what is wrong, input, the key of the message the execution must fail with)."""
    cases: list[tuple[str, Any, str]] = [
        ("not an object", ["hyperparameters"], "not_object"),
        ("unknown field", {"instance_cont": 2}, "keys"),
        ("count as string", {"instance_count": "2"}, "count"),
        ("count fraction", {"instance_count": 2.5}, "count"),
        ("count zero", {"instance_count": 0}, "count"),
        ("count too large", {"instance_count": spec.policy.instance_count_max + 1}, "count"),
        ("max_run fraction", {"max_run": 3600.5}, "max_run"),
        ("max_run zero", {"max_run": 0}, "max_run"),
        ("max_run too long", {"max_run": spec.max_run + 1}, "max_run"),
        ("max_run null", {"max_run": None}, "max_run"),
        ("hyperparameters not an object", {"hyperparameters": ["lr", 1]}, "hp_type"),
        ("unknown hyperparameter", {"hyperparameters": {"no_such_name": 1}}, "hp_keys"),
    ]
    for key, value in spec.hyperparameters.items():
        wrong = "5" if isinstance(value, int | float) and not isinstance(value, bool) else 5
        cases.append((f"wrong type for {key}", {"hyperparameters": {key: wrong}}, "hp_value_type"))
        break
    for key, value in spec.hyperparameters.items():
        if isinstance(value, int) and not isinstance(value, bool):
            cases.append((f"fraction for integer {key}", {"hyperparameters": {key: value + 0.5}}, "hp_value_type"))
            break
    return cases


@pytest.mark.parametrize("case", range(14))
def test_invalid_input_fails_before_any_job(name: str, case: int, deployed, specs) -> None:
    cases = _invalid_inputs(specs[name])
    if case >= len(cases):
        pytest.skip("the spec has no hyperparameter of this kind")
    what, execution_input, key = cases[case]
    policy = specs[name].policy
    run = deployed[name].run(execution_input, [sage.completes()])
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT), what
    assert run.cause == policy.messages()[key] == policy.check(execution_input)[0], what
    assert run.fake.calls == [], "a job was requested for invalid input"
    assert run.notifications == []
