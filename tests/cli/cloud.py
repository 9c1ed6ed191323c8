"""What a training job leaves in AWS besides its status, for the CLI tests: SageMaker's status transitions and the
job's CloudWatch log streams, one per host (`<job>/algo-<n>-<epoch>`), as SageMaker writes them.

`CloudSageMaker` is the state-machine tests' `FakeSageMaker` (tests/compiler/state_machine/sagemaker_sync.py) in the
environment's own account (moto keeps one backend per account; the CLI talks to the account cdk.json names), and on
every job it creates it also writes the job's `SecondaryStatusTransitions` and log lines of every host with
interleaved timestamps, each host's stream written in one go, the last host's first (so only a merge by timestamp
prints them in order).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import boto3

from tests.compiler.state_machine.sagemaker_sync import FakeSageMaker, Outcome

LOG_GROUP = "/aws/sagemaker/TrainingJobs"
LOG_START_MS = int(time.time() * 1000) - 60_000  # moto refuses events older than 14 days


def _transitions(kind: str, reason: str) -> list[tuple[str, str]]:
    """SageMaker's secondary statuses for each outcome (messages as the console shows them)."""
    start = [("Starting", "Launching requested ML instances")]
    if "CapacityError" in reason:
        return [*start, ("Failed", "Training job failed")]
    start += [("Downloading", "Downloading input data"),
              ("Training", "Training image download completed. Training in progress.")]
    if kind == "complete":
        return [*start, ("Uploading", "Uploading generated training model"), ("Completed", "Training job completed")]
    if kind == "fail":
        return [*start, ("Failed", "Training job failed")]
    return start  # still running


def host_lines(kind: str, reason: str, hosts: int) -> dict[str, list[tuple[int, str]]]:
    """Each host's log events (ms offset, message): rank 0 logs the metrics, every host logs its progress."""
    if "CapacityError" in reason:
        return {}
    lines: dict[str, list[tuple[int, str]]] = {}
    for n in range(1, hosts + 1):
        events = [(n * 5, f"host algo-{n}: starting {8} ranks"),
                  (100 + n * 5, f"host algo-{n}: step 100 rank {8 * (n - 1)} ok")]
        if n == 1:
            events += [(110, "step 100 train_loss=3.412 tokens_per_sec=181234.5 step_time_ms=361.2"),
                       (220, "step 200 train_loss=2.917 val_loss=3.004")]
        if kind == "fail" and n == 2:
            events.append((300, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"))
        if kind == "complete":
            events.append((400 + n, f"host algo-{n}: done"))
        lines[f"algo-{n}"] = sorted(events)
    return lines


def expected_log(kind: str, reason: str, hosts: int) -> list[str]:
    """The lines `trainctl` prints for a job, every host merged by time (metric marks not included)."""
    merged = sorted((t, host, m) for host, events in host_lines(kind, reason, hosts).items() for t, m in events)
    return [f"[{host}] {message}" for _, host, message in merged]


def starts_like_sagemaker(original: Callable[..., None]) -> Callable[..., None]:
    """moto's `FakeTrainingJob.__init__`, made to start a job as SageMaker does: InProgress, no transitions yet,
    the metric definitions as sent (moto puts a sample of its own in their place and calls the job Completed)."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        sent = list((kwargs.get("algorithm_specification") or {}).get("MetricDefinitions") or [])
        original(self, *args, **kwargs)
        self.algorithm_specification["MetricDefinitions"] = sent
        self.training_job_status, self.secondary_status = "InProgress", "Starting"
        self.secondary_status_transitions, self.final_metric_data_list = [], []

    return __init__


@dataclass
class CloudSageMaker(FakeSageMaker):
    """FakeSageMaker in `account`; each job it creates logs and goes through its transitions before it ends.

    The base class sets the outcome (status, reason, billable time) on the job right after creating it; here those
    settings wait until the job's logs and transitions are written, so whoever describes the job never sees it
    ended without them (SageMaker's order).
    """

    streams: list[str] = field(default_factory=list)
    _outcome: SimpleNamespace | None = None
    _creating: str = ""  # the job whose outcome is held back (another run's describes go on meanwhile)

    def filter_log_events(self, request: dict[str, Any]) -> dict[str, Any]:
        """FilterLogEvents over the streams written here (moto's own filter knows no `%regex%` pattern). The lines
        carry real timestamps (moto keeps no older events than 14 days); on the run's virtual clock a job's lines
        come as long after its creation as they come after LOG_START_MS here."""
        self.log_queries.append(request)
        logs = boto3.client("logs", region_name=self.region)
        found = re.compile(request["filterPattern"].strip("%"))
        events = []
        for stream in self.streams:
            if not stream.startswith(request["logStreamNamePrefix"]):
                continue
            created = self.created_ms[stream.split("/", 1)[0]]
            for event in logs.get_log_events(logGroupName=LOG_GROUP, logStreamName=stream, startFromHead=True)["events"]:
                when = created + event["timestamp"] - LOG_START_MS
                if request["startTime"] <= when <= self.clock.ms and found.search(event["message"]):
                    events.append({"logStreamName": stream, "eventId": str(when), **event, "timestamp": when})
        answer = {"events": sorted(events, key=lambda e: e["timestamp"])[:request.get("limit", 10_000)]}
        self.log_answers.append(answer)
        return answer

    def _job(self, name: str) -> Any:
        if self._outcome is not None and name == self._creating:  # inside create(): hold the outcome back
            return self._outcome
        return super()._job(name)

    def create(self, request: dict[str, Any]) -> tuple[dict[str, Any] | None, Outcome]:
        self._outcome, self._creating = SimpleNamespace(), request["TrainingJobName"]
        try:
            response, outcome = super().create(request)
        finally:
            settings, self._outcome = self._outcome, None
        if response is None:
            return response, outcome
        name = request["TrainingJobName"]
        hosts = int(request["ResourceConfig"].get("InstanceCount", 1))
        self.write_logs(name, host_lines(outcome.kind, outcome.reason, hosts))
        job = self._job(name)
        job.secondary_status_transitions = [{"Status": s, "StatusMessage": m, "StartTime": job.creation_time}
                                            for s, m in _transitions(outcome.kind, outcome.reason)]
        if outcome.kind == "complete":
            job.final_metric_data_list = [{"MetricName": "train:loss", "Value": 2.917, "Timestamp": job.creation_time}]
        for key, value in vars(settings).items():
            setattr(job, key, value)
        return response, outcome

    def write_logs(self, job: str, lines: dict[str, list[tuple[int, str]]]) -> None:
        logs = boto3.client("logs", region_name=self.region)
        with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
            logs.create_log_group(logGroupName=LOG_GROUP)
        for host, events in sorted(lines.items(), reverse=True):  # the last host's stream first
            stream = f"{job}/{host}-1700000000"
            logs.create_log_stream(logGroupName=LOG_GROUP, logStreamName=stream)
            logs.put_log_events(logGroupName=LOG_GROUP, logStreamName=stream,
                                logEvents=[{"timestamp": LOG_START_MS + t, "message": m} for t, m in events])
            self.streams.append(stream)
