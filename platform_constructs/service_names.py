"""Names AWS services create for themselves, in ONE list, and the synth-time guard that keeps the stacks off them.

A stack that creates a resource under such a name fails with "already exists" in every account where the service got
there first (SageMaker's log group after the first training job, Lambda's after a function's first run), and when the
stack goes, CloudFormation deletes what the service and everyone else in the account rely on. Each entry names the
documentation page that says the service creates the name; `guard_service_names` (run on every stack by
`stacks.app.build_app`) stops `cdk synth` naming the resource and the fix, and the tests run
`service_name_problems` on every written template (escape-hatch overrides included).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import aws_cdk as cdk

from platform_constructs import stack_resources
from platform_constructs.guards import add_guard


@dataclass(frozen=True)
class ServiceName:
    """A name (glob) a service creates in the account; a resource of `resource_type` whose `prop` matches owns it."""

    resource_type: str
    prop: str | None  # the property holding the name; None: every resource of the type is the service's
    pattern: str
    service: str
    source: str  # the documentation page (or issue) that says so
    fix: str


_LOG_GROUP_FIX = ("leave the group to the service and, in an account other teams share, its retention and key to the "
                  "account (docs/teardown.md); write your own logs to a group of your own name")

SERVICE_CREATED_NAMES: tuple[ServiceName, ...] = (
    ServiceName("AWS::Logs::LogGroup", "LogGroupName", "/aws/sagemaker/*", "SageMaker",
                'Amazon SageMaker AI developer guide, "Log groups and streams that Amazon SageMaker AI sends to Amazon '
                'CloudWatch Logs" (https://docs.aws.amazon.com/sagemaker/latest/dg/logging-cloudwatch.html)',
                _LOG_GROUP_FIX),
    ServiceName("AWS::Logs::LogGroup", "LogGroupName", "/aws/lambda/*", "Lambda",
                'AWS Lambda developer guide, "Configuring CloudWatch log groups": CloudWatch creates '
                "/aws/lambda/<function name> when the function is first invoked "
                "(https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-loggroups.html)",
                "give the log group a generated name and point the function's LoggingConfig at it"),
    ServiceName("AWS::Logs::LogGroup", "LogGroupName", "/aws/fsx/lustre", "FSx for Lustre",
                'Amazon FSx API reference, "LustreLogCreateConfiguration": without a Destination, FSx creates and uses '
                "/aws/fsx/lustre (https://docs.aws.amazon.com/fsx/latest/APIReference/"
                "API_LustreLogCreateConfiguration.html)",
                "log to a group of your own under /aws/fsx/<name> and name it as the Destination"),
    ServiceName("AWS::Events::Rule", "Name", "StepFunctionsGetEventsForSageMaker*", "Step Functions",
                'AWS Step Functions developer guide, "IAM policies for Amazon SageMaker": the .sync integration puts '
                "the rule StepFunctionsGetEventsForSageMakerTrainingJobsRule itself "
                "(https://docs.aws.amazon.com/step-functions/latest/dg/sagemaker-iam.html)",
                "leave the rule to Step Functions; grant the state machine events:PutRule/PutTargets/DescribeRule "
                "on it"),
    ServiceName("AWS::IAM::ServiceLinkedRole", None, "*", "the linked service",
                'IAM API reference, "CreateServiceLinkedRole": the role name must be unique in the account or the '
                "request fails (https://docs.aws.amazon.com/IAM/latest/APIReference/"
                "API_CreateServiceLinkedRole.html); awslabs/landing-zone-accelerator-on-aws#221",
                "let the service create its service-linked role on first use"),
)

_TYPES = tuple(dict.fromkeys(entry.resource_type for entry in SERVICE_CREATED_NAMES))


def owned_service_names(resource_type: str, properties: Mapping[str, Any]) -> list[ServiceName]:
    """The entries one resource (template form: PascalCase properties) would own."""
    found = []
    for entry in SERVICE_CREATED_NAMES:
        if entry.resource_type != resource_type:
            continue
        if entry.prop is None:
            found.append(entry)
            continue
        value = properties.get(entry.prop)
        if isinstance(value, str) and fnmatchcase(value, entry.pattern):
            found.append(entry)
    return found


def problem(where: str, resource_type: str, properties: Mapping[str, Any], entry: ServiceName) -> str:
    name = properties.get(entry.prop) if entry.prop else resource_type
    return (f"{where}: {resource_type} {name!r} is a name {entry.service} creates for itself ({entry.source}). "
            "CloudFormation fails with 'already exists' in every account where the service got there first, and "
            f"deletes it with the stack. Fix: {entry.fix}.")


def template_problems(template: Mapping[str, Any]) -> list[str]:
    """Every resource of a synthesized template that owns a service-created name."""
    problems: list[str] = []
    for logical_id, resource in template.get("Resources", {}).items():
        kind, props = resource.get("Type", ""), resource.get("Properties", {}) or {}
        problems.extend(problem(logical_id, kind, props, entry) for entry in owned_service_names(kind, props))
    return problems


def _template_form(properties: Mapping[str, Any]) -> dict[str, Any]:
    """L1 properties as the template spells them (the CDK's camelCase with the first letter raised)."""
    return {key[:1].upper() + key[1:]: value for key, value in properties.items()}


def service_name_problems(stack: cdk.Stack) -> list[str]:
    """Every L1 resource of the stack that owns a service-created name, with its construct path."""
    problems: list[str] = []
    resources = stack_resources.of(stack)
    for resource_type, node in resources.of_type(*_TYPES):
        props = _template_form(resources.properties(node))
        problems.extend(problem(node.node.path, resource_type, props, entry)
                        for entry in owned_service_names(resource_type, props))
    return problems


def guard_service_names(stack: cdk.Stack) -> None:
    """Fail `cdk synth` when a resource of the stack would own a name a service creates for itself."""
    add_guard(stack, lambda: service_name_problems(stack))
