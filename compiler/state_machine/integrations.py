"""Which Task resources Step Functions accepts, what their Parameters may name and which errors they report.

CreateStateMachine refuses a resource that is not an integration, and an optimized integration's unknown Parameters
field; moto, asl-validator and cfn-lint accept both, so a definition that passes every offline tool can still fail
the deploy (issue 20). This module is the one place that says what a definition may use, from AWS's own sources:

- optimized integrations: `OPTIMIZED`, transcribed from the Step Functions developer guide (page named per service);
- AWS SDK integrations (`arn:aws:states:::aws-sdk:<service>:<action>`): the operation must exist in botocore's model
  of the service, and Parameters may name only members of its input shape, PascalCase as in the API;
- error names: `errors_of` gives every name a Task of each kind can report, for Retry and Catch.

Pure: botocore's data files only (as `compiler.sdk.service_model`), no client and no credentials.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.model import OperationModel, ServiceModel, Shape

from compiler.errors import Problem
from compiler.state_machine.asl import all_states

PREFIX = "arn:aws:states:::"
SDK = "aws-sdk"
SYNC = ".sync"
CALLBACK = ".waitForTaskToken"
_REQUEST = frozenset({""})
_JOB = frozenset({"", SYNC})

# Optimized integrations this project may use: service -> action -> the integration-pattern suffixes allowed.
OPTIMIZED: Mapping[str, Mapping[str, frozenset[str]]] = {
    # "Create and manage Amazon SageMaker AI jobs with Step Functions" (connect-sagemaker): these nine APIs; Run a
    # Job (.sync) is supported (for the APIs that start a job), Request Response has no optimizations, Wait for a
    # Callback is not supported. StopTrainingJob and DescribeTrainingJob are not among them: use aws-sdk.
    "sagemaker": {
        "createEndpoint": _REQUEST, "createEndpointConfig": _REQUEST, "createHyperParameterTuningJob": _JOB,
        "createLabelingJob": _JOB, "createModel": _REQUEST, "createProcessingJob": _JOB, "createTrainingJob": _JOB,
        "createTransformJob": _JOB, "updateEndpoint": _REQUEST,
    },
    # "Publish messages to an Amazon SNS topic with Step Functions" (connect-sns): Publish; Request Response and
    # Wait for a Callback, no Run a Job.
    "sns": {"publish": frozenset({"", CALLBACK})},
}


@dataclass(frozen=True)
class SdkService:
    """An AWS SDK integration's service: its name in botocore and its error-name prefix."""

    botocore_name: str
    exception_prefix: str


# "AWS SDK service integrations" (supported-services-awssdk), the table of supported services: the name in the
# `aws-sdk:<service>` resource and the "Exception prefix" column. Only the services this project calls; add a row
# from that table (with botocore's name for the service) to use another.
SDK_SERVICES: Mapping[str, SdkService] = {
    "sagemaker": SdkService("sagemaker", "SageMaker"),
    "cloudwatch": SdkService("cloudwatch", "CloudWatch"),
    "sns": SdkService("sns", "Sns"),
    "cloudwatchlogs": SdkService("logs", "CloudWatchLogs"),
    "sfn": SdkService("stepfunctions", "Sfn"),
}

# Error names. AWS SDK integrations ("AWS SDK service integrations", error handling): `<Prefix>.<ErrorName>`, both
# PascalCase, with an `Exception` suffix added where the service's name lacks one (S3's BucketAlreadyExists is
# `S3.BucketAlreadyExistsException`); an error the service model does not list (throttling, validation, a 5xx) is
# reported under the service's generic name `<Prefix>.<Prefix>Exception`, e.g. `SageMaker.SageMakerException`.
# Their Cause is the AWS SDK for Java 2.x's exception message, `<service message> (Service: SageMaker, Status Code:
# 400, Request ID: ...)`, which names no error code (AWS SDK for Java 2.x developer guide, "Handling errors";
# the S3 example in localstack/localstack#12139); `create` reads it (docs/aws-assumptions.md).
# The optimized SageMaker integration reports such errors as `SageMaker.AmazonSageMakerException`, with the service's
# error code in the Cause (aws-step-functions-data-science-sdk-python#191 and #162); its modelled errors are listed
# in both spellings (`SageMaker.ResourceLimitExceeded` and `...Exception`): which one it uses is not documented.
OPTIMIZED_GENERIC_ERRORS: Mapping[str, str] = {"sagemaker": "SageMaker.AmazonSageMakerException"}
OPTIMIZED_PREFIXES: Mapping[str, str] = {"sagemaker": "SageMaker", "sns": "SNS"}
STATES_ERRORS = frozenset({
    # Amazon States Language's own names ("Error handling in Step Functions").
    "States.ALL", "States.HeartbeatTimeout", "States.Timeout", "States.TaskFailed", "States.Permissions",
    "States.ResultPathMatchFailure", "States.ParameterPathFailure", "States.BranchFailed", "States.NoChoiceMatched",
    "States.IntrinsicFailure", "States.ExceedToleratedFailureThreshold", "States.ItemReaderFailed",
    "States.ResultWriterFailed", "States.QueryEvaluationError",
})


@dataclass(frozen=True)
class Resource:
    """A parsed `arn:aws:states:::...` Task resource."""

    service: str  # `aws-sdk` target service for SDK integrations, else the optimized service
    action: str  # camelCase API action
    pattern: str  # "", ".sync" or ".waitForTaskToken"
    sdk: bool

    @property
    def operation(self) -> str:
        """The API's operation name (PascalCase), as botocore's model spells it."""
        return self.action[:1].upper() + self.action[1:]


def parse(resource: str) -> Resource | None:
    """The resource's parts, or None when it is not a service integration ARN."""
    if not resource.startswith(PREFIX):
        return None
    rest = resource[len(PREFIX):]
    pattern = next((p for p in (SYNC + ":2", SYNC, CALLBACK) if rest.endswith(p)), "")
    rest = rest[: len(rest) - len(pattern)]
    parts = rest.split(":")
    if parts[0] == SDK and len(parts) == 3:
        return Resource(parts[1], parts[2], pattern, sdk=True)
    if len(parts) == 2:
        return Resource(parts[0], parts[1], pattern, sdk=False)
    return None


def sdk_resource(service: str, action: str) -> str:
    return f"{PREFIX}{SDK}:{service}:{action}"


@functools.cache
def _service_model(botocore_name: str) -> ServiceModel:
    from botocore.loaders import Loader

    return ServiceModel(Loader().load_service_model(botocore_name, "service-2"), service_name=botocore_name)


def operation_model(resource: Resource) -> OperationModel | None:
    """botocore's model of the resource's operation; None when the service or the operation is unknown."""
    name = SDK_SERVICES[resource.service].botocore_name if resource.sdk else resource.service
    try:
        model = _service_model(name)
    except Exception:  # botocore raises UnknownServiceError / DataNotFoundError
        return None
    return model.operation_model(resource.operation) if resource.operation in model.operation_names else None


def _with_suffix(name: str) -> str:
    return name if name.endswith("Exception") else name + "Exception"


def errors_of(resource: Resource) -> frozenset[str]:
    """Every error name a Task with this resource can report (besides the `States.*` names)."""
    operation = operation_model(resource)
    modelled = [shape.name for shape in operation.error_shapes] if operation is not None else []
    if resource.sdk:
        prefix = SDK_SERVICES[resource.service].exception_prefix
        return frozenset({f"{prefix}.{prefix}Exception", *(f"{prefix}.{_with_suffix(n)}" for n in modelled)})
    prefix = OPTIMIZED_PREFIXES.get(resource.service, resource.service)
    generic = OPTIMIZED_GENERIC_ERRORS.get(resource.service)
    return frozenset({*([generic] if generic else []), *(f"{prefix}.{n}" for n in modelled),
                      *(f"{prefix}.{_with_suffix(n)}" for n in modelled)})


def generic_error(service: str, *, sdk: bool) -> str:
    """The name under which an integration reports errors its service model does not list (throttling, 5xx)."""
    if sdk:
        prefix = SDK_SERVICES[service].exception_prefix
        return f"{prefix}.{prefix}Exception"
    return OPTIMIZED_GENERIC_ERRORS[service]


def modelled_error(service: str, shape: str, *, sdk: bool) -> tuple[str, ...]:
    """The name(s) of one error the service model lists for an operation (both spellings for optimized tasks)."""
    if sdk:
        return (f"{SDK_SERVICES[service].exception_prefix}.{_with_suffix(shape)}",)
    prefix = OPTIMIZED_PREFIXES[service]
    return (f"{prefix}.{_with_suffix(shape)}", f"{prefix}.{shape}")


# --------------------------------------------------------------------------------------------- the check


def _close(word: str, choices: list[str]) -> str:
    near = difflib.get_close_matches(word, choices, n=1) or [c for c in choices if c.lower() == word.lower()]
    return f" (did you mean {near[0]!r}?)" if near else ""


def _resource_problem(resource: str, parsed: Resource | None) -> str | None:
    """Why Step Functions would refuse the resource, with the fix; None when it is accepted."""
    if parsed is None:
        return (f"{resource!r} is not a service integration; use an optimized integration "
                f"({PREFIX}<service>:<action>) or {PREFIX}{SDK}:<service>:<action>")
    if parsed.sdk:
        if parsed.service not in SDK_SERVICES:
            return (f"{resource!r}: service {parsed.service!r} is not in SDK_SERVICES "
                    f"(compiler/state_machine/integrations.py); add its row from the developer guide's "
                    f"'AWS SDK service integrations' table")
        if parsed.pattern not in ("", CALLBACK):
            return f"{resource!r}: AWS SDK integrations do not support {parsed.pattern}; drop the suffix"
        if operation_model(parsed) is None:
            names = list(_service_model(SDK_SERVICES[parsed.service].botocore_name).operation_names)
            close = _close(parsed.operation, names)
            return f"{resource!r}: botocore's {parsed.service} model has no operation {parsed.operation!r}{close}"
        return None
    actions = OPTIMIZED.get(parsed.service)
    if actions is None:
        return (f"{resource!r}: optimized {parsed.service} integrations are not in OPTIMIZED "
                f"(compiler/state_machine/integrations.py); add the service's actions and patterns from its page of "
                f"the developer guide, or use {PREFIX}{SDK}:{parsed.service}:{parsed.action}")
    if parsed.action not in actions:
        fix = ""
        if parsed.service in SDK_SERVICES and operation_model(Resource(parsed.service, parsed.action, "", True)):
            fix = f"; use {sdk_resource(parsed.service, parsed.action)!r}"
        return (f"{resource!r} is not an optimized integration (the developer guide lists "
                f"{', '.join(sorted(actions))}){fix}")
    if parsed.pattern not in actions[parsed.action]:
        allowed = ", ".join(repr(p or "request-response") for p in sorted(actions[parsed.action]))
        return f"{resource!r}: {parsed.service}:{parsed.action} allows only {allowed}"
    return None


def pascal(member: str) -> str:
    """A member's name as AWS SDK integrations spell it: PascalCase, whatever the API's own casing (the AWS CDK's
    CallAwsService: "Use PascalCase for the parameter names"; e.g. Step Functions' own `stateMachineArn`)."""
    return member[:1].upper() + member[1:]


def _member_problems(value: Any, shape: Shape, path: str, sdk: bool = False) -> Iterator[str]:
    """Field names in `value` that the shape does not have; `Key.$` counts as `Key`, its value is not looked at."""
    if isinstance(value, dict) and shape.type_name == "structure":
        members = {pascal(m) if sdk else m: m for m in shape.members}
        for key, item in value.items():
            dynamic = key.endswith(".$")
            name = key[:-2] if dynamic else key
            where = f"{path}.{name}" if path else name
            if name not in members:
                yield f"{where}: not a member of {shape.name}{_close(name, list(members))}"
            elif not dynamic:
                yield from _member_problems(item, shape.members[members[name]], where, sdk)
    elif isinstance(value, dict) and shape.type_name == "map":
        for key, item in value.items():
            if not key.endswith(".$"):
                yield from _member_problems(item, shape.value, f"{path}[{key!r}]", sdk)
    elif isinstance(value, list) and shape.type_name == "list":
        for index, item in enumerate(value):
            yield from _member_problems(item, shape.member, f"{path}[{index}]", sdk)


def _task_problems(name: str, state: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, message) for each thing Step Functions would refuse, or never report, in one Task state."""
    resource = state.get("Resource", "")
    parsed = parse(resource) if isinstance(resource, str) else None
    problem = _resource_problem(str(resource), parsed)
    if problem is not None or parsed is None:
        yield "Resource", problem or f"{resource!r} is not a service integration"
        return
    operation = operation_model(parsed)
    if operation is not None and operation.input_shape is not None:
        parameters = state.get("Parameters", {})
        for message in _member_problems(parameters, operation.input_shape, "", parsed.sdk):
            yield "Parameters", (f"{message}: {parsed.operation} takes only the members of botocore's "
                                 f"{operation.input_shape.name}, spelled as the API spells them")
    known = errors_of(parsed)
    for kind in ("Retry", "Catch"):
        for index, rule in enumerate(state.get(kind, [])):
            for error in rule.get("ErrorEquals", []):
                if error not in STATES_ERRORS and error not in known:
                    yield f"{kind}[{index}].ErrorEquals", (
                        f"{error!r} is never reported by {resource}; it reports {', '.join(sorted(known))} "
                        f"(and States.*)")


def definition_problems(definition: Mapping[str, Any], source: str = "") -> list[Problem]:
    """What CreateStateMachine would refuse (or what could never match) in the Task states of a definition."""
    problems: list[Problem] = []
    for name, state in all_states(definition):
        if state.get("Type") != "Task":
            continue
        for field, message in _task_problems(name, state):
            problems.append(Problem(source, f"state machine: state {name!r}: {field}", message))
    return problems
