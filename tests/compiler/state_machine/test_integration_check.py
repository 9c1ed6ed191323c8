"""The integration check refuses what CreateStateMachine refuses, each case planted in a real definition.

Expected values are the documentation's: the optimized SageMaker APIs of the Step Functions developer guide ("Create
and manage Amazon SageMaker AI jobs with Step Functions"), the error-name rules of "AWS SDK service integrations",
and the members of botocore's service models. The check runs inside `build_definition`, so `trainctl validate`,
`cdk synth` and the tests all stop on it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compiler import state_machine as sm
from compiler.errors import SpecError
from compiler.state_machine import integrations, recovery
from tests.project import ENVIRONMENTS, loaded

# The developer guide's list, as written there (PascalCase API names).
SAGEMAKER_OPTIMIZED = ["CreateEndpoint", "CreateEndpointConfig", "CreateHyperParameterTuningJob", "CreateLabelingJob",
                       "CreateModel", "CreateProcessingJob", "CreateTrainingJob", "CreateTransformJob", "UpdateEndpoint"]
SOURCE = "workloads/w.yaml"


def planted(definition: dict[str, Any], state: str, **changes: Any) -> list[str]:
    """The problems of a copy of the definition with one state changed."""
    copied = copy.deepcopy(definition)
    copied["States"][state].update(changes)
    return [str(p) for p in integrations.definition_problems(copied, SOURCE)]


def test_the_shipped_definition_is_clean(definition) -> None:
    assert integrations.definition_problems(definition) == []


def test_the_optimized_sagemaker_list_is_the_documented_one() -> None:
    assert sorted(a[:1].upper() + a[1:] for a in integrations.OPTIMIZED["sagemaker"]) == SAGEMAKER_OPTIMIZED
    assert {a for a, patterns in integrations.OPTIMIZED["sagemaker"].items() if ".sync" in patterns} == {
        "createHyperParameterTuningJob", "createLabelingJob", "createProcessingJob", "createTrainingJob",
        "createTransformJob"}
    assert not any(".waitForTaskToken" in p for p in integrations.OPTIMIZED["sagemaker"].values())


def test_stop_training_job_as_an_optimized_integration_is_refused(definition) -> None:
    [problem] = planted(definition, "Stop unknown job", Resource="arn:aws:states:::sagemaker:stopTrainingJob")
    assert problem.startswith(f"{SOURCE}: state machine: state 'Stop unknown job': Resource: ")
    assert "'arn:aws:states:::sagemaker:stopTrainingJob' is not an optimized integration" in problem
    assert problem.endswith("use 'arn:aws:states:::aws-sdk:sagemaker:stopTrainingJob'")


def test_build_definition_stops_on_a_refused_resource(monkeypatch) -> None:
    # The hook: what validate and synth call raises, naming the state, the field and the fix.
    monkeypatch.setattr(recovery, "STOP_RESOURCE", "arn:aws:states:::sagemaker:stopTrainingJob")
    workload = next(w for w in loaded().workloads("dev") if w.name == "gpt-smddp")  # its run may stop its own job
    with pytest.raises(SpecError) as error:
        sm.build_definition(sm.spec_for(workload, ENVIRONMENTS["dev"]))
    problems = {p.field: p for p in error.value.problems}
    assert set(problems) == {f"state machine: state '{name}': Resource"
                             for name in ("Stop watched job", "Stop unknown job", "Stop job lost from sight")}
    problem = problems["state machine: state 'Stop unknown job': Resource"]
    assert problem.source == workload.source
    assert "aws-sdk:sagemaker:stopTrainingJob" in problem.message


@pytest.mark.parametrize(("resource", "expected"), [
    ("arn:aws:states:::sagemaker:createModel.sync", "sagemaker:createModel allows only 'request-response'"),
    ("arn:aws:states:::sagemaker:createTrainingJob.waitForTaskToken", "allows only"),
    ("arn:aws:states:::aws-sdk:sagemaker:stopTrainingJobs", "no operation 'StopTrainingJobs' (did you mean "
                                                             "'StopTrainingJob'?)"),
    ("arn:aws:states:::aws-sdk:sagemaker:describeTrainingJob.sync", "AWS SDK integrations do not support .sync"),
    ("arn:aws:states:::aws-sdk:sagemkr:stopTrainingJob", "service 'sagemkr' is not in SDK_SERVICES"),
    ("arn:aws:states:::lambda:invoke", "optimized lambda integrations are not in OPTIMIZED"),
    ("arn:aws:lambda:us-east-1:111111111111:function:stop", "is not a service integration"),
])
def test_a_resource_step_functions_refuses_is_named(definition, resource: str, expected: str) -> None:
    [problem] = planted(definition, "Stop unknown job", Resource=resource)
    assert "state 'Stop unknown job': Resource: " in problem and expected in problem, problem


@pytest.mark.parametrize(("parameters", "expected"), [
    ({"TrainingJobname.$": "$.launch.name"}, "TrainingJobname: not a member of StopTrainingJobRequest (did you mean "
                                             "'TrainingJobName'?)"),
    ({"trainingJobName.$": "$.launch.name"}, "trainingJobName: not a member"),  # PascalCase, as the API spells it
    ({"TrainingJobName.$": "$.launch.name", "Force": True}, "Force: not a member"),
])
def test_an_sdk_parameter_outside_the_input_shape_is_refused(definition, parameters, expected: str) -> None:
    [problem] = planted(definition, "Stop unknown job", Parameters=parameters)
    assert "state 'Stop unknown job': Parameters: " in problem and expected in problem, problem


def test_nested_members_are_checked_too(definition) -> None:
    state = next(n for n, s in definition["States"].items() if s.get("Resource", "").endswith("putMetricData"))
    parameters = copy.deepcopy(definition["States"][state]["Parameters"])
    parameters["MetricData"][0]["Dimension"] = parameters["MetricData"][0].pop("Dimensions")
    [problem] = planted(definition, state, Parameters=parameters)
    assert "MetricData[0].Dimension: not a member of MetricDatum (did you mean 'Dimensions'?)" in problem


def test_a_create_parameter_outside_the_api_is_refused(definition) -> None:
    parameters = {**definition["States"]["Train"]["Parameters"], "EnableSpot": True}
    [problem] = planted(definition, "Train", Parameters=parameters)
    assert "state 'Train': Parameters: EnableSpot: not a member of CreateTrainingJobRequest" in problem


@pytest.mark.parametrize(("error", "accepted"), [
    ("SageMaker.SageMakerException", True),  # unmodelled errors, throttling among them
    ("SageMaker.ResourceNotFoundException", True),  # the model's ResourceNotFound, with the Exception suffix
    ("SageMaker.ResourceNotFound", False),  # the suffix is always added
    ("SageMaker.AmazonSageMakerException", False),  # the optimized integration's generic name
    ("ThrottlingException", False),
    ("SageMaker.ThrottlingException", False),
    ("States.Timeout", True),
])
def test_sdk_error_names_follow_the_documented_rule(definition, error: str, accepted: bool) -> None:
    retry = [{"ErrorEquals": [error], "IntervalSeconds": 5, "MaxAttempts": 2}]
    problems = planted(definition, "Describe job", Retry=retry)
    assert (problems == []) == accepted, problems
    if not accepted:
        assert "state 'Describe job': Retry[0].ErrorEquals: " in problems[0]
        assert "SageMaker.SageMakerException" in problems[0]


@pytest.mark.parametrize(("error", "accepted"), [
    ("SageMaker.SageMakerException", True),  # the AWS SDK integration's generic name
    ("SageMaker.ResourceLimitExceededException", True),
    ("SageMaker.ResourceLimitExceeded", False),  # the suffix is always added
    ("SageMaker.AmazonSageMakerException", False),  # the optimized integration's generic name: not this task's
])
def test_create_error_names(definition, error: str, accepted: bool) -> None:
    catch = [{"ErrorEquals": [error], "Next": "Describe job"}]
    assert (planted(definition, "Train", Catch=catch) == []) == accepted


def test_tasks_inside_parallel_branches_are_checked(definition) -> None:
    stop = copy.deepcopy(definition["States"]["Stop watched job"])
    stop["Resource"] = "arn:aws:states:::sagemaker:stopTrainingJob"
    stop.pop("Catch")
    stop["End"] = True
    stop.pop("Next")
    branch = {"StartAt": "Stop job", "States": {"Stop job": stop}}
    [problem] = planted(definition, "Summarize", Type="Parallel", Branches=[branch])
    assert "state 'Summarize/Stop job': Resource" in problem
