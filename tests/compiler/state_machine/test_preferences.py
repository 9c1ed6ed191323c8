"""ResourceConfig.InstancePreferences where every type compiles alike (issue 21), executed in moto.

sm-preferences: the generic Estimator on ml.m5.xlarge with fallbacks ml.m5.2xlarge and ml.c5.2xlarge and
`capacity_retry.instance_preferences: true`: one image, no Environment, no per-type hyperparameters, so one request
names all three, primary first, and SageMaker launches the
job on the first with capacity (botocore 1.44.8's model); the summary reports the type it chose
(ResourceConfig.SelectedInstanceType) at that type's price. Types that compile differently (the framework
estimators' sagemaker_instance_type, EFA variables), spot, instance groups, placement config or a training plan keep
one type per request, relaunched in turn by the run.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest

from compiler import state_machine as sm
from compiler.errors import SpecError
from compiler.facts import catalog
from compiler.sdk.service_model import validate_request
from compiler.state_machine import preferences
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import Deployed, expected_request, job_parts

TYPES = ["ml.m5.xlarge", "ml.m5.2xlarge", "ml.c5.2xlarge"]


@pytest.fixture(scope="module")
def preferred(deployed_test) -> Deployed:
    return deployed_test["sm-preferences"]


def _expected(d: Deployed, request: dict, run) -> dict:
    expected = expected_request(d, request["TrainingJobName"], f"{d.arn.replace(':stateMachine:', ':execution:')}:"
                                f"{run.name}", {})
    expected = copy.deepcopy(expected)
    expected["ResourceConfig"].pop("InstanceType")
    expected["ResourceConfig"]["InstancePreferences"] = [{"InstanceType": t} for t in TYPES]
    return expected


def test_alike_types_go_in_one_request_as_instance_preferences(preferred) -> None:
    run = preferred.run({}, [sage.Outcome("complete", selects=1)])
    assert run.status == "SUCCEEDED", run.cause
    [request] = run.fake.calls
    assert validate_request(request) == []  # botocore's full model: InstancePreferences without InstanceType
    assert "InstanceType" not in request["ResourceConfig"]
    assert request == _expected(preferred, request, run)
    # SageMaker chose the second type: the summary says so, at its price.
    rate = catalog.hourly_cost("ml.m5.2xlarge", 1, "us-east-1")
    assert (run.output["instance_type"], run.output["cost_per_hour_usd"]) == ("ml.m5.2xlarge", rate)


def test_a_capacity_failure_sends_the_same_preferences_again(preferred) -> None:
    run = preferred.run({}, [sage.capacity_error(), sage.Outcome("complete", selects=2)])
    assert run.status == "SUCCEEDED", run.cause
    first, second = run.fake.calls
    assert first["ResourceConfig"] == second["ResourceConfig"]
    assert [job_parts(preferred.spec, c["TrainingJobName"])[1] for c in run.fake.calls] == [0, 1]
    assert (run.output["instance_type"], run.output["cost_per_hour_usd"]) == ("ml.c5.2xlarge", None)


def test_a_quota_refusal_ends_the_run_without_advising_fallbacks_it_already_has(preferred) -> None:
    # One request holds every type: SageMaker's refusal (ResourceLimitExceeded) leaves no other type to move to.
    run = preferred.run({}, [sage.quota_exceeded(TYPES[0], limit=0, used=0), sage.completes()])
    assert (run.status, run.error) == ("FAILED", "TrainingJobNotCreated")
    assert len(run.fake.calls) == 1 and run.fake.created == []
    assert "raise that quota in Service Quotas" in run.cause
    assert "fallback_instance_types" not in run.cause and "instance_preferences" in run.cause


def test_types_that_compile_differently_go_one_at_a_time(test_specs) -> None:
    for label in ("sm-fallback", "sm-fallback-efa", "sm-hetero", "sm-generic"):
        for state in sm.build_definition(test_specs[label])["States"].values():
            assert "InstancePreferences" not in str(state.get("Parameters", {})), label
    spec = test_specs["sm-preferences"]
    assert preferences.preferred_types(spec) == tuple(TYPES)
    spot = dataclasses.replace(spec, request={**spec.request, "EnableManagedSpotTraining": True})
    placed = dataclasses.replace(spec, request={**spec.request, "ResourceConfig": {
        **spec.request["ResourceConfig"], "InstancePlacementConfig": {"EnableMultipleJobs": False}}})
    assert preferences.preferred_types(spot) == preferences.preferred_types(placed) == ()
    assert preferences.preferred_types(dataclasses.replace(spec, instance_preferences=False)) == ()  # asked for only


def test_a_spec_that_asks_for_preferences_its_types_cannot_take_is_refused(test_workloads, dev) -> None:
    # sm-fallback: torchrun sends each type's sagemaker_instance_type, so p4de and p4d compile differently from p5.
    workload = test_workloads["sm-fallback"]
    asking = dataclasses.replace(workload, capacity_retry=dataclasses.replace(workload.capacity_retry,
                                                                              instance_preferences=True))
    with pytest.raises(SpecError) as error:
        sm.build_definition(sm.spec_for(asking, dev))
    [first, second] = error.value.problems
    assert first.field == second.field == "capacity_retry.instance_preferences"
    assert first.message.startswith("ml.p4de.24xlarge compiles with another hyperparameters sagemaker_instance_type "
                                    "than ml.p5.48xlarge; ")
    assert "drop instance_preferences" in first.message
