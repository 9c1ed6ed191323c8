"""Capacity fallbacks and heterogeneous clusters, executed in moto.

A job that fails with `CapacityError` is relaunched under a new name (same run id, attempt + 1) on the next type of
the schedule, resuming from the same checkpoint prefix; each attempt's request is the workload compiled for that
type (`check_requests` compares it with `compile_request` on the type, not with `spec_for`'s variants), and the
output reports the type that ran and its price.
"""

from __future__ import annotations

from typing import Any

import pytest

from compiler import state_machine as sm
from compiler.facts import catalog
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import Deployed, check_requests, job_parts

FALLBACK = "sm-fallback"
FALLBACK_EFA = "sm-fallback-efa"
HETERO = "sm-hetero"


def test_variants_and_schedule(test_specs) -> None:
    spec = test_specs[FALLBACK]
    assert [v.instance_type for v in spec.variants] == ["ml.p5.48xlarge", "ml.p4de.24xlarge", "ml.p4d.24xlarge"]
    assert spec.schedule() == [0, 1, 2, 0, 1]
    assert spec.capacity_waits() == [60, 90, 135, 202, 303]
    assert [v.rates for v in spec.variants] == [
        tuple(catalog.hourly_cost(v.instance_type, n, "us-east-1") for n in (1, 2, 3)) for v in spec.variants]
    assert spec.variants[0].hyperparameters == {}
    assert spec.variants[1].hyperparameters == {"sagemaker_instance_type": '"ml.p4de.24xlarge"'}


@pytest.mark.parametrize("overrides", [{}, {"instance_count": 3, "hyperparameters": {"max_steps": 5, "model": "m"}}])
def test_capacity_failure_falls_back_to_the_next_type(deployed_test, overrides: dict[str, Any]) -> None:
    d: Deployed = deployed_test[FALLBACK]
    run = d.run(overrides, [sage.capacity_error(), sage.completes(billable_seconds=1800)])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, overrides)
    first, second = run.fake.calls
    (id1, n1), (id2, n2) = job_parts(d.spec, first["TrainingJobName"]), job_parts(d.spec, second["TrainingJobName"])
    assert (id1 == id2, n1, n2) == (True, 0, 1)
    assert first["TrainingJobName"] != second["TrainingJobName"]
    assert [c["ResourceConfig"]["InstanceType"] for c in run.fake.calls] == ["ml.p5.48xlarge", "ml.p4de.24xlarge"]
    assert second["HyperParameters"]["sagemaker_instance_type"] == '"ml.p4de.24xlarge"'
    assert first["HyperParameters"]["sagemaker_instance_type"] == '"ml.p5.48xlarge"'
    assert second["HyperParameters"]["sagemaker_job_name"] == f'"{second["TrainingJobName"]}"'
    assert "Environment" not in second  # neither type needs EFA variables the toolkit does not set
    assert second["CheckpointConfig"]["S3Uri"] == first["CheckpointConfig"]["S3Uri"]
    assert second["CheckpointConfig"]["S3Uri"].endswith(f"/{FALLBACK}/{id1}/")  # the relaunch resumes
    count = overrides.get("instance_count", 2)
    assert {c["ResourceConfig"]["InstanceCount"] for c in run.fake.calls} == {count}
    assert run.fake.waits == [60]
    out = run.output
    assert (out["instance_type"], out["instance_count"], out["attempts"]) == ("ml.p4de.24xlarge", count, 2)
    assert out["cost_per_hour_usd"] == pytest.approx(catalog.hourly_cost("ml.p4de.24xlarge", count, "us-east-1"))
    assert out["job_name"] == second["TrainingJobName"]
    assert run.notifications == [out]


def test_every_type_out_of_capacity_ends_with_insufficient_capacity(deployed_test) -> None:
    d: Deployed = deployed_test[FALLBACK]
    attempts = d.spec.capacity_relaunches + 1
    run = d.run({}, [sage.capacity_error() for _ in range(attempts)] + [sage.completes()])
    assert (run.status, run.error) == ("FAILED", "InsufficientCapacity")
    assert f"Failed after {attempts} attempt(s): CapacityError" in run.cause
    check_requests(d, run, {})
    assert [job_parts(d.spec, c["TrainingJobName"])[1] for c in run.fake.calls] == list(range(attempts))
    assert len({job_parts(d.spec, c["TrainingJobName"])[0] for c in run.fake.calls}) == 1
    assert [c["ResourceConfig"]["InstanceType"] for c in run.fake.calls] == [
        "ml.p5.48xlarge", "ml.p4de.24xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.p4de.24xlarge"]
    assert len({c["CheckpointConfig"]["S3Uri"] for c in run.fake.calls}) == 1
    assert run.fake.waits == d.spec.capacity_waits()[:attempts - 1]
    [note] = run.notifications
    assert (note["status"], note["attempts"], note["instance_type"]) == ("Failed", attempts, "ml.p4de.24xlarge")


def test_efa_variables_and_prices_follow_the_type(deployed_test) -> None:
    # g5.48xlarge sends no Environment, g5.12xlarge and g6.48xlarge need FI_PROVIDER; g6.48xlarge has no price.
    d: Deployed = deployed_test[FALLBACK_EFA]
    run = d.run({}, [sage.capacity_error(), sage.capacity_error(), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {})
    types = [c["ResourceConfig"]["InstanceType"] for c in run.fake.calls]
    assert types == ["ml.g5.48xlarge", "ml.g5.12xlarge", "ml.g6.48xlarge"]
    assert [c.get("Environment") for c in run.fake.calls] == [None, {"FI_PROVIDER": "efa"}, {"FI_PROVIDER": "efa"}]
    assert (run.output["instance_type"], run.output["cost_per_hour_usd"]) == ("ml.g6.48xlarge", None)
    assert run.output["attempts"] == 3


def test_efa_fallback_from_a_type_with_variables_to_one_without(deployed_test) -> None:
    d: Deployed = deployed_test[FALLBACK_EFA]
    run = d.run({"hyperparameters": {"max_steps": 1}}, [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {"hyperparameters": {"max_steps": 1}})
    assert "Environment" not in run.fake.calls[0]
    assert run.output["cost_per_hour_usd"] == pytest.approx(catalog.hourly_cost("ml.g5.48xlarge", 2, "us-east-1"))


# --------------------------------------------------------------------------------------------- heterogeneous


def test_heterogeneous_cluster_runs_as_written(deployed_test, test_workloads) -> None:
    d: Deployed = deployed_test[HETERO]
    run = d.run({"hyperparameters": {"epochs": 4}, "max_run": 600}, [sage.capacity_error(), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {"hyperparameters": {"epochs": 4}, "max_run": 600})
    first, second = run.fake.calls
    groups = first["ResourceConfig"]["InstanceGroups"]
    assert [(g["InstanceGroupName"], g["InstanceType"], g["InstanceCount"]) for g in groups] == [
        ("gpu", "ml.p4d.24xlarge", 1), ("cpu", "ml.c5.18xlarge", 2)]
    assert second["ResourceConfig"] == first["ResourceConfig"]
    assert job_parts(d.spec, second["TrainingJobName"])[1] == 1
    out = run.output
    assert out["instance_count"] == 3
    assert out["cost_per_hour_usd"] == pytest.approx(test_workloads[HETERO].compute.hourly_cost("us-east-1"))


def test_heterogeneous_cluster_plain_input(deployed_test) -> None:
    d: Deployed = deployed_test[HETERO]
    run = d.run({}, [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {})


@pytest.mark.parametrize("execution_input", [{"instance_count": 2}, {"instance_count": 3}])
def test_heterogeneous_cluster_size_is_not_an_input(deployed_test, execution_input: dict[str, Any]) -> None:
    d: Deployed = deployed_test[HETERO]
    policy = d.spec.policy
    run = d.run(execution_input, [sage.completes()])
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT)
    assert run.cause == policy.messages()["keys"] == policy.check(execution_input)[0]
    assert "allowed (all optional): hyperparameters, max_run." in run.cause
    assert run.fake.calls == []


# --------------------------------------------------------------------------------------------- quotas
# A quota refusal (ResourceLimitExceeded) creates no job: the run moves to the next type of the schedule at once,
# from the same budget of relaunches, and ends "not created" once it is spent.


def test_a_quota_refusal_moves_to_the_next_type_at_once(deployed_test) -> None:
    d: Deployed = deployed_test[FALLBACK]
    run = d.run({}, [sage.quota_exceeded("ml.p5.48xlarge", limit=0, used=0), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    refused, created = run.fake.calls
    assert run.fake.created == [created] and run.fake.stop_calls == []
    assert (refused["ResourceConfig"]["InstanceType"], created["ResourceConfig"]["InstanceType"]) == (
        "ml.p5.48xlarge", "ml.p4de.24xlarge")
    assert [job_parts(d.spec, c["TrainingJobName"])[1] for c in run.fake.calls] == [0, 1]
    assert run.fake.waits == []  # no wait: waiting does not raise a quota
    assert (run.output["attempts"], run.output["instance_type"]) == (2, "ml.p4de.24xlarge")
    check_requests(d, run, {})


def test_quota_refusals_past_the_budget_end_the_run_not_created(deployed_test) -> None:
    d: Deployed = deployed_test[FALLBACK]
    n = d.spec.capacity_relaunches
    run = d.run({}, [sage.quota_exceeded(t, limit=0, used=0)
                     for t in ("ml.p5.48xlarge", "ml.p4de.24xlarge", "ml.p4d.24xlarge") * 2][:n + 1])
    assert (run.status, run.error) == ("FAILED", "TrainingJobNotCreated")
    assert len(run.fake.calls) == n + 1 and run.fake.created == [] and run.fake.waits == []
    assert "The account-level service limit 'ml.p4de.24xlarge for training job usage' is 0 Instances" in run.cause
    assert "raise that quota in Service Quotas" in run.cause and "capacity relaunches are spent" in run.cause


def test_a_quota_refusal_then_a_capacity_failure_share_one_budget(deployed_test) -> None:
    d: Deployed = deployed_test[FALLBACK]
    n = d.spec.capacity_relaunches
    script = [sage.quota_exceeded(), *[sage.capacity_error() for _ in range(n)], sage.completes()]
    run = d.run({}, script)
    assert (run.status, run.error) == ("FAILED", "InsufficientCapacity")
    assert len(run.fake.calls) == n + 1
