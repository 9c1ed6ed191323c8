"""A `sagemaker:createTrainingJob.sync` integration for moto's Step Functions interpreter, for tests.

moto 5.2.5 sends every `arn:aws:states:::sagemaker:*` task to `StateTaskServiceUnsupported`, which has no
`.sync` procedure (FACTS.md section 5). `installed()` swaps in `StateTaskServiceSageMaker` for the duration
of a test: CreateTrainingJob goes to `FakeSageMaker`, which records the request exactly as it reached
"SageMaker", throttles the first `throttle` calls (a ThrottlingException, reported like a refusal), refuses a
request as SageMaker would when it breaks the service model (a hyperparameter value over 2,500 characters, or a
tag value with a character outside the Tag.Value pattern, say: a ValidationException, which the optimized
integration reports as the generic `SageMaker.AmazonSageMakerException` with the code in its cause), otherwise
follows a script (throttle, quota error, capacity failure, failure, success), creates the job in
moto's SageMaker backend (so the definition's `aws-sdk:sagemaker:describeTrainingJob` sees it) and sets the
job's final status there; the `.sync` resolver then polls DescribeTrainingJob like Step Functions does and
fails the task with `States.TaskFailed` and the job description as its cause when the job did not complete.
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

    kind: str  # "complete" | "fail" | "error" (the API call itself fails; no job) | "running"
    reason: str = ""  # FailureReason for "fail"; the Cause for "error"
    error: str = ""  # the Step Functions error name for "error", e.g. SageMaker.AmazonSageMakerException
    billable_seconds: int = 3600
    training_seconds: int = 3700


def completes(billable_seconds: int = 3600) -> Outcome:
    return Outcome("complete", billable_seconds=billable_seconds, training_seconds=billable_seconds + 100)


def fails(reason: str) -> Outcome:
    return Outcome("fail", reason=reason, billable_seconds=120, training_seconds=130)


def capacity_error() -> Outcome:
    return fails("CapacityError: Unable to provision requested ML compute capacity. Please retry using a "
                 "different ML instance type.")


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
    calls: list[dict[str, Any]] = field(default_factory=list)  # every CreateTrainingJob request received
    throttled: int = 0  # the calls answered with throttling
    created: list[dict[str, Any]] = field(default_factory=list)  # the ones that created a job
    refused: list[list[str]] = field(default_factory=list)  # the service-model problems of each refused call
    stopped: list[str] = field(default_factory=list)
    polls: int = 0

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
        job.training_job_status = {"complete": "Completed", "fail": "Failed", "running": "InProgress"}[outcome.kind]
        job.secondary_status = job.training_job_status
        job.billable_time_in_seconds = outcome.billable_seconds
        job.training_time_in_seconds = outcome.training_seconds
        if outcome.kind == "fail":
            job.failure_reason = outcome.reason
        return {"TrainingJobArn": response["TrainingJobArn"]}, outcome

    def stop(self, name: str) -> None:
        self.stopped.append(name)
        job = self._job(name)
        job.training_job_status = "Stopped"

    def describe(self, name: str) -> dict[str, Any]:
        self.polls += 1
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
        if self.resource.api_action.lower() not in ("createtrainingjob", "stoptrainingjob"):
            raise ValueError(f"test resolver: unsupported SageMaker action {self.resource.api_action}")

    def _eval_service_task(self, env, resource_runtime_part, normalised_parameters, state_credentials):
        fake = _CURRENT[-1]
        if self._get_boto_service_action() == "stop_training_job":
            fake.stop(normalised_parameters["TrainingJobName"])
            env.stack.append({})
            return
        response, outcome = fake.create(normalised_parameters)
        if response is None:
            raise _failure(env, self, outcome.error, outcome.reason)
        env.stack.append(response)

    def _build_sync_resolver(self, env, resource_runtime_part, normalised_parameters, state_credentials):
        fake = _CURRENT[-1]
        env.stack.pop()  # CreateTrainingJob's response
        name = normalised_parameters["TrainingJobName"]

        def resolve() -> dict[str, Any] | None:
            job = fake.describe(name)
            status = job["TrainingJobStatus"]
            if status == "Completed":
                return job
            if status in TERMINAL_FAILURES:
                raise _failure(env, self, "States.TaskFailed", json.dumps(job), states_error=True)
            return None

        return resolve


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
