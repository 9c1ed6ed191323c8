"""No stack owns a name an AWS service creates for itself: every template of the app is clean, and the synth-time guard
stops `cdk synth` on each kind of planted defect (and lets the user-chosen names beside them through).

The names below are literals from the documentation each entry of platform_constructs/service_names.py cites.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs

from platform_constructs.service_names import SERVICE_CREATED_NAMES, guard_service_names, template_problems

pytestmark = pytest.mark.synth
ENVS = ("dev", "prod")


def tiny_stack() -> tuple[cdk.App, cdk.Stack]:
    app = cdk.App()
    stack = cdk.Stack(app, "Tiny", env=cdk.Environment(account="123456789012", region="us-east-1"))
    guard_service_names(stack)
    return app, stack


def synth_errors(app: cdk.App) -> str:
    with pytest.raises(Exception) as caught:
        app.synth()
    return str(caught.value)


@pytest.mark.parametrize("env", ENVS)
def test_no_template_of_the_app_owns_a_service_created_name(synthesized_app: Any, env: str) -> None:
    for stack, template in synthesized_app.templates[env].items():
        assert template_problems(template) == [], stack
        for logical_id, resource in template["Resources"].items():
            if resource["Type"] == "AWS::Logs::LogGroup":
                name = resource.get("Properties", {}).get("LogGroupName")
                assert name != "/aws/sagemaker/TrainingJobs", f"{stack}/{logical_id} owns SageMaker's log group"


PLANTS: dict[str, tuple[Callable[[cdk.Stack], Any], str]] = {
    "sagemaker log group": (lambda s: logs.LogGroup(s, "G", log_group_name="/aws/sagemaker/TrainingJobs"),
                            "/aws/sagemaker/TrainingJobs"),
    "sagemaker endpoint log group": (lambda s: logs.LogGroup(s, "G", log_group_name="/aws/sagemaker/Endpoints/e"),
                                     "/aws/sagemaker/Endpoints/e"),
    "lambda log group": (lambda s: logs.LogGroup(s, "G", log_group_name="/aws/lambda/my-function"),
                         "/aws/lambda/my-function"),
    "fsx default log group": (lambda s: logs.LogGroup(s, "G", log_group_name="/aws/fsx/lustre"), "/aws/fsx/lustre"),
    "raw log group": (lambda s: cdk.CfnResource(s, "G", type="AWS::Logs::LogGroup",
                                                properties={"LogGroupName": "/aws/sagemaker/ProcessingJobs"}),
                      "/aws/sagemaker/ProcessingJobs"),
    "step functions rule": (lambda s: events.Rule(s, "R", rule_name="StepFunctionsGetEventsForSageMakerTrainingJobsRule",
                                                  event_pattern=events.EventPattern(source=["aws.sagemaker"])),
                            "StepFunctionsGetEventsForSageMakerTrainingJobsRule"),
    "service-linked role": (lambda s: iam.CfnServiceLinkedRole(s, "Slr", aws_service_name="fsx.amazonaws.com"),
                            "AWS::IAM::ServiceLinkedRole"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_the_guard_stops_synth_on_a_service_created_name(plant: str) -> None:
    build, name = PLANTS[plant]
    app, stack = tiny_stack()
    build(stack)
    errors = synth_errors(app)
    assert repr(name) in errors and "creates for itself" in errors and "Fix:" in errors


def test_user_chosen_names_beside_them_pass() -> None:
    app, stack = tiny_stack()
    logs.LogGroup(stack, "Generated")
    logs.LogGroup(stack, "Vended", log_group_name="/aws/vendedlogs/states/dev-training")
    logs.LogGroup(stack, "FsxOwn", log_group_name="/aws/fsx/dev-lustre")
    logs.LogGroup(stack, "Lambdaish", log_group_name="/aws/lambdas-of-ours")
    events.Rule(stack, "Rule", rule_name="dev-training-runs", event_pattern=events.EventPattern(source=["aws.sagemaker"]))
    app.synth()  # raises if the guard fires


def test_the_template_check_sees_an_escape_hatch_override() -> None:
    """The guard reads construct properties; an override only shows in the template, which the tests check."""
    template = {"Resources": {
        "Group": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": "/aws/lambda/dev-copier"}},
        "Other": {"Type": "AWS::Logs::LogGroup", "Properties": {"RetentionInDays": 30}},
    }}
    (problem,) = template_problems(template)
    assert problem.startswith("Group:") and "'/aws/lambda/dev-copier'" in problem


def test_every_entry_names_its_source_and_a_fix() -> None:
    for entry in SERVICE_CREATED_NAMES:
        assert "https://docs.aws.amazon.com/" in entry.source, entry
        assert len(entry.fix) > 20, entry
