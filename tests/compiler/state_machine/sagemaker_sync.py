"""Step Functions' SageMaker and CloudWatch Logs integrations for moto's interpreter, backed by a scripted SageMaker
that answers as AWS documents it (each behaviour's source: docs/aws-assumptions.md, "The scripted SageMaker").

The definitions call SageMaker only through AWS SDK integrations (`arn:aws:states:::aws-sdk:sagemaker:*`). moto's
own aws-sdk tasks would call moto's SageMaker, which finishes every job at once. `installed()` swaps in, for the
duration of a test, `StateTaskServiceSdk`, which sends CreateTrainingJob, DescribeTrainingJob and StopTrainingJob to
`FakeSageMaker`, and CloudWatch Logs' FilterLogEvents (the stall watchdog's question) to the job log it keeps:

- time is virtual: every Wait state and Retry delay moves the fake's clock on by its seconds (each state entered
  by a tenth of a second), and `$$.State.EnteredTime` reads it, in Step Functions' own format
  (`2026-11-28T23:58:00.000Z`), so windows and timestamps behave as they would over hours, in milliseconds;
- CreateTrainingJob records the request exactly as it reached "SageMaker", throttles the first `throttle` calls,
  refuses a request that breaks the service model (a hyperparameter value over 2,500 characters, a tag value outside
  the Tag.Value pattern), otherwise follows a script of outcomes (throttle, quota error, capacity failure, failure,
  success, a job that never starts, a job that stalls, ...) and creates the job in moto's SageMaker backend, with
  TrainingJobStatus InProgress and SecondaryStatus Starting;
- each DescribeTrainingJob moves the job one step along its outcome's timeline (e.g. Training, then Completed), so
  the definition's poll loop sees the job progress as it would on AWS; SageMaker's own time limits act on the
  virtual clock: a job still pending after the request's MaxPendingTimeInSeconds is Stopped, a spot job not done
  after MaxWaitTimeInSeconds is Stopped with SecondaryStatus MaxWaitTimeExceeded;
- a name no job has is answered `ValidationException: Requested resource not found.` (what the service sends, not
  the ResourceNotFound its model lists);
- StopTrainingJob makes the job Stopping (for `stopping_looks` describes), then Stopped;
- a training job writes its log: a progress line (`step N train_loss=... tokens_per_sec=...`) every minute while
  its outcome says it progresses, and an unrelated line every minute all along, to the stream `<job>/algo-1-<epoch>`;
  a line can be found `ingest_seconds` after its own timestamp; FilterLogEvents answers with the first line of the
  job's streams since StartTime that the filter pattern (CloudWatch Logs' `%regex%` form) finds;
- errors are named as AWS SDK integrations name them (developer guide, "AWS SDK service integrations"):
  `SageMaker.<Name>Exception` for a modelled error, `SageMaker.SageMakerException` for the others (throttling,
  validation, 5xx), with the Cause the AWS SDK for Java 2.x writes: `<message> (Service: SageMaker, Status Code:
  <n>, Request ID: <id>)`.

Other services' members are translated between the PascalCase of AWS SDK integrations and the API's own casing
(Step Functions' `stateMachineArn`), both ways, as Step Functions does and as LocalStack's interpreter did before
moto's port left that step out.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import functools
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from unittest import mock

import boto3
import jsonpath_ng
import jsonpath_ng.ext
from botocore.exceptions import ClientError
from botocore.validate import validate_parameters
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
from moto.stepfunctions.parser.asl.component.state import state as state_module
from moto.stepfunctions.parser.asl.component.state.exec.state_task import state_task_factory
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk import (
    StateTaskServiceAwsSdk,
)
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.asl.utils import json_path
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

from compiler.sdk.service_model import validate_request
from compiler.state_machine import poll
from compiler.state_machine.integrations import SDK_SERVICES

POLL_PAUSE_SECONDS = 0.005
RUNNING = ("InProgress", "Training")
STARTING = ("InProgress", "Starting")
PENDING = ("InProgress", "Pending")
# 23:58 on the last day of a leap-year February: the first minutes of a run cross a day, a month and the 29th.
CLOCK_START = datetime.datetime(2028, 2, 29, 23, 58, tzinfo=datetime.UTC)
STATE_SECONDS = 0.1  # virtual time each state entered takes
LINE_SECONDS = 60  # a training job writes a progress line (and an unrelated one) every minute


def sdk_cause(message: str, status: int = 400, request_id: str = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0") -> str:
    """The Cause of an AWS SDK integration's error: the AWS SDK for Java 2.x's exception message."""
    return f"{message} (Service: SageMaker, Status Code: {status}, Request ID: {request_id})"


def client_error(code: str, message: str, operation: str, request_id: str = "8e9f") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message},
                        "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": request_id}}, operation)


@dataclass
class Outcome:
    """What SageMaker does with one CreateTrainingJob call, and how the job goes on over DescribeTrainingJob calls."""

    kind: str  # "complete" | "fail" | "error" (the API call itself fails; no job) | "running" | "lost" (the call's
    # answer is lost, the job exists and completes) | "created_error" (the call fails with a 5xx, yet the job exists
    # and completes after `describes_to_finish` describes) | "waiting" (never leaves Starting) | "stall"
    reason: str = ""  # FailureReason for "fail"; the Cause for "error"
    error: str = ""  # the Step Functions error name for "error", e.g. SageMaker.SageMakerException
    billable_seconds: int = 3600
    training_seconds: int = 3700
    describes_to_finish: int = 1  # describes that find the job InProgress before its end
    silent: tuple[tuple[float, float], ...] = ()  # (from, to) minutes of training without progress lines
    starting_looks: int = 0  # describes that find the job still waiting for instances (Starting) first
    waiting: tuple[str, str] = STARTING  # how SageMaker reports the wait for instances (Starting or Pending)
    steps: tuple[tuple[str, str], ...] = ()  # an explicit timeline, one step a describe (overrides the kind's)
    selects: int = 0  # with InstancePreferences: the index of the type SageMaker launches the job on

    def timeline(self) -> list[tuple[str, str]]:
        """(TrainingJobStatus, SecondaryStatus) after each describe; the last one stays."""
        if self.steps:
            return list(self.steps)
        waiting = [self.waiting] * self.starting_looks
        if self.kind == "fail":
            return [*waiting, ("Failed", "Failed")]
        if self.kind == "waiting":
            return [self.waiting]
        if self.kind in ("running", "stall"):
            return [*waiting, RUNNING]
        return [*waiting, *[RUNNING] * self.describes_to_finish, ("Completed", "Completed")]


def completes(billable_seconds: int = 3600, describes_to_finish: int = 1) -> Outcome:
    return Outcome("complete", billable_seconds=billable_seconds, training_seconds=billable_seconds + 100,
                   describes_to_finish=describes_to_finish)


def fails(reason: str) -> Outcome:
    return Outcome("fail", reason=reason, billable_seconds=120, training_seconds=130)


def capacity_error() -> Outcome:
    return fails("CapacityError: Unable to provision requested ML compute capacity. Please retry using a "
                 "different ML instance type.")


def algorithm_error() -> Outcome:
    return fails("AlgorithmError: ExecuteUserScriptError: ExitCode 1 ErrorMessage \"RuntimeError: CUDA error\"")


def never_starts(waiting: tuple[str, str] = STARTING) -> Outcome:
    """SageMaker keeps the job waiting for instances (Starting, or Pending) and never fails it."""
    return Outcome("waiting", billable_seconds=0, training_seconds=0, waiting=waiting)


def stalls(progress_minutes: float = 0) -> Outcome:
    """The job trains: it writes progress lines for `progress_minutes`, then none; it never ends (a quiet start-up:
    `Outcome(silent=...)`)."""
    return Outcome("stall", silent=((progress_minutes, math.inf),), billable_seconds=1800, training_seconds=1800)


def running() -> Outcome:
    return Outcome("running")


def lost() -> Outcome:
    """The job is created, but the call's answer never comes back (States.TaskFailed); the job then completes."""
    return Outcome("lost", error="States.TaskFailed", reason="The answer to CreateTrainingJob was lost (test)")


def created_despite_server_error(describes_to_finish: int = 2) -> Outcome:
    """A 5xx answer to a CreateTrainingJob that did create the job; the job then runs and completes."""
    return Outcome("created_error", error="SageMaker.SageMakerException",
                   reason=sdk_cause("We encountered an internal error. Please try again.", 500, "4d5e"),
                   describes_to_finish=describes_to_finish)


def api_error(error: str, cause: str) -> Outcome:
    return Outcome("error", reason=cause, error=error)


def refused_as_invalid(problems: list[str]) -> Outcome:
    """SageMaker's answer to a request that breaks its model: no job, a ValidationException."""
    return api_error("SageMaker.SageMakerException",
                     sdk_cause(f"{len(problems)} validation error(s) detected: {'; '.join(problems)}"))


def throttled() -> Outcome:
    """How the AWS SDK integration reports throttling: the generic error name, the service's message in the cause."""
    return api_error("SageMaker.SageMakerException", sdk_cause("Rate exceeded", request_id="5e6f7a8b"))


def quota_exceeded(instance_type: str = "ml.p5.48xlarge", limit: int = 2, used: int = 2) -> Outcome:
    """SageMaker's quota answer, in the words aws/amazon-sagemaker-examples#1543 and
    gabehollombe-aws/jupyter-notebooks#1 quote it."""
    return api_error("SageMaker.ResourceLimitExceededException",
                     sdk_cause(f"The account-level service limit '{instance_type} for training job usage' is {limit} "
                               f"Instances, with current utilization of {used} Instances and a request delta of 2 "
                               "Instances. Please contact AWS support to request an increase for this limit."))


@dataclass
class Clock:
    """The virtual time of one execution."""

    now: datetime.datetime = CLOCK_START

    def advance(self, seconds: float) -> None:
        self.now += datetime.timedelta(seconds=seconds)

    @property
    def ms(self) -> int:
        return int(self.now.timestamp() * 1000)

    def entered(self) -> str:
        """`$$.State.EnteredTime` as Step Functions writes it (developer guide, "Accessing the Context object")."""
        self.advance(STATE_SECONDS)
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"


@dataclass
class JobLog:
    """What one job has written to its log so far: from `start_ms` (its first Training look), a progress line every
    minute but while `silent`, and an unrelated line every minute all along."""

    stream: str
    start_ms: int  # when the job first reported Training
    silent: tuple[tuple[float, float], ...]  # (from, to) minutes after start_ms

    def last_progress(self, until_ms: int) -> int | None:
        """The timestamp of the last progress line written by `until_ms`."""
        return max((t for t, m in self.lines(until_ms) if "train_loss=" in m), default=None)

    def lines(self, until_ms: int) -> list[tuple[int, str]]:
        """(timestamp, message) of every line up to `until_ms`, oldest first."""
        out = []
        step = 0
        for t in range(self.start_ms, until_ms + 1, LINE_SECONDS * 1000):
            out.append((t, "[algo-1] INFO heartbeat: data loader alive"))
            minutes = (t + 500 - self.start_ms) / 60_000
            if not any(low <= minutes < high for low, high in self.silent):
                step += 10
                out.append((t + 500, f"step {step} train_loss=2.{step % 1000:03d} tokens_per_sec=181234.5"))
        return [line for line in out if line[0] <= until_ms]


@dataclass
class FakeSageMaker:
    """Follows a script of outcomes, one per CreateTrainingJob call; records every call."""

    script: list[Outcome]
    region: str = "us-east-1"
    account: str = DEFAULT_ACCOUNT_ID  # moto keeps one SageMaker per account
    throttle: int = 0  # how many of the first calls are throttled, whatever they ask
    describe_throttle: int = 0  # how many DescribeTrainingJob calls in a row are throttled (after the first `after`)
    describe_throttle_after: int = 0
    stopping_looks: int = 0  # describes that find a stopped job still Stopping
    pending_stop: tuple[str, str] = ("Stopped", "Stopped")  # how a job stopped by MaxPendingTimeInSeconds reads
    ingest_seconds: float = 5  # how long after its timestamp a log line can be found
    unfinished_searches: int = 0  # how many FilterLogEvents answers say "no line yet, more to search" (NextToken)
    calls: list[dict[str, Any]] = field(default_factory=list)  # every CreateTrainingJob request received
    throttled: int = 0  # the calls answered with throttling
    created: list[dict[str, Any]] = field(default_factory=list)  # the ones that created a job
    refused: list[list[str]] = field(default_factory=list)  # the service-model problems of each refused call
    stopped: list[str] = field(default_factory=list)
    describes: int = 0  # DescribeTrainingJob calls of the definition, throttled ones included
    stop_calls: list[str] = field(default_factory=list)  # every StopTrainingJob, for a job or not
    stopped_ms: dict[str, int] = field(default_factory=dict)  # job -> when the run stopped it (virtual)
    timelines: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # job -> steps still to come
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # job -> its outcome
    created_ms: dict[str, int] = field(default_factory=dict)  # job -> when it was created (virtual)
    logs: dict[str, JobLog] = field(default_factory=dict)  # job -> its log, once it trained
    log_queries: list[dict[str, Any]] = field(default_factory=list)  # every FilterLogEvents request (API casing)
    log_answers: list[dict[str, Any]] = field(default_factory=list)  # and its answer
    waits: list[int] = field(default_factory=list)  # Retry delays and Wait states other than the poll loop's
    poll_waits: list[int] = field(default_factory=list)  # the poll loop's waits (for instances, while training)
    clock: Clock = field(default_factory=Clock)

    @functools.cached_property
    def client(self) -> Any:
        return boto3.client("sagemaker", region_name=self.region)

    def _job(self, name: str) -> Any:
        return sagemaker_backends[self.account][self.region].training_jobs[name]

    def _set(self, name: str, status: tuple[str, str]) -> None:
        job = self._job(name)
        job.training_job_status, job.secondary_status = status

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
        name = request["TrainingJobName"]
        self.created.append(copy.deepcopy(request))
        response = self.client.create_training_job(**request)
        self._set(name, STARTING)
        self.timelines[name] = outcome.timeline()
        self.outcomes[name] = outcome
        self.created_ms[name] = self.clock.ms
        job = self._job(name)
        job.billable_time_in_seconds = outcome.billable_seconds
        job.training_time_in_seconds = outcome.training_seconds
        if outcome.kind == "fail":
            job.failure_reason = outcome.reason
        preferred = request["ResourceConfig"].get("InstancePreferences")
        if preferred:  # SageMaker reports the type it chose
            job.resource_config = {**request["ResourceConfig"],
                                   "SelectedInstanceType": preferred[outcome.selects]["InstanceType"],
                                   "SelectedInstanceCount": request["ResourceConfig"]["InstanceCount"]}
        if outcome.kind in ("created_error", "lost"):
            return None, outcome
        return {"TrainingJobArn": response["TrainingJobArn"]}, outcome

    def exists(self, name: str) -> bool:
        return name in sagemaker_backends[self.account][self.region].training_jobs

    def status(self, name: str) -> tuple[str, str]:
        job = self._job(name)
        return job.training_job_status, job.secondary_status

    def stop(self, name: str) -> None:
        """StopTrainingJob: SageMaker answers a ValidationException for a job that does not exist or has ended."""
        self.stop_calls.append(name)
        if not self.exists(name) or self.status(name)[0] != "InProgress":
            raise client_error("ValidationException", "Requested resource not found.", "StopTrainingJob")
        self.stopped.append(name)
        self.stopped_ms[name] = self.clock.ms
        self._set(name, ("Stopping", "Stopping"))
        self.timelines[name] = [("Stopping", "Stopping")] * self.stopping_looks + [("Stopped", "Stopped")]

    def _limits(self, name: str, step: tuple[str, str]) -> tuple[str, str]:
        """SageMaker's own time limits on the virtual clock (StoppingCondition of the job's request)."""
        request = next(r for r in self.created if r["TrainingJobName"] == name)
        stopping = request.get("StoppingCondition", {})
        waited = (self.clock.ms - self.created_ms[name]) / 1000
        if step in (STARTING, PENDING) and name not in self.logs and \
                waited >= stopping.get("MaxPendingTimeInSeconds", float("inf")):
            return self.pending_stop
        if request.get("EnableManagedSpotTraining") and step[0] == "InProgress" and \
                waited >= stopping.get("MaxWaitTimeInSeconds", float("inf")):
            return ("Stopped", "MaxWaitTimeExceeded")
        return step

    def describe_call(self, name: str) -> dict[str, Any]:
        """DescribeTrainingJob from the definition: throttled first if the test asks; moves the job one step on."""
        self.describes += 1
        if self.describe_throttle_after < self.describes <= self.describe_throttle_after + self.describe_throttle:
            raise client_error("ThrottlingException", "Rate exceeded", "DescribeTrainingJob", "7d8e")
        if not self.exists(name):
            raise client_error("ValidationException", "Requested resource not found.", "DescribeTrainingJob", "9f0a")
        steps = self.timelines.get(name)
        if steps and self.status(name)[0] == "InProgress":
            step = self._limits(name, steps[0] if len(steps) == 1 else steps.pop(0))
            if step[0] == "Stopped":
                self.timelines[name] = [step]
            self._set(name, step)
            if step == RUNNING and name not in self.logs:
                self.logs[name] = JobLog(stream=f"{name}/algo-1-{self.clock.ms // 1000}", start_ms=self.clock.ms,
                                         silent=self.outcomes[name].silent)
        elif steps:
            self._set(name, steps[0] if len(steps) == 1 else steps.pop(0))
        return self.describe(name)

    def describe(self, name: str) -> dict[str, Any]:
        response = self.client.describe_training_job(TrainingJobName=name)
        response.pop("ResponseMetadata", None)
        return json.loads(json.dumps(response, default=str))

    def filter_log_events(self, request: dict[str, Any]) -> dict[str, Any]:
        """FilterLogEvents on /aws/sagemaker/TrainingJobs: the first line since startTime, of the streams named with
        the prefix, that the pattern finds and that reached CloudWatch Logs by now (oldest first)."""
        self.log_queries.append(copy.deepcopy(request))
        if len(self.log_queries) <= self.unfinished_searches:
            answer: dict[str, Any] = {"events": [], "searchedLogStreams": [], "nextToken": "more-to-search"}
            self.log_answers.append(answer)
            return answer
        assert request["logGroupName"] == "/aws/sagemaker/TrainingJobs"
        pattern = request["filterPattern"]
        assert pattern.startswith("%") and pattern.endswith("%"), pattern
        found = re.compile(pattern[1:-1])
        visible = self.clock.ms - self.ingest_seconds * 1000
        events = []
        for log in self.logs.values():
            if not log.stream.startswith(request["logStreamNamePrefix"]):
                continue
            events += [{"logStreamName": log.stream, "timestamp": t, "message": m, "ingestionTime": t + 5000,
                        "eventId": f"{t}{index:04d}"}
                       for index, (t, m) in enumerate(log.lines(int(visible)))
                       if t >= request["startTime"] and found.search(m)]
        answer = {"events": sorted(events, key=lambda e: e["timestamp"])[:request.get("limit", 10_000)],
                  "searchedLogStreams": []}
        self.log_answers.append(answer)
        return answer


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


class StateTaskServiceSdk(StateTaskServiceAwsSdk):
    """moto's aws-sdk tasks, with SageMaker's describe and stop served by FakeSageMaker and errors named as AWS does."""

    _FAKED = {("sagemaker", "describe_training_job"), ("sagemaker", "stop_training_job"),
              ("sagemaker", "create_training_job"), ("logs", "filter_log_events")}

    @staticmethod
    def _normalise_service_error_name(service_name: str) -> str:
        # The "Exception prefix" column of the developer guide's AWS SDK integrations table.
        return {"sagemaker": "SageMaker", "cloudwatch": "CloudWatch", "logs": "CloudWatchLogs",
                "cloudwatchlogs": "CloudWatchLogs"}.get(service_name, service_name)

    def _get_boto_service_name(self, boto_service_name: str | None = None) -> str:
        # The service names of the developer guide's table, as botocore names them (`cloudwatchlogs`: logs).
        name = super()._get_boto_service_name(boto_service_name)
        return SDK_SERVICES[name].botocore_name if name in SDK_SERVICES else name

    def _operation(self) -> Any:
        client = boto3.client(self._get_boto_service_name(), region_name="us-east-1")
        return client.meta.service_model.operation_model(client.meta.method_to_api_mapping[
            self._get_boto_service_action()])

    def _eval_service_task(self, env, resource_runtime_part, normalised_parameters, state_credentials):
        action = self._get_boto_service_action()
        service = self._get_boto_service_name()
        if (service, action) not in self._FAKED:
            operation = self._operation()
            parameters = _api_cased(normalised_parameters, operation.input_shape)
            normalised_parameters.clear()
            normalised_parameters.update(parameters)
            super()._eval_service_task(env, resource_runtime_part, normalised_parameters, state_credentials)
            env.stack.append(_pascal_cased(env.stack.pop(), operation.output_shape))
            return
        fake = _CURRENT[-1]
        if service == "logs":
            operation = self._operation()
            request = _api_cased(normalised_parameters, operation.input_shape)
            validate_parameters(request, operation.input_shape)  # what botocore would send, or a ParamValidationError
            env.stack.append(_pascal_cased(fake.filter_log_events(request), operation.output_shape))
            return
        if action == "create_training_job":
            response, outcome = fake.create(normalised_parameters)
            if response is None:
                raise _failure(env, self, outcome.error, outcome.reason, states_error=outcome.kind == "lost")
            env.stack.append(response)
            return
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


class _Entered:
    def __init__(self, text: str) -> None:
        self.text = text

    def isoformat(self) -> str:
        return self.text


def _virtual_datetime(clock: Clock) -> SimpleNamespace:
    """The `datetime` module as moto's state evaluation sees it: `now()` is the virtual clock's entry time."""
    return SimpleNamespace(timezone=datetime.timezone,
                           datetime=SimpleNamespace(now=lambda tz=None: _Entered(clock.entered())))


@contextlib.contextmanager
def installed(fake: FakeSageMaker) -> Iterator[FakeSageMaker]:
    """Route SageMaker tasks to `fake`, make Retry/Wait delays instant and parses cached, for one `with` block.

    The poll loop's waits go to `fake.poll_waits`, every other delay (Retry, back-off, relaunch) to `fake.waits`.
    """
    original: Callable[..., Any] = state_task_factory.state_task_service_for

    def factory(service_name: str) -> Any:
        if service_name == "aws-sdk":
            return StateTaskServiceSdk()
        return original(service_name=service_name)

    def no_wait(self: Any, env: Any, wait_seconds: int) -> None:
        state = env.states.context_object.context_object_data.get("State", {}).get("Name")
        fake.clock.advance(wait_seconds)
        if state in (poll.WAIT, poll.TRAINING_WAIT, poll.WAIT_FOR_INSTANCES):
            fake.poll_waits.append(wait_seconds)
            # A moment in place of the minute: other threads (a test's second execution, StopExecution) get to run,
            # and a stop ends the wait as it does moto's own (`WaitFunction._wait_interval`).
            env.program_state_event.wait(POLL_PAUSE_SECONDS)
        else:
            fake.waits.append(wait_seconds)

    def retry_sleep(seconds: float) -> None:
        fake.clock.advance(seconds)
        fake.waits.append(seconds)  # type: ignore[arg-type]

    _CURRENT.append(fake)
    try:
        with (
            mock.patch.object(state_task_factory, "state_task_service_for", factory),
            mock.patch.object(retrier_decl, "time", SimpleNamespace(sleep=retry_sleep)),
            mock.patch.object(state_module, "datetime", _virtual_datetime(fake.clock)),
            mock.patch.object(WaitFunction, "_wait_interval", no_wait),
            mock.patch.object(ExecutionWorker, "_get_evaluation_entrypoint", _entrypoint),
            mock.patch.object(json_path, "parse", _ext_jsonpath),
            mock.patch.object(result_path, "parse", _jsonpath),
        ):
            yield fake
    finally:
        _CURRENT.remove(fake)
