"""Step Functions' SageMaker integrations for moto's interpreter, backed by a scripted SageMaker, for tests.

moto 5.2.5 sends every `arn:aws:states:::sagemaker:*` task to `StateTaskServiceUnsupported`, which has no
`.sync` procedure (FACTS.md section 5), and its aws-sdk tasks call moto's own SageMaker. `installed()` swaps in,
for the duration of a test:

- `StateTaskServiceSageMaker` for the optimized integration. It serves `createTrainingJob[.sync]` only, as Step
  Functions does among the training-job APIs (developer guide, "Create and manage Amazon SageMaker AI jobs with Step
  Functions": StopTrainingJob and DescribeTrainingJob are not optimized integrations), and fails any other action.
  CreateTrainingJob goes to `FakeSageMaker`, which records the request exactly as it reached "SageMaker", throttles
  the first `throttle` calls (a ThrottlingException, reported like a refusal), refuses a request as SageMaker would
  when it breaks the service model (a hyperparameter value over 2,500 characters, or a tag value with a character
  outside the Tag.Value pattern, say: a ValidationException, which the optimized integration reports as the generic
  `SageMaker.AmazonSageMakerException` with the code in its cause), otherwise follows a script (throttle, quota
  error, capacity failure, failure, success, a lost wait), creates the job in moto's SageMaker backend and sets the
  job's final status there; the `.sync` resolver then polls DescribeTrainingJob like Step Functions does and fails
  the task with `States.TaskFailed` and the job description as its cause when the job did not complete.
- `StateTaskServiceAwsSdk` with SageMaker's describe and stop routed to the same fake, so the test sees every stop
  and can throttle describes, and SageMaker's errors named with the service's exception prefix, `SageMaker`
  (developer guide, "AWS SDK service integrations": `SageMaker.<Name>Exception` for a modelled error,
  `SageMaker.SageMakerException` for others such as throttling). Other services' members are translated between
  the PascalCase of AWS SDK integrations and the API's own casing (Step Functions' `stateMachineArn`), both ways, as
  Step Functions does and as LocalStack's interpreter did before moto's port left that step out.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from unittest import mock

import boto3
import jsonpath_ng
import jsonpath_ng.ext
from botocore.exceptions import ClientError
from moto.core import DEFAULT_ACCOUNT_ID
from moto.sagemaker.models import sagemaker_backends
from moto.stepfunctions.parser.api import HistoryEventType, TaskFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import CustomErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import StatesErrorNameType
from moto.stepfunctions.parser.asl.component.common.path import result_path
from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.component.state.exec.state_task import state_task_factory
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service_callback
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.resource import ResourceCondition
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk import (
    StateTaskServiceAwsSdk,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_callback import (
    StateTaskServiceCallback,
)
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.asl.utils import json_path
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

from compiler.service_model import validate_request

TERMINAL_FAILURES = {"Failed", "Stopped"}


@dataclass
class Outcome:
    """What SageMaker does with one CreateTrainingJob call."""

    kind: str  # "complete" | "fail" | "error" (the API call itself fails; no job) | "running" | "lost" |
    # "created_error" (the call fails, yet the job exists and completes after `describes_to_finish` describes)
    reason: str = ""  # FailureReason for "fail"; the Cause for "error"
    error: str = ""  # the Step Functions error name for "error", e.g. SageMaker.AmazonSageMakerException
    billable_seconds: int = 3600
    training_seconds: int = 3700
    describes_to_finish: int = 0


def completes(billable_seconds: int = 3600) -> Outcome:
    return Outcome("complete", billable_seconds=billable_seconds, training_seconds=billable_seconds + 100)


def fails(reason: str) -> Outcome:
    return Outcome("fail", reason=reason, billable_seconds=120, training_seconds=130)


def capacity_error() -> Outcome:
    return fails("CapacityError: Unable to provision requested ML compute capacity. Please retry using a "
                 "different ML instance type.")


def lost() -> Outcome:
    """The job is created and keeps running, but the task's wait for it fails (States.TaskFailed)."""
    return Outcome("lost", reason="The wait for the job broke off (test)")


def created_despite_server_error(describes_to_finish: int = 2) -> Outcome:
    """A 5xx answer to a CreateTrainingJob that did create the job; the job then runs and completes."""
    return Outcome("created_error", error="SageMaker.AmazonSageMakerException",
                   reason="We encountered an internal error. Please try again. (Service: AmazonSageMaker; Status Code: "
                          "500; Error Code: InternalFailure; Request ID: 4d5e; Proxy: null)",
                   describes_to_finish=describes_to_finish)


def api_error(error: str, cause: str) -> Outcome:
    return Outcome("error", reason=cause, error=error)


def refused_as_invalid(problems: list[str]) -> Outcome:
    """SageMaker's answer to a request that breaks its model: no job, a ValidationException."""
    return api_error("SageMaker.AmazonSageMakerException",
                     f"{len(problems)} validation error(s) detected: {'; '.join(problems)} (Service: AmazonSageMaker; "
                     "Status Code: 400; Error Code: ValidationException; Request ID: 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)")


def throttled() -> Outcome:
    """How the optimized integration reports throttling: the generic error name, the code in the cause."""
    return api_error("SageMaker.AmazonSageMakerException",
                     "Rate exceeded (Service: AmazonSageMaker; Status Code: 400; Error Code: ThrottlingException; "
                     "Request ID: 5e6f7a8b-9c0d-1e2f-3a4b-5c6d7e8f9a0b; Proxy: null)")


def quota_exceeded() -> Outcome:
    return api_error("SageMaker.ResourceLimitExceededException",
                     "The account-level service limit 'ml.p5.48xlarge for training job usage' is 2 Instances, with "
                     "current utilization of 2 Instances and a request delta of 2 Instances.")


@dataclass
class FakeSageMaker:
    """Follows a script of outcomes, one per CreateTrainingJob call; records every call."""

    script: list[Outcome]
    region: str = "us-east-1"
    throttle: int = 0  # how many of the first calls are throttled, whatever they ask
    describe_throttle: int = 0  # how many of the first DescribeTrainingJob calls are throttled
    calls: list[dict[str, Any]] = field(default_factory=list)  # every CreateTrainingJob request received
    throttled: int = 0  # the calls answered with throttling
    created: list[dict[str, Any]] = field(default_factory=list)  # the ones that created a job
    refused: list[list[str]] = field(default_factory=list)  # the service-model problems of each refused call
    stopped: list[str] = field(default_factory=list)
    lost: set[str] = field(default_factory=set)  # jobs whose .sync wait fails while they run
    polls: int = 0
    describes: int = 0  # DescribeTrainingJob calls of the definition (aws-sdk), throttled ones included
    missing: str = "ValidationException"  # how DescribeTrainingJob answers for a missing job (or "ResourceNotFound")
    stop_calls: list[str] = field(default_factory=list)  # every StopTrainingJob, for a job or not
    finishing: dict[str, int] = field(default_factory=dict)  # job -> describes left before it completes

    @functools.cached_property
    def client(self) -> Any:
        return boto3.client("sagemaker", region_name=self.region)

    def _job(self, name: str) -> Any:
        return sagemaker_backends[DEFAULT_ACCOUNT_ID][self.region].training_jobs[name]

    def create(self, request: dict[str, Any]) -> tuple[dict[str, Any] | None, Outcome]:
        self.calls.append(copy.deepcopy(request))
        if self.throttled < self.throttle:  # the API's rate limit answers before the request is looked at
            self.throttled += 1
            return None, throttled()
        problems = validate_request(request)
        if problems:  # before the script: SageMaker refuses such a request every time
            self.refused.append(problems)
            return None, refused_as_invalid(problems)
        outcome = self.script.pop(0) if self.script else completes()
        if outcome.kind == "error":
            return None, outcome
        self.created.append(copy.deepcopy(request))
        response = self.client.create_training_job(**request)
        job = self._job(request["TrainingJobName"])
        job.training_job_status = {"complete": "Completed", "fail": "Failed", "running": "InProgress",
                                   "lost": "InProgress", "created_error": "InProgress"}[outcome.kind]
        if outcome.kind == "created_error":
            self.finishing[request["TrainingJobName"]] = outcome.describes_to_finish
        if outcome.kind == "lost":
            self.lost.add(request["TrainingJobName"])
        job.secondary_status = job.training_job_status
        job.billable_time_in_seconds = outcome.billable_seconds
        job.training_time_in_seconds = outcome.training_seconds
        if outcome.kind == "fail":
            job.failure_reason = outcome.reason
        if outcome.kind == "created_error":
            return None, outcome
        return {"TrainingJobArn": response["TrainingJobArn"]}, outcome

    def exists(self, name: str) -> bool:
        return name in sagemaker_backends[DEFAULT_ACCOUNT_ID][self.region].training_jobs

    def stop(self, name: str) -> None:
        """StopTrainingJob: SageMaker answers a ValidationException for a job that does not exist."""
        self.stop_calls.append(name)
        if not self.exists(name):
            raise ClientError({"Error": {"Code": "ValidationException", "Message": "Requested resource not found."},
                               "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": "8e9f"}}, "StopTrainingJob")
        self.stopped.append(name)
        self._job(name).training_job_status = "Stopped"

    def describe_call(self, name: str) -> dict[str, Any]:
        """DescribeTrainingJob from the definition's aws-sdk task: throttled first if the test asks."""
        self.describes += 1
        if self.describes <= self.describe_throttle:
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"},
                               "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": "7d8e"}},
                              "DescribeTrainingJob")
        if not self.exists(name) and self.missing == "ResourceNotFound":
            raise self.client.exceptions.ResourceNotFound(
                {"Error": {"Code": "ResourceNotFound", "Message": f"Training job {name} does not exist."},
                 "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": "9f0a"}}, "DescribeTrainingJob")
        if name in self.finishing:
            self.finishing[name] -= 1
            if self.finishing[name] < 0:
                self._job(name).training_job_status = "Completed"
        return self.describe(name, poll=False)

    def describe(self, name: str, poll: bool = True) -> dict[str, Any]:
        self.polls += poll
        response = self.client.describe_training_job(TrainingJobName=name)
        response.pop("ResponseMetadata", None)
        return json.loads(json.dumps(response, default=str))


_CURRENT: list[FakeSageMaker] = []


def _failure(env: Any, task: Any, error: str, cause: str, states_error: bool = False) -> FailureEventException:
    name = StatesErrorName(typ=StatesErrorNameType.StatesTaskFailed) if states_error else CustomErrorName(error)
    return FailureEventException(
        FailureEvent(
            env=env,
            error_name=name,
            event_type=HistoryEventType.TaskFailed,
            event_details=EventDetails(
                taskFailedEventDetails=TaskFailedEventDetails(
                    error=error, cause=cause, resource=task._get_sfn_resource(),
                    resourceType=task._get_sfn_resource_type(),
                )
            ),
        )
    )


class StateTaskServiceSageMaker(StateTaskServiceCallback):
    """`arn:aws:states:::sagemaker:createTrainingJob[.sync]` and `stopTrainingJob`, backed by FakeSageMaker."""

    def __init__(self) -> None:
        # WaitForTaskToken is listed only because moto's callback code assumes a callback endpoint exists.
        super().__init__(supported_integration_patterns={ResourceCondition.Sync, ResourceCondition.WaitForTaskToken})

    def _get_supported_parameters(self) -> set[str] | None:
        return None  # no filtering: the test must see exactly what the definition sends

    def _validate_service_integration_is_supported(self) -> None:
        if self.resource.api_action != "createTrainingJob":  # the one optimized training-job API
            raise ValueError(f"not an optimized SageMaker integration: {self.resource.api_action}")

    def _eval_service_task(self, env, resource_runtime_part, normalised_parameters, state_credentials):
        fake = _CURRENT[-1]
        response, outcome = fake.create(normalised_parameters)
        if response is None:
            raise _failure(env, self, outcome.error, outcome.reason)
        env.stack.append(response)

    def _build_sync_resolver(self, env, resource_runtime_part, normalised_parameters, state_credentials):
        fake = _CURRENT[-1]
        env.stack.pop()  # CreateTrainingJob's response
        name = normalised_parameters["TrainingJobName"]

        def resolve() -> dict[str, Any] | None:
            if name in fake.lost:
                raise _failure(env, self, "States.TaskFailed", "The wait for the job broke off (test)",
                               states_error=True)
            job = fake.describe(name)
            status = job["TrainingJobStatus"]
            if status == "Completed":
                return job
            if status in TERMINAL_FAILURES:
                raise _failure(env, self, "States.TaskFailed", json.dumps(job), states_error=True)
            return None

        return resolve


class StateTaskServiceSdk(StateTaskServiceAwsSdk):
    """moto's aws-sdk tasks, with SageMaker's describe and stop served by FakeSageMaker and errors named as AWS does."""

    _FAKED = {"describe_training_job", "stop_training_job"}

    @staticmethod
    def _normalise_service_error_name(service_name: str) -> str:
        # The "Exception prefix" column of the developer guide's AWS SDK integrations table.
        return {"sagemaker": "SageMaker", "cloudwatch": "CloudWatch"}.get(service_name, service_name)

    def _operation(self) -> Any:
        client = boto3.client(self._get_boto_service_name(), region_name="us-east-1")
        return client.meta.service_model.operation_model(client.meta.method_to_api_mapping[
            self._get_boto_service_action()])

    def _eval_service_task(self, env, resource_runtime_part, normalised_parameters, state_credentials):
        action = self._get_boto_service_action()
        if self._get_boto_service_name() != "sagemaker" or action not in self._FAKED:
            operation = self._operation()
            parameters = _api_cased(normalised_parameters, operation.input_shape)
            normalised_parameters.clear()
            normalised_parameters.update(parameters)
            super()._eval_service_task(env, resource_runtime_part, normalised_parameters, state_credentials)
            env.stack.append(_pascal_cased(env.stack.pop(), operation.output_shape))
            return
        fake = _CURRENT[-1]
        name = normalised_parameters["TrainingJobName"]
        if action == "stop_training_job":
            fake.stop(name)
            env.stack.append({})
        else:
            env.stack.append(fake.describe_call(name))


def _api_cased(value: Any, shape: Any) -> Any:
    """PascalCase member names (as in a Task's Parameters) in the API's own casing, by the operation's shape."""
    if isinstance(value, dict) and shape is not None and shape.type_name == "structure":
        names = {m[:1].upper() + m[1:]: m for m in shape.members}
        return {names.get(k, k): _api_cased(v, shape.members.get(names.get(k, k))) for k, v in value.items()}
    if isinstance(value, list) and shape is not None and shape.type_name == "list":
        return [_api_cased(v, shape.member) for v in value]
    return value


def _pascal_cased(value: Any, shape: Any) -> Any:
    """A response's structure members in PascalCase, as AWS SDK integrations return them (map keys stay)."""
    if isinstance(value, dict) and shape is not None and shape.type_name == "structure":
        return {k[:1].upper() + k[1:]: _pascal_cased(v, shape.members.get(k)) for k, v in value.items()}
    if isinstance(value, list) and shape is not None and shape.type_name == "list":
        return [_pascal_cased(v, shape.member) for v in value]
    return value


# moto parses the whole definition again for every execution (ANTLR, most of an execution's time) and every
# JSONPath on every use; the parsed program holds no execution state (that lives in the Environment), so the
# parses are kept for the tests' many executions of few definitions.
@functools.lru_cache(maxsize=64)
def _program(definition: str) -> Any:
    return AmazonStateLanguageParser.parse(definition)[0]


def _entrypoint(worker: ExecutionWorker) -> Any:
    return _program(worker._evaluation_details.state_machine_details.definition)


_ext_jsonpath = functools.lru_cache(maxsize=4096)(jsonpath_ng.ext.parse)
_jsonpath = functools.lru_cache(maxsize=4096)(jsonpath_ng.parse)


@contextlib.contextmanager
def installed(fake: FakeSageMaker) -> Iterator[FakeSageMaker]:
    """Route SageMaker tasks to `fake`, make Retry/Wait/poll delays instant and parses cached, for one `with` block."""
    original: Callable[..., Any] = state_task_factory.state_task_service_for
    waits: list[int] = []

    def factory(service_name: str) -> Any:
        if service_name == "sagemaker":
            return StateTaskServiceSageMaker()
        if service_name == "aws-sdk":
            return StateTaskServiceSdk()
        return original(service_name=service_name)

    def no_wait(self: Any, env: Any, wait_seconds: int) -> None:
        waits.append(wait_seconds)

    _CURRENT.append(fake)
    fake.waits = waits  # type: ignore[attr-defined]
    try:
        with (
            mock.patch.object(state_task_factory, "state_task_service_for", factory),
            mock.patch.object(retrier_decl, "time", SimpleNamespace(sleep=waits.append)),
            mock.patch.object(WaitFunction, "_wait_interval", no_wait),
            mock.patch.object(state_task_service_callback, "_DELAY_SECONDS_SYNC_CONDITION_CHECK", 0.01),
            mock.patch.object(ExecutionWorker, "_get_evaluation_entrypoint", _entrypoint),
            mock.patch.object(json_path, "parse", _ext_jsonpath),
            mock.patch.object(result_path, "parse", _jsonpath),
        ):
            yield fake
    finally:
        _CURRENT.remove(fake)
