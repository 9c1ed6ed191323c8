"""`trainctl smoke --env ENV [--gpu]`: the deployed platform proves itself with one tiny run.

With credentials for the environment's account, after `npx cdk deploy`: writes a seed with a fresh nonce to the
smoke workload's input prefix in the data bucket (the bucket is read from the deployed state machine's own
request), starts the workload `platform-smoke` (`--gpu`: `platform-smoke-gpu`) through its state machine with `{}`,
follows it on standard error until it ends or `--timeout` (then stops it), and prints one Markdown table on standard
output, as `trainctl preflight` does: one row per check, pass/fail/skip with what was seen or what to do, the run's
cost last. Exit status 1 when any check fails, 0 otherwise; missing credentials, an undeployed workload or a refused
seed are one line and exit 1, never a traceback.

What each row reads (the job's own checks come from `training/smoke/smoke.py`, one `smoke_<check>=0|1` line per
host, read back with the reader `trainctl logs` uses):

| Row | Passes when |
| --- | --- |
| run | the execution SUCCEEDED |
| image-and-code | every host of the last job ran the script (`smoke_started=1`): the image was pulled, the code downloaded |
| s3-input | every host read this run's nonce from the channel `smoke` (S3 through the VPC endpoint) |
| fsx-mount | every host read the seed through the FSx channel (skipped where the environment has no file system) |
| rendezvous | every host joined one process group across the job security group and all_reduce added up |
| efa | (`--gpu`) every host shows an EFA device |
| relaunch | attempt 0 failed with the (simulated) `CapacityError` and the state machine relaunched it as attempt 1 |
| checkpoint-resume | every host of attempt 0 wrote a checkpoint and every host of the relaunch read it back |
| metrics | CloudWatch has the metric `smoke:passed` of every host of the last job (SageMaker publishes metric_definitions) |
| logs | CloudWatch Logs gave lines of every host of every job |
| notification | the execution's publish to the runs topic succeeded |
| watchdog | the stall watchdog's FilterLogEvents question was accepted and found a job's `smoke_started=` line |
| job-search | SageMaker Search by the tag `training-platform:execution-arn` (a key holding `:`) finds every job of the run: |
|  | what the job reaper relies on to stop a stopped run's jobs |
| cost | (information) billable seconds of every job x the list price per hour the state machine carries |
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import re
import secrets
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from compiler.compilation.request import TAG_EXECUTION
from compiler.errors import SpecError
from compiler.facts.run_metrics import JOBS_NAMESPACE
from compiler.spec import load_workload
from compiler.state_machine.asl import json_objects
from trainctl.aws import Clients, aws_errors
from trainctl.common import problem, project_of
from trainctl.follow import Follower, LogLine, LogTail, interrupted, stop_execution
from trainctl.history import Launch, history, launches
from trainctl.preflight import table
from trainctl.preflight_checks.base import FAIL, PASS, SKIP, Result
from trainctl.run_lookup import RUNNING, describe
from trainctl.run_summary import summary
from trainctl.target import Target, environment

WORKLOAD, GPU_WORKLOAD = "platform-smoke", "platform-smoke-gpu"
CHANNEL = "smoke"  # the input channel that reads the seed from the data bucket
SEED_FILE = "seed.json"  # the file smoke.py reads in each channel
METRIC = "smoke:passed"  # the metric definition every host's last line feeds
_CHECK = re.compile(r"\bsmoke_(?P<name>[a-z0-9_]+)=(?P<value>[0-9.]+)")
_FIELD = re.compile(r"\b(?P<key>nonce|written_by)=(?P<value>\S+)")


class SmokeClients(Clients):
    """The run's clients, and the two more services the smoke test reads or writes."""

    @functools.cached_property
    def s3(self) -> Any:
        return self._client("s3")

    @functools.cached_property
    def cloudwatch(self) -> Any:
        return self._client("cloudwatch")


# ------------------------------------------------------------------------------------------------ what one job said


@dataclass
class HostReport:
    """One host's smoke lines: each check's value, and the fields printed with it."""

    checks: dict[str, float] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)  # "<check>:<field>" -> value, e.g. "s3_read:nonce"
    lines: int = 0


@dataclass
class JobFacts:
    """One training job of the run: its launch, DescribeTrainingJob (None: not found) and its hosts' lines."""

    launch: Launch
    description: dict[str, Any] | None
    hosts: dict[str, HostReport] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return str((self.description or {}).get("TrainingJobStatus", "unknown"))

    @property
    def failure(self) -> str:
        return str((self.description or {}).get("FailureReason", ""))

    @property
    def host_names(self) -> list[str]:
        """The hosts the job should have: algo-1 .. algo-<count> (SageMaker's names)."""
        return [f"algo-{n}" for n in range(1, self.launch.instance_count + 1)]

    def read(self, lines: Iterable[LogLine]) -> None:
        for line in lines:
            report = self.hosts.setdefault(line.host, HostReport())
            report.lines += 1
            names = [m["name"] for m in _CHECK.finditer(line.message)]
            for match in _CHECK.finditer(line.message):
                report.checks[match["name"]] = float(match["value"])
            for match in _FIELD.finditer(line.message):  # a field belongs to the check on its line
                for name in names:
                    report.fields[f"{name}:{match['key']}"] = match["value"]

    def field_of(self, host: str, check: str, key: str) -> str | None:
        return self.hosts.get(host, HostReport()).fields.get(f"{check}:{key}")

    def every_host(self, check: str) -> tuple[bool, list[str]]:
        """Whether every host reported `check` = 1, and the hosts that did not (with why)."""
        missing = []
        for host in self.host_names:
            value = self.hosts.get(host, HostReport()).checks.get(check)
            if value != 1:
                missing.append(f"{host} ({'no line' if value is None else 'failed'})")
        return not missing, missing


@dataclass
class Observed:
    """Everything the table is made of, gathered once the run ended."""

    described: dict[str, Any]
    events: list[dict[str, Any]]
    jobs: list[JobFacts]
    nonce: str
    has_fsx: bool
    gpu: bool
    metric_hosts: set[str] = field(default_factory=set)  # Host dimensions with a smoke:passed datapoint
    timed_out: bool = False
    read_errors: dict[str, str] = field(default_factory=dict)  # "logs" / "metrics": why they could not be read
    searched: set[str] = field(default_factory=set)  # the jobs SageMaker Search finds by the run's execution tag

    @property
    def last(self) -> JobFacts | None:
        return self.jobs[-1] if self.jobs else None


# ------------------------------------------------------------------------------------------------ the rows


def _run_row(o: Observed) -> Result:
    status = o.described.get("status", "?")
    if status == "SUCCEEDED":
        return Result("run", PASS, f"{o.described.get('name', '')} SUCCEEDED after {len(o.jobs)} job(s)")
    reason = ": ".join(str(p) for p in (o.described.get("error"), o.described.get("cause")) if p)
    timeout = " (stopped by trainctl smoke after --timeout)" if o.timed_out else ""
    return Result("run", FAIL, f"{status}{timeout}" + (f": {reason[:400]}" if reason else ""))


def _host_row(o: Observed, label: str, check: str, good: str, fix: str) -> Result:
    """A row that passes when every host of the last job reported `check` = 1."""
    job = o.last
    if job is None:
        return Result(label, FAIL, "no training job was launched; see the run row")
    ok, missing = job.every_host(check)
    if ok:
        return Result(label, PASS, f"{good} (every host of {job.launch.job_name})")
    why = f"; the job {job.status}: {job.failure[:200]}" if job.failure else ""
    return Result(label, FAIL, f"{', '.join(missing)} of {job.launch.job_name}{why}; {fix}")


def _s3_row(o: Observed) -> Result:
    row = _host_row(o, "s3-input", "s3_read", "read this run's seed from the data bucket through the S3 endpoint",
                    "check the S3 gateway endpoint's policy and the job role's read on the data bucket's datasets/smoke/ "
                    "prefix")
    job = o.last
    if row.status != PASS or job is None:
        return row
    stale = [h for h in job.host_names if job.field_of(h, "s3_read", "nonce") != o.nonce]
    if stale:
        return Result("s3-input", FAIL, f"{', '.join(stale)} read a seed that is not this run's (expected nonce "
                      f"{o.nonce}): the channel did not read the object just written")
    return row


def _fsx_row(o: Observed) -> Result:
    if not o.has_fsx:
        return Result("fsx-mount", SKIP, "the environment has no file system (cdk.json fsx)")
    job = o.last
    if job is not None and not any("fsx_read" in h.checks for h in job.hosts.values()) and job.every_host("started")[0]:
        return Result("fsx-mount", FAIL, "the job has no fsx channel although the environment has a file system; add "
                      "the channel for this environment in the smoke spec (workloads/platform-smoke*.yaml)")
    row = _host_row(o, "fsx-mount", "fsx_read", "read the seed on FSx for Lustre through the link to the data bucket",
                    "check the file system's security group admits the job's (Lustre ports 988, 1018-1023) and the "
                    "auto-import of its dataset smoke (cdk.json fsx.datasets, /datasets/smoke)")
    if row.status == PASS and job is not None:
        stale = [h for h in job.host_names if job.field_of(h, "fsx_read", "nonce") != o.nonce]
        if stale:  # the mount works; the import of the new seed from the bucket had not caught up yet
            return Result(row.check, PASS, f"{row.detail}; {', '.join(stale)} saw an earlier run's seed (the file "
                          "system imports new objects from the bucket with a delay)")
    return row


def _rendezvous_row(o: Observed) -> Result:
    row = _host_row(o, "rendezvous", "rendezvous", "one process group, all_reduce added up",
                    "the job security group must admit all traffic from itself (port 29500 here)")
    job = o.last
    if row.status == PASS and job is not None:
        times = [job.hosts[h].checks.get("rendezvous_ms") for h in job.host_names]
        slowest = max((t for t in times if t is not None), default=None)
        if slowest is not None:
            return Result(row.check, PASS, f"{row.detail}; slowest host {slowest:.0f} ms")
    return row


def _efa_row(o: Observed) -> Result:
    if not o.gpu:
        return Result("efa", SKIP, "CPU instances have no EFA; `trainctl smoke --gpu` checks it")
    return _host_row(o, "efa", "efa", "an EFA device on every host",
                     "run the GPU smoke on an EFA-capable type (catalog efa_interfaces > 0)")


def _relaunch_row(o: Observed) -> Result:
    if not o.jobs:
        return Result("relaunch", FAIL, "no training job was launched; see the run row")
    first = o.jobs[0]
    if len(o.jobs) < 2:
        return Result("relaunch", FAIL, f"one job only ({first.launch.job_name}, {first.status}): attempt 0 did not "
                      "ask for a relaunch (hyperparameter force_relaunch) or its failure was not read as CapacityError")
    if "CapacityError" not in first.failure:
        return Result("relaunch", FAIL, f"{first.launch.job_name} failed without CapacityError: {first.failure[:300]}")
    return Result("relaunch", PASS, f"{first.launch.job_name} asked for it; the state machine relaunched "
                  f"{o.jobs[1].launch.job_name}")


def _checkpoint_row(o: Observed) -> Result:
    if len(o.jobs) < 2:
        return Result("checkpoint-resume", FAIL, "no relaunch to resume (see relaunch)")
    first, last = o.jobs[0], o.jobs[-1]
    wrote, missing = first.every_host("checkpoint_written")
    if not wrote:
        return Result("checkpoint-resume", FAIL, f"{first.launch.job_name} wrote no checkpoint on {', '.join(missing)}")
    resumed, missing = last.every_host("checkpoint_resumed")
    if not resumed:
        return Result("checkpoint-resume", FAIL, f"{last.launch.job_name} found no checkpoint on {', '.join(missing)}: "
                      "the run's checkpoint prefix did not carry it over (CheckpointConfig, the checkpoint bucket's "
                      "policy and key)")
    foreign = [h for h in last.host_names
               if last.field_of(h, "checkpoint_resumed", "written_by") != first.launch.job_name]
    if foreign:
        return Result("checkpoint-resume", FAIL, f"{', '.join(foreign)} of {last.launch.job_name} read a checkpoint "
                      f"not written by {first.launch.job_name}")
    return Result("checkpoint-resume", PASS, f"{first.launch.job_name} wrote it, {last.launch.job_name} read it back "
                  "from the run's checkpoint prefix")


def _metrics_row(o: Observed) -> Result:
    job = o.last
    if job is None:
        return Result("metrics", FAIL, "no training job was launched; see the run row")
    if "metrics" in o.read_errors:
        return Result("metrics", FAIL, f"{o.read_errors['metrics']}; the credentials need cloudwatch:GetMetricData")
    missing = [h for h in job.host_names if f"{job.launch.job_name}/{h}" not in o.metric_hosts]
    if missing:
        return Result("metrics", FAIL, f"CloudWatch has no {METRIC} for {', '.join(missing)} of {job.launch.job_name} "
                      f"in {JOBS_NAMESPACE}: check the spec's metric_definitions and the CloudWatch metrics endpoint")
    return Result("metrics", PASS, f"{METRIC} of every host in CloudWatch ({JOBS_NAMESPACE}, dimension Host)")


def _logs_row(o: Observed) -> Result:
    if not o.jobs:
        return Result("logs", FAIL, "no training job was launched; see the run row")
    if "logs" in o.read_errors:
        return Result("logs", FAIL, f"{o.read_errors['logs']}; the credentials need logs:DescribeLogStreams and "
                      "logs:GetLogEvents on /aws/sagemaker/TrainingJobs")
    silent = [f"{job.launch.job_name}/{h}" for job in o.jobs for h in job.host_names
              if job.hosts.get(h, HostReport()).lines == 0]
    if silent:
        return Result("logs", FAIL, f"no log lines from {', '.join(silent)} in /aws/sagemaker/TrainingJobs: check the "
                      "CloudWatch Logs endpoint and the job role's logs:PutLogEvents")
    counts = sum(h.lines for job in o.jobs for h in job.hosts.values())
    return Result("logs", PASS, f"{counts} lines from every host of {len(o.jobs)} job(s), as `trainctl logs` reads them")


def _notification_row(o: Observed) -> Result:
    published = [e for e in o.events if e.get("type") == "TaskSucceeded"
                 and (e.get("taskSucceededEventDetails") or {}).get("resourceType") == "sns"]
    if published:
        return Result("notification", PASS, "the run's result was published to the runs topic")
    failed = [e.get("taskFailedEventDetails") or {} for e in o.events if e.get("type") == "TaskFailed"
              and (e.get("taskFailedEventDetails") or {}).get("resourceType") == "sns"]
    if failed:
        detail = failed[-1]
        return Result("notification", FAIL, f"publishing to the runs topic failed: {detail.get('error', '')}: "
                      f"{str(detail.get('cause', ''))[:300]}; check the topic's key policy and the state machine role")
    return Result("notification", FAIL, "the run never published its result (it ended before the notification)")


def _filter_tasks(o: Observed) -> list[dict[str, Any]]:
    """The stall watchdog's FilterLogEvents tasks of the run: each one's end (succeeded or failed) in the history."""
    ends = []
    for event in o.events:
        details = event.get("taskSucceededEventDetails") or event.get("taskFailedEventDetails") or {}
        if details.get("resource") == "filterLogEvents":
            ends.append({"type": event.get("type"), **details})
    return ends


def _watchdog_row(o: Observed) -> Result:
    ends = _filter_tasks(o)
    if not ends:
        return Result("watchdog", FAIL, "the run never asked for progress (no second look at a training job): the "
                      "smoke spec's stall_watchdog and settle_seconds keep each job training for two looks")
    failed = [e for e in ends if e["type"] == "TaskFailed"]
    found = [e for e in ends if e["type"] == "TaskSucceeded" and json.loads(e.get("output") or "{}").get("Events")]
    if found:
        return Result("watchdog", PASS, f"FilterLogEvents found a smoke:started line in {len(found)} of {len(ends)} "
                      "question(s): the job's streams, the filter pattern and the window's start are as assumed")
    if failed:
        last = failed[-1]
        return Result("watchdog", FAIL, f"FilterLogEvents failed: {last.get('error', '')}: "
                      f"{str(last.get('cause', ''))[:300]}; the state machine role needs logs:FilterLogEvents on "
                      "/aws/sagemaker/TrainingJobs")
    return Result("watchdog", FAIL, f"{len(ends)} question(s) found no smoke_started= line: the stream names "
                  "(<job>/algo-<n>-<epoch>), the filter pattern or the window's start (epoch milliseconds from the "
                  "state's entry time) differ from what the platform assumes (docs/aws-assumptions.md, stall watchdog)")


def _search_row(o: Observed) -> Result:
    if not o.jobs:
        return Result("job-search", FAIL, "no training job was launched; see the run row")
    if "search" in o.read_errors:
        return Result("job-search", FAIL, f"{o.read_errors['search']}; the credentials need sagemaker:Search")
    names = [job.launch.job_name for job in o.jobs]
    missing = [n for n in names if n not in o.searched]
    if missing:
        return Result("job-search", FAIL, f"Search by the tag {TAG_EXECUTION} missed {', '.join(missing)}: the job "
                      "reaper would not find them to stop them after a console Stop (docs/job-reaper.md)")
    return Result("job-search", PASS, f"Search by the tag {TAG_EXECUTION} found every job of the run, as the job "
                  "reaper searches")


def _cost_row(o: Observed) -> Result:
    run = summary(o.described, o.events)  # the run's summary, read by its documented field names
    rate = getattr(run, "cost_per_hour_usd", None)
    seconds = [(j.description or {}).get("BillableTimeInSeconds") for j in o.jobs]
    known = [int(s) for s in seconds if isinstance(s, int | float)]
    resources = o.jobs[-1].launch.resources if o.jobs else "-"
    if not isinstance(rate, int | float):
        return Result("cost", SKIP, f"{sum(known)} billable s on {resources}; no list price for the type in the "
                      "catalog, so no estimate")
    total = float(rate) * sum(known) / 3600
    unknown = f", {len(seconds) - len(known)} job(s) without billable time" if len(known) < len(seconds) else ""
    return Result("cost", PASS, f"${total:.4f}: {sum(known)} billable s over {len(o.jobs)} job(s) on {resources} at "
                  f"${float(rate):g}/h (the catalog list price the state machine carries){unknown}")


def rows(o: Observed) -> list[Result]:
    """The table, in the order a run goes through the platform."""
    return [_run_row(o),
            _host_row(o, "image-and-code", "started", "the image started and ran the downloaded code",
                      "read the job's FailureReason; the image's repository and the code bundle must be readable"),
            _s3_row(o), _fsx_row(o), _rendezvous_row(o), _efa_row(o), _relaunch_row(o), _checkpoint_row(o),
            _metrics_row(o), _logs_row(o), _notification_row(o), _watchdog_row(o), _search_row(o), _cost_row(o)]


# ------------------------------------------------------------------------------------------------ talking to AWS


def channel_uri(clients: SmokeClients, target: Target) -> str:
    """The S3 URI of the channel `smoke`, from the deployed definition (its deploy-time values filled in)."""
    with aws_errors(target, "reading the deployed state machine"):
        definition = clients.sfn.describe_state_machine(stateMachineArn=target.machine_arn)["definition"]
    for node in json_objects(json.loads(definition)):
        if node.get("ChannelName") == CHANNEL:
            uri = ((node.get("DataSource") or {}).get("S3DataSource") or {}).get("S3Uri")
            if isinstance(uri, str) and uri.startswith("s3://"):
                return uri
    raise problem(f"the deployed {target.machine_name} has no S3 channel '{CHANNEL}'; deploy the current "
                  f"workloads/{target.workload}.yaml (`npx cdk deploy '{target.env.name}/*'`)")


def write_seed(clients: SmokeClients, target: Target, uri: str, nonce: str) -> None:
    """The object the job reads through S3 and FSx: this run's nonce, so an old seed cannot pass."""
    from botocore.exceptions import BotoCoreError, ClientError

    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    key = f"{prefix.rstrip('/')}/{SEED_FILE}".lstrip("/")
    body = json.dumps({"nonce": nonce, "written_at": datetime.now(UTC).isoformat()})
    try:
        clients.s3.put_object(Bucket=bucket, Key=key, Body=body.encode(), ContentType="application/json")
    except (BotoCoreError, ClientError) as error:
        raise problem(f"could not write the seed s3://{bucket}/{key}: {error}; the credentials need s3:PutObject "
                      f"there and kms:GenerateDataKey on environment {target.env.name}'s key") from None


def run_name() -> str:
    return f"smoke-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def wait(follower: Follower, timeout: float, sleep: Callable[[float], None],
         clock: Callable[[], float] = time.monotonic) -> bool:
    """Follow the run until it ends; False when `timeout` seconds passed first (the run is then stopped)."""
    deadline = clock() + timeout
    while True:
        described, _ = follower.poll()
        if described["status"] != RUNNING:
            return True
        if clock() >= deadline:
            stop_execution(follower.clients, follower.target, follower.arn)
            for _ in range(30):  # Step Functions ends a stopped execution at once; its job stops with it
                if follower.poll()[0]["status"] != RUNNING:
                    break
                sleep(2)
            return False
        sleep(follower.interval)


def metric_hosts(clients: SmokeClients, target: Target, job: JobFacts, start: datetime, patience: float,
                 sleep: Callable[[float], None], clock: Callable[[], float] = time.monotonic) -> set[str]:
    """The Host dimensions of the last job with a `smoke:passed` datapoint, waiting up to `patience` seconds."""
    hosts = [f"{job.launch.job_name}/{h}" for h in job.host_names]
    queries = [{"Id": f"h{n}", "MetricStat": {"Metric": {"Namespace": JOBS_NAMESPACE, "MetricName": METRIC,
                                                          "Dimensions": [{"Name": "Host", "Value": host}]},
                                               "Period": 60, "Stat": "Maximum"}}
               for n, host in enumerate(hosts)]
    deadline = clock() + patience
    while True:
        with aws_errors(target, "reading the job's metrics from CloudWatch"):
            answer = clients.cloudwatch.get_metric_data(
                MetricDataQueries=queries, StartTime=start - timedelta(minutes=5),
                EndTime=datetime.now(UTC) + timedelta(minutes=5))
        found = {hosts[int(r["Id"][1:])] for r in answer.get("MetricDataResults", []) if r.get("Values")}
        if len(found) == len(hosts) or clock() >= deadline:
            return found
        sleep(30)  # SageMaker publishes metrics about once a minute; they may trail the job's end


def observe(clients: SmokeClients, target: Target, arn: str, nonce: str, gpu: bool, patience: float,
            sleep: Callable[[float], None]) -> Observed:
    """Read everything the rows need, once the run has ended."""
    described = describe(clients, target, arn)
    events = history(clients, target, arn)
    with aws_errors(target, "reading the training jobs"):
        jobs = [JobFacts(launch, _describe_job(clients, launch.job_name)) for launch in launches(events)]
    observed = Observed(described, events, jobs, nonce, target.env.has_fsx, gpu)
    tail = LogTail(clients, hold=0)
    try:  # a refused read is that row's failure: the rest of the table still shows
        for job in jobs:
            with aws_errors(target, "reading the jobs' logs"):
                job.read(tail.poll(job.launch.job_name, job.launch.instance_count, complete=True))
    except SpecError as error:
        observed.read_errors["logs"] = str(error)
    if jobs:
        try:
            observed.metric_hosts = metric_hosts(clients, target, jobs[-1], described["startDate"], patience, sleep)
        except SpecError as error:
            observed.read_errors["metrics"] = str(error)
        try:
            observed.searched = searched_jobs(clients, target, arn)
        except SpecError as error:
            observed.read_errors["search"] = str(error)
    return observed


def searched_jobs(clients: SmokeClients, target: Target, arn: str) -> set[str]:
    """The training jobs SageMaker Search finds tagged with the run's execution ARN, as the job reaper asks."""
    found: set[str] = set()
    request: dict[str, Any] = {"Resource": "TrainingJob", "MaxResults": 100, "SearchExpression": {
        "Filters": [{"Name": f"Tags.{TAG_EXECUTION}", "Operator": "Equals", "Value": arn}]}}
    with aws_errors(target, "searching the run's training jobs by its tag"):
        while True:
            page = clients.sagemaker.search(**request)
            found |= {r["TrainingJob"]["TrainingJobName"] for r in page.get("Results", []) if "TrainingJob" in r}
            if not page.get("NextToken"):
                return found
            request["NextToken"] = page["NextToken"]


def _describe_job(clients: SmokeClients, name: str) -> dict[str, Any] | None:
    from botocore.exceptions import ClientError

    try:
        job: dict[str, Any] = clients.sagemaker.describe_training_job(TrainingJobName=name)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in ("ValidationException", "ResourceNotFound"):
            return None
        raise
    return job


# ------------------------------------------------------------------------------------------------ the command


def smoke(args: argparse.Namespace, sleep: Callable[[float], None] = time.sleep) -> int:
    finite = all(math.isfinite(v) for v in (args.timeout, args.interval, args.metrics_wait))  # nan passes < and <=
    if not finite or args.timeout <= 0 or args.interval < 0 or args.metrics_wait < 0:
        raise problem("--timeout must be above 0 seconds, --interval and --metrics-wait at least 0 (finite numbers)")
    project = project_of(args)
    env = environment(project, args.env)
    workload = load_workload(project, GPU_WORKLOAD if args.gpu else WORKLOAD, env)
    target = Target(env, workload.name)
    clients = SmokeClients(env, args.profile)
    uri = channel_uri(clients, target)
    name = run_name()
    write_seed(clients, target, uri, name)
    with aws_errors(target, "starting the smoke run"):
        arn = clients.sfn.start_execution(stateMachineArn=target.machine_arn, name=name, input="{}")["executionArn"]
    print(f"started {name}: {workload.name} in {env.name} (seed {uri}{SEED_FILE}); waiting up to {args.timeout:g} s",
          file=sys.stderr)
    print(f"  {target.execution_link(arn)}", file=sys.stderr, flush=True)
    follower = Follower(clients, target, arn, interval=args.interval, out=sys.stderr, sleep=sleep)
    try:
        ended = wait(follower, args.timeout, sleep)
    except KeyboardInterrupt:  # as `start --follow`: ask whether to stop the run (a terminal) or leave it going
        follower.flush()
        return interrupted(clients, target, arn)
    observed = observe(clients, target, arn, name, args.gpu, args.metrics_wait, sleep)
    observed.timed_out = not ended
    results = rows(observed)
    print(table(results))
    counts = ", ".join(f"{sum(1 for r in results if r.status == s)} {s}" for s in (PASS, FAIL, SKIP))
    print(f"smoke {env.name}: {counts}; logs again: `trainctl logs {target.run_argument(arn)}`", file=sys.stderr)
    return 1 if any(r.status == FAIL for r in results) else 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("smoke", help="after a deploy: run the platform's smoke workload and check the whole path",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.add_argument("--gpu", action="store_true", help=f"run {GPU_WORKLOAD} (2 GPU instances with EFA) instead of "
                   f"{WORKLOAD} (2 CPU instances)")
    p.add_argument("--timeout", type=float, default=3600, metavar="SECONDS",
                   help="stop the run and fail after this long (default 3600)")
    p.add_argument("--interval", type=float, default=15, metavar="SECONDS", help="seconds between polls (default 15)")
    p.add_argument("--metrics-wait", type=float, default=300, metavar="SECONDS",
                   help="how long to wait for the job's metrics in CloudWatch after the run (default 300)")
    p.add_argument("--profile", default=None, help="AWS profile (default: the usual boto3 credential chain)")
    p.set_defaults(func=smoke)
