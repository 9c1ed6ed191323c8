"""The smoke table's rows, one per check, in the order a run goes through the platform: each from the facts the run
left (facts.py), passing or failing with what was seen or what to fix."""

from __future__ import annotations

import json
from typing import Any

from compiler.compilation.request import TAG_EXECUTION
from compiler.facts.run_metrics import JOBS_NAMESPACE
from compiler.inputs.environments import TRAINING_LOG_GROUP
from trainctl.common.money import money
from trainctl.common.verdicts import FAIL, PASS, SKIP, Result
from trainctl.run.summary import summary
from trainctl.smoke.facts import METRIC, HostReport, Observed


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
                    "auto-import of its dataset smoke (cdk.json datasets, /datasets/smoke)")
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
                      f"{TRAINING_LOG_GROUP}")
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
    return Result("cost", PASS, f"{money(total, grouped=False, places=4)}: {sum(known)} billable s over {len(o.jobs)} "
                  f"job(s) on {resources} at {money(float(rate), grouped=False, places=None)}/h (the catalog list "
                  f"price the state machine carries){unknown}")


def rows(o: Observed) -> list[Result]:
    """The table, in the order a run goes through the platform."""
    return [_run_row(o),
            _host_row(o, "image-and-code", "started", "the image started and ran the downloaded code",
                      "read the job's FailureReason; the image's repository and the code bundle must be readable"),
            _s3_row(o), _fsx_row(o), _rendezvous_row(o), _efa_row(o), _relaunch_row(o), _checkpoint_row(o),
            _metrics_row(o), _logs_row(o), _notification_row(o), _watchdog_row(o), _search_row(o), _cost_row(o)]
