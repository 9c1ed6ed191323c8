"""Every shipped workload's state machine, executed in moto's interpreter against a scripted SageMaker.

For each run, every CreateTrainingJob request that reached "SageMaker" must pass the full service-model
check (max, pattern, enum) and equal the compiled request with the deploy-time values filled in, the
run id and attempt of its job name, the execution tag and the execution's overrides: nothing else.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from tests.statemachine import sagemaker_sync as sage
from tests.statemachine.conftest import NAMES
from tests.statemachine.harness import Deployed, Run
from compiler import catalog
from compiler import placeholders as ph
from compiler import state_machine as sm
from compiler.request import TAG_EXECUTION
from compiler.service_model import validate_request

pytestmark = pytest.mark.parametrize("name", NAMES)


def job_parts(spec: sm.MachineSpec, job_name: str) -> tuple[str, int]:
    """RunId and Attempt of a job name, which must be `<base_job_name>-<12 hex>-<attempt>` and <= 63 chars."""
    match = re.fullmatch(re.escape(spec.base_job_name) + r"-([0-9a-f]{12})-(\d+)", job_name)
    assert match, f"job name {job_name!r} is not <base>-<run id>-<attempt>"
    assert len(job_name) <= 63
    return match.group(1), int(match.group(2))


def expected_request(d: Deployed, job_name: str, execution_tag: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The compiled request, filled in as Step Functions and the run would, plus the overrides."""
    run_id, attempt = job_parts(d.spec, job_name)
    values = d.values | {ph.RUN_ID: run_id, ph.ATTEMPT: str(attempt)}
    request = ph.substitute(copy.deepcopy(d.spec.request), values)
    request["Tags"].append({"Key": TAG_EXECUTION, "Value": execution_tag})
    for key, value in overrides.get("hyperparameters", {}).items():
        request["HyperParameters"][key] = json.dumps(value)
    if "instance_count" in overrides:
        request["ResourceConfig"]["InstanceCount"] = overrides["instance_count"]
    if "max_run" in overrides:
        request["StoppingCondition"]["MaxRuntimeInSeconds"] = overrides["max_run"]
    return request


def check_requests(d: Deployed, run: Run, overrides: dict[str, Any], execution_tag: str | None = None) -> None:
    tag = execution_tag or f"{d.arn.replace(':stateMachine:', ':execution:')}:{run.name}"
    assert run.fake.calls, "no CreateTrainingJob reached SageMaker"
    for request in run.fake.calls:
        assert validate_request(request) == []
        assert request == expected_request(d, request["TrainingJobName"], tag, overrides)


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
    return {"hyperparameters": changed, "instance_count": spec.instance_count + 1, "max_run": spec.max_run // 2}


def test_empty_input_runs_the_spec_and_reports(name: str, deployed, specs) -> None:
    d, spec = deployed[name], specs[name]
    run = d.run({}, [sage.completes(billable_seconds=5400)])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {})
    [request] = run.fake.calls
    out = run.output
    price = catalog.CATALOG[spec.instance_type].price_per_hour
    assert out["job_name"] == request["TrainingJobName"]
    assert out["job_arn"].endswith(":training-job/" + request["TrainingJobName"])
    assert (out["status"], out["billable_seconds"], out["attempts"]) == ("Completed", 5400, 1)
    assert out["cost_per_hour_usd"] == pytest.approx(price * spec.instance_count)
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
    price = catalog.CATALOG[spec.instance_type].price_per_hour
    assert run.output["cost_per_hour_usd"] == pytest.approx(price * overrides["instance_count"])


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


@pytest.mark.parametrize("error", [*sm.THROTTLING_ERRORS[:2], *sm.QUOTA_ERRORS])
def test_throttling_and_quota_errors_are_retried(name: str, error: str, deployed) -> None:
    d = deployed[name]
    refusal = sage.api_error(error, "Rate exceeded")
    run = d.run({}, [refusal, refusal, sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    assert len(run.fake.calls) == 3 and len(run.fake.created) == 1
    assert len({c["TrainingJobName"] for c in run.fake.calls}) == 1  # no job was created, so the name is free
    assert len(run.fake.waits) == 2 and all(w >= 0 for w in run.fake.waits)
    check_requests(d, run, {})


def test_refused_request_is_reported_without_a_job(name: str, deployed) -> None:
    d = deployed[name]
    run = d.run({}, [sage.api_error("SageMaker.ValidationException", "1 validation error detected")])
    assert (run.status, run.error) == ("FAILED", "TrainingJobNotCreated")
    assert "SageMaker.ValidationException: 1 validation error detected" in run.cause
    assert run.fake.created == []
    assert run.notifications[0]["status"] == "NotCreated"


def test_execution_name_that_tags_refuse(name: str, deployed) -> None:
    d = deployed[name]
    run = d.run({}, [sage.completes()], name="retry(2)!")
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {}, execution_tag=d.arn)


def _invalid_inputs(spec: sm.MachineSpec) -> list[tuple[str, Any, str]]:
    """(what is wrong, input, text the cause must contain)."""
    cases: list[tuple[str, Any, str]] = [
        ("not an object", ["hyperparameters"], "must be a JSON object"),
        ("unknown field", {"instance_cont": 2}, "allowed (all optional): hyperparameters, instance_count, max_run"),
        ("count as string", {"instance_count": "2"}, "instance_count:"),
        ("count fraction", {"instance_count": 2.5}, "instance_count:"),
        ("count zero", {"instance_count": 0}, "instance_count:"),
        ("count too large", {"instance_count": spec.max_instance_count + 1}, "instance_count:"),
        ("max_run fraction", {"max_run": 3600.5}, "max_run:"),
        ("max_run zero", {"max_run": 0}, "max_run:"),
        ("max_run too long", {"max_run": spec.max_run_limit + 1}, "max_run:"),
        ("max_run null", {"max_run": None}, "max_run:"),
        ("hyperparameters not an object", {"hyperparameters": ["lr", 1]}, "hyperparameters: must be an object"),
        ("unknown hyperparameter", {"hyperparameters": {"no_such_name": 1}}, "hyperparameters: unknown name"),
    ]
    for key, value in spec.hyperparameters.items():
        wrong = "5" if isinstance(value, (int, float)) and not isinstance(value, bool) else 5
        cases.append((f"wrong type for {key}", {"hyperparameters": {key: wrong}}, f"{key} ("))
        break
    for key, value in spec.hyperparameters.items():
        if isinstance(value, int) and not isinstance(value, bool):
            cases.append((f"fraction for integer {key}", {"hyperparameters": {key: value + 0.5}}, f"{key} (integer)"))
            break
    return cases


@pytest.mark.parametrize("case", range(14))
def test_invalid_input_fails_before_any_job(name: str, case: int, deployed, specs) -> None:
    cases = _invalid_inputs(specs[name])
    if case >= len(cases):
        pytest.skip("the spec has no hyperparameter of this kind")
    what, execution_input, expected = cases[case]
    run = deployed[name].run(execution_input, [sage.completes()])
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT), what
    assert expected in run.cause, what
    assert run.fake.calls == [], "a job was requested for invalid input"
    assert run.notifications == []

