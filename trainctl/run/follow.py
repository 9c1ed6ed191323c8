"""Following a run from the terminal: its jobs' status transitions and every host's log lines, until it ends.

How it polls: every `interval` seconds, in this order, (1) DescribeExecution, (2) the execution's history, for the
jobs it launched (a capacity relaunch appears as a new job name), (3) DescribeTrainingJob of each unfinished job, for
its status and SageMaker's `SecondaryStatusTransitions` (printed once each, so none is missed between polls), (4) the
new events of each log stream `<job>/algo-<n>-<epoch>` in `/aws/sagemaker/TrainingJobs`. The execution's status is
read first, so when it is final, the reads after it are complete: the last poll prints everything.

How logs are ordered: each poll reads every stream from where it stopped (GetLogEvents' forward token); lines of all
hosts are merged by timestamp and prefixed `[algo-<n>]`. Hosts log independently and a host's stream may appear
late, so a line is held until every host of its job has logged something at least as late (then nothing earlier
can come, bar CloudWatch ingestion delays), for at most `max(5 s, interval)` (a host may stay silent), and at the
end of the job or run everything left is printed in order. Lines that a metric definition of the job matches get
the values SageMaker will record appended (`[metric train:loss=2.31]`).

Standard output carries the log lines (pipe them, grep them); job status and the outcome go to standard error. Both
carry text the job wrote (its lines, its FailureReason, a run's cause), which may hold terminal escape sequences: each
is printed through `compiler.errors.printable` (controls shown, never obeyed), a line of several lines as
several lines, each with its host.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from compiler.errors import printable
from compiler.facts import catalog
from compiler.facts.summaries import RunSummary
from compiler.inputs.environments import TRAINING_LOG_GROUP
from trainctl.common.aws import Clients, aws_errors
from trainctl.common.errors import problem
from trainctl.common.money import money
from trainctl.common.target import Target
from trainctl.run.durations import duration
from trainctl.run.history import Launch, create_failure, history, launch_of
from trainctl.run.resolve import RUNNING, describe
from trainctl.run.stop import stop_execution
from trainctl.run.summary import summary

_HOST = re.compile(r"^(?P<host>.+)-\d{9,}$")  # SageMaker's stream names end in the host's start time (epoch seconds)
_FINAL_JOB = ("Completed", "Failed", "Stopped")
HOLD_SECONDS = 5.0  # the longest a line waits for a silent host before it is printed anyway
DEFAULT_INTERVAL = 10.0
MAX_INTERVAL = 3600.0  # an hour between looks: beyond it following shows nothing; inf and nan would stop time.sleep


def check_interval(args: argparse.Namespace) -> None:
    """`--interval`: seconds between looks while following, from 0 to an hour."""
    if not 0 <= args.interval <= MAX_INTERVAL:  # also false for nan
        raise problem(f"--interval: give a number of seconds from 0 to {MAX_INTERVAL:g}")


@dataclass(order=True, frozen=True)
class LogLine:
    timestamp: int
    host: str
    message: str = field(compare=False)


def host_of(stream: str) -> str:
    """`<job>/algo-2-1700000000` -> `algo-2`."""
    tail = stream.split("/", 1)[-1]
    match = _HOST.match(tail)
    return match["host"] if match else tail


class LogTail:
    """Every log stream of a run's jobs, read from where the last poll stopped, merged across hosts."""

    def __init__(self, clients: Clients, hold: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.clients, self.hold, self.clock = clients, hold, clock
        self.tokens: dict[str, str | None] = {}  # per stream: where the next read starts
        self.latest: dict[str, dict[str, int]] = {}  # per job, per host: the latest timestamp read
        self.held: dict[str, list[tuple[LogLine, float]]] = {}  # per job: lines read, not printed yet, and when read

    def _streams(self, job: str) -> list[str]:
        names: list[str] = []
        request: dict[str, Any] = {"logGroupName": TRAINING_LOG_GROUP, "logStreamNamePrefix": f"{job}/"}
        while True:
            try:
                page = self.clients.logs.describe_log_streams(**request)
            except self.clients.logs.exceptions.ResourceNotFoundException:
                return []  # the group appears with the first job that logs
            names += [s["logStreamName"] for s in page.get("logStreams", [])]
            if not page.get("nextToken"):
                return names
            request["nextToken"] = page["nextToken"]

    def _read(self, stream: str) -> list[LogLine]:
        lines: list[LogLine] = []
        host = host_of(stream)
        while True:
            request: dict[str, Any] = {"logGroupName": TRAINING_LOG_GROUP, "logStreamName": stream, "startFromHead": True}
            if self.tokens.get(stream):
                request["nextToken"] = self.tokens[stream]
            page = self.clients.logs.get_log_events(**request)
            lines += [LogLine(e["timestamp"], host, e["message"].rstrip("\n")) for e in page.get("events", [])]
            token = page.get("nextForwardToken")
            done = not page.get("events") or token == self.tokens.get(stream)
            self.tokens[stream] = token
            if done:
                return lines

    def poll(self, job: str, hosts: int, complete: bool) -> list[LogLine]:
        """The job's lines ready to print, in timestamp order (host name breaks ties).

        A line is ready once each of the job's `hosts` has logged something at least as late (nothing earlier can
        still come, bar ingestion delays), once it has waited `hold` seconds (a host may stay silent), or when the
        job's logs are `complete`.
        """
        now = self.clock()
        held = self.held.setdefault(job, [])
        latest = self.latest.setdefault(job, {})
        for stream in self._streams(job):
            for line in self._read(stream):
                held.append((line, now))
                latest[line.host] = max(latest.get(line.host, line.timestamp), line.timestamp)
        watermark = min(latest.values()) if len(latest) >= hosts else float("-inf")
        ready = [line for line, seen in held if complete or now - seen >= self.hold or line.timestamp <= watermark]
        self.held[job] = [(line, seen) for line, seen in held if line not in ready]
        return sorted(ready)


@dataclass
class MetricMarks:
    """The job's metric definitions, to show what SageMaker reads from a line."""

    patterns: list[tuple[str, re.Pattern[str]]] = field(default_factory=list)
    definitions: list[Any] = field(default_factory=list)

    @classmethod
    def of(cls, job: dict[str, Any], known: MetricMarks | None = None) -> MetricMarks:
        """The marks of a job's description (`known` again when its definitions are the same)."""
        definitions = (job.get("AlgorithmSpecification") or {}).get("MetricDefinitions") or []
        if known is not None and known.definitions == definitions:
            return known
        patterns = []
        for definition in definitions:
            try:
                patterns.append((str(definition["Name"]), re.compile(str(definition["Regex"]))))
            except (KeyError, re.error):
                continue  # a regex Python cannot read: the line is still printed, unmarked
        return cls(patterns, list(definitions))

    def mark(self, message: str) -> str:
        found = []
        for name, pattern in self.patterns:
            match = pattern.search(message)
            if match:
                found.append(f"{name}={match.group(1) if pattern.groups else match.group(0)}")
        return f"  [metric {' '.join(found)}]" if found else ""


@dataclass
class JobWatch:
    """What has been printed about one job."""

    launch: Launch
    attempt: int
    status: str = ""
    announced: bool = False
    transitions: set[tuple[str, str]] = field(default_factory=set)
    marks: MetricMarks = field(default_factory=MetricMarks)

    @property
    def final(self) -> bool:
        return self.status in _FINAL_JOB


def _status_line(name: str, job: dict[str, Any]) -> str:
    status = job.get("TrainingJobStatus", "")
    line = f"job {name}: {status}"
    if job.get("FailureReason"):
        line += f": {job['FailureReason']}"
    if status == "Completed" and job.get("BillableTimeInSeconds") is not None:
        line += f" (billable {duration(job['BillableTimeInSeconds'])})"
    metrics = job.get("FinalMetricDataList") or []
    if status == "Completed" and metrics:
        line += "; final metrics: " + ", ".join(f"{m['MetricName']}={m['Value']:g}" for m in metrics)
    return line


def _clock(value: Any) -> str:
    return value.astimezone(UTC).strftime("%H:%M:%S") if isinstance(value, datetime) else "--:--:--"


def describe_job(sagemaker: Any, name: str) -> dict[str, Any] | None:
    """DescribeTrainingJob; None for a name no job has (SageMaker answers ValidationException "Requested resource
    not found.", some SDKs ResourceNotFound: docs/aws-assumptions.md)."""
    from botocore.exceptions import ClientError

    try:
        job: dict[str, Any] = sagemaker.describe_training_job(TrainingJobName=name)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in ("ValidationException", "ResourceNotFound"):
            return None
        raise
    return job


class Follower:
    """Polls one execution until it ends, printing job status to `err` and log lines to `out`."""

    def __init__(self, clients: Clients, target: Target, execution_arn: str, *, interval: float,
                 out: TextIO | None = None, err: TextIO | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.clients, self.target, self.arn = clients, target, execution_arn
        self.interval, self.sleep = interval, sleep
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.jobs: dict[str, JobWatch] = {}
        self.failures_seen: set[int] = set()
        self.tail = LogTail(clients, hold=max(HOLD_SECONDS, interval))

    def note(self, text: str) -> None:
        """A line for standard error: job text in it (a FailureReason, a cause) is escaped."""
        print(printable(text), file=self.err, flush=True)

    def poll(self, *, complete: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Print what is new. Returns the execution as it was first read, and its history.

        Once the execution has ended (or with `complete`), every line read is printed: no more can come.
        """
        described = describe(self.clients, self.target, self.arn)
        events = history(self.clients, self.target, self.arn)
        ended = complete or described["status"] != RUNNING
        for event in events:
            failure = create_failure(event)
            if failure is not None and event["id"] not in self.failures_seen:
                self.failures_seen.add(event["id"])
                self.note(f"CreateTrainingJob failed: {failure[:500]}")
            launch = launch_of(event)
            if launch is not None and launch.job_name not in self.jobs:
                self.jobs[launch.job_name] = JobWatch(launch, len(self.jobs) + 1)
        with aws_errors(self.target, "reading the training jobs and their logs"):
            for watch in self.jobs.values():  # in launch order: a job's news, then its relaunch's
                self._report(watch, ended)
        return described, events

    def run(self) -> int:
        """Follow until the execution ends; 0 when it succeeded, 1 otherwise (with the reason)."""
        while True:
            described, events = self.poll()
            if described["status"] != RUNNING:
                return self.outcome(described, events)
            self.sleep(self.interval)

    def _report(self, watch: JobWatch, ended: bool) -> None:
        """One job's news: its launch, status transitions, log lines, and last its final status."""
        name = watch.launch.job_name
        if not watch.announced:
            watch.announced = True
            what = "job" if watch.attempt == 1 else f"relaunch {watch.attempt - 1}: job"
            self.note(f"{what} {name} on {watch.launch.resources}")
            self.note(f"  {self.target.job_link(name)}")
            self.note(f"  logs: {self.target.logs_link(name)}")
        if watch.final:  # its logs may still trickle in until the run ends
            self._print_logs(watch, complete=True)
            return
        job = self._describe(watch)
        end = ""  # the job's end, printed after its last log lines
        if job is not None:
            for transition in job.get("SecondaryStatusTransitions") or []:
                key = (str(transition.get("Status", "")), str(transition.get("StatusMessage", "")))
                if key not in watch.transitions:
                    watch.transitions.add(key)
                    self.note(f"{_clock(transition.get('StartTime'))} {name}: {key[0]} - {key[1]}")
            if job.get("TrainingJobStatus", "") != watch.status:
                watch.status = job.get("TrainingJobStatus", "")
                if watch.final:
                    end = _status_line(name, job)
                else:
                    self.note(_status_line(name, job))
        if watch.status:  # the job exists: its logs
            self._print_logs(watch, complete=ended or watch.final)
        if end:
            self.note(end)

    def _describe(self, watch: JobWatch) -> dict[str, Any] | None:
        """DescribeTrainingJob; None while the job does not exist yet (scheduled, or refused: the history says)."""
        job = describe_job(self.clients.sagemaker, watch.launch.job_name)
        if job is not None:
            watch.marks = MetricMarks.of(job, watch.marks)
        return job

    def flush(self) -> None:
        """Print the lines read but held back (when following stops early): nothing read is lost."""
        for watch in self.jobs.values():
            self._emit(watch, sorted(line for line, _ in self.tail.held.pop(watch.launch.job_name, [])))

    def _print_logs(self, watch: JobWatch, complete: bool) -> None:
        self._emit(watch, self.tail.poll(watch.launch.job_name, watch.launch.instance_count, complete))

    def _emit(self, watch: JobWatch, lines: list[LogLine]) -> None:
        for line in lines:
            parts = printable(line.message).split("\n")
            parts[-1] += printable(watch.marks.mark(line.message), keep_layout=False)
            for part in parts:
                print(f"[{line.host}] {part}", file=self.out)
        self.out.flush()

    def outcome(self, described: dict[str, Any], events: list[dict[str, Any]]) -> int:
        status = described["status"]
        name = described.get("name", self.arn)
        if status == "SUCCEEDED":
            run = summary(described, events) or RunSummary()
            estimate = run.cost_usd
            price = (f", estimated {money(estimate, grouped=False)} at {catalog.price_source(self.target.env.region)}"
                     if estimate is not None else "")
            self.note(f"run {name} SUCCEEDED: job {run.job_name or '?'} {run.status or ''} after "
                      f"{'?' if run.attempts is None else run.attempts} attempt(s){price}")
            if run.model_artifacts:
                self.note(f"model: {run.model_artifacts}")
            return 0
        reason = ": ".join(p for p in (described.get("error"), described.get("cause")) if p)
        self.note(f"run {name} {status}" + (f": {reason}" if reason else ""))
        return 1


def follow(clients: Clients, target: Target, execution_arn: str, interval: float) -> int:
    """Follow a run; on Ctrl-C ask whether to stop it (a terminal) or leave it running (anything else)."""
    follower = Follower(clients, target, execution_arn, interval=interval)
    try:
        return follower.run()
    except KeyboardInterrupt:
        follower.flush()
        return interrupted(clients, target, execution_arn)


def interrupted(clients: Clients, target: Target, execution_arn: str) -> int:
    run = target.run_argument(execution_arn)
    stop_hint = f"stop it with `trainctl stop {run}`"
    again = f"follow it again with `trainctl logs {run} --follow`"
    print(file=sys.stderr)
    if not sys.stdin or not sys.stdin.isatty():
        print(f"stopped following; the run goes on: {stop_hint}, {again}", file=sys.stderr)
        return 130
    print("Stop the run too? Its training job is stopped with it. [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline().strip().lower()
    except (KeyboardInterrupt, EOFError):
        answer = ""
    if answer not in ("y", "yes"):
        print(f"left running: {stop_hint}, {again}", file=sys.stderr)
        return 130
    stop_execution(clients, target, execution_arn)
    print(f"stopping {execution_arn}", file=sys.stderr)
    return 130
