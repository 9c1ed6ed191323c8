"""`trainctl smoke --env ENV` (issue 22): the smoke workload's real state machine in moto, every row's pass and fail.

The end-to-end tests run `trainctl smoke` against platform-smoke's definition as synth builds it (moto's Step
Functions interpreter, the state-machine tests' fake SageMaker), with each job's log lines written in the format
training/smoke/smoke.py prints (its own `Report.check` makes them) and its metrics put where SageMaker puts them.
Every other fail path is a table built from gathered facts (`smoke.rows`), one test per row. Expected texts are
written out here, never taken from the code under test.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest

from compiler import state_machine as sm
from compiler.errors import SpecError
from compiler.inputs.project import Project
from compiler.state_machine.asl import json_objects
from tests.cli.cloud import CloudSageMaker
from tests.cli.conftest import DEV
from tests.compiler.state_machine.harness import Deployed, type_requests
from tests.compiler.state_machine.sagemaker_sync import completes, fails, installed
from tests.project import ROOT, loaded, project_copy
from trainctl.common.verdicts import FAIL, PASS, SKIP, Result
from trainctl.run.follow import LogLine
from trainctl.run.history import Launch
from trainctl.smoke import command as smoke

SCRIPT = ROOT / "training" / "smoke" / "smoke.py"
RELAUNCH = ("AlgorithmError: CapacityError (simulated by the platform smoke test: attempt 0 asks the state machine "
            "for a relaunch, to prove the checkpoint resume; no capacity was missing)")
HOSTS = ("algo-1", "algo-2")


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("smoke_job_for_cli", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


JOB_SCRIPT = _script()


def line(check: str, ok: bool, detail: str = "") -> str:
    """A check's line exactly as the job prints it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        JOB_SCRIPT.Report().check(check, ok, detail)
    return out.getvalue().rstrip("\n")


def good_lines(job: str, attempt: int, nonce: str, first_job: str) -> list[str]:
    """One host's lines of a healthy attempt: 0 writes the checkpoint and asks for the relaunch, 1 resumes."""
    lines = [f"smoke: host=algo-n job={job} attempt={attempt}", line("started", True, "python=3.12.8"),
             line("s3_read", True, f"nonce={nonce} path=/opt/ml/input/data/smoke/seed.json"),
             line("fsx_read", True, f"nonce={nonce} path=/opt/ml/input/data/fsx/seed.json")]
    if attempt == 0:
        lines.append(line("checkpoint_written", True, f"written_by={job} path=/opt/ml/checkpoints/smoke-algo-n.json"))
    else:
        lines.append(line("checkpoint_resumed", True, f"written_by={first_job} path=/opt/ml/checkpoints/x.json"))
    lines += ["smoke_rendezvous_ms=41.5", line("rendezvous", True, "backend=gloo world=2 sum=3 expected=3")]
    lines.append("smoke: CapacityError (simulated ...)" if attempt == 0 else "smoke_passed=1")
    return lines


Scenario = Callable[[str, int, str], dict[str, list[str]]]  # (job, attempt, first job) -> per host, its lines


@dataclass
class SmokeSageMaker(CloudSageMaker):
    """The fake SageMaker, with each job's hosts logging what `scenario` says and SageMaker's metrics put."""

    scenario: Scenario | None = None
    metrics: bool = True
    first_job: str = ""
    seen: list[str] = field(default_factory=list)

    def write_logs(self, job: str, lines: dict[str, list[tuple[int, str]]]) -> None:
        attempt = int(job.rsplit("-", 1)[1])
        self.first_job = self.first_job or job
        self.seen.append(job)
        assert self.scenario is not None
        by_host = self.scenario(job, attempt, self.first_job)
        super().write_logs(job, {host: [(n * 10 + int(host[-1]), text) for n, text in enumerate(texts)]
                                 for host, texts in by_host.items()})
        if self.metrics and attempt > 0:
            cloudwatch = boto3.client("cloudwatch", region_name=self.region)
            for host in by_host:
                cloudwatch.put_metric_data(Namespace="/aws/sagemaker/TrainingJobs", MetricData=[{
                    "MetricName": "smoke:passed", "Dimensions": [{"Name": "Host", "Value": f"{job}/{host}"}],
                    "Value": 1.0, "Timestamp": datetime.now(UTC)}])


def healthy(nonce: str) -> Scenario:
    return lambda job, attempt, first: {h: good_lines(job, attempt, nonce, first) for h in HOSTS}


@pytest.fixture(scope="module")
def machine(aws) -> Deployed:
    """platform-smoke's state machine as synth builds it, and the data bucket its channel reads."""
    workload = {w.name: w for w in loaded().workloads(DEV.name)}["platform-smoke"]
    deployed = Deployed(sm.spec_for(workload, DEV), type_requests(workload, DEV))
    bucket = json.loads(deployed.text)  # the deploy-time values are filled in: find the channel's bucket
    uri = next(node["DataSource"]["S3DataSource"]["S3Uri"] for node in json_objects(bucket)
               if node.get("ChannelName") == "smoke")
    boto3.client("s3", region_name=DEV.region).create_bucket(Bucket=uri.split("/")[2])
    return deployed


def run_smoke(cli: Any, monkeypatch: pytest.MonkeyPatch, name: str, fake: SmokeSageMaker, *extra: str) -> Any:
    monkeypatch.setattr(smoke, "run_name", lambda: name)
    with installed(fake):
        return cli("smoke", "--env", "dev", "--interval", "0.02", "--metrics-wait", "0", *extra)


def table_rows(out: str) -> dict[str, tuple[str, str]]:
    """The printed table: check -> (result, detail)."""
    rows = {}
    for text in out.splitlines()[2:]:
        cells = [c.strip() for c in text.strip("|").split(" | ")]
        rows[cells[0]] = (cells[1], cells[2])
    return rows


# ------------------------------------------------------------------------------------------------ end to end


def test_a_healthy_platform_passes_every_row(cli, machine, monkeypatch) -> None:
    name = "smoke-e2e-pass"
    fake = SmokeSageMaker(script=[fails(RELAUNCH), completes(300, describes_to_finish=2)], region=DEV.region, account=DEV.account,
                          scenario=healthy(name))
    result = run_smoke(cli, monkeypatch, name, fake)
    assert result.code == 0, result.out + result.err
    rows = table_rows(result.out)
    assert list(rows) == ["run", "image-and-code", "s3-input", "fsx-mount", "rendezvous", "efa", "relaunch",
                          "checkpoint-resume", "metrics", "logs", "notification", "watchdog", "job-search", "cost"]
    assert {k: v[0] for k, v in rows.items()} == {**{k: "PASS" for k in rows}, "efa": "SKIP"}
    first, second = fake.seen
    assert first.endswith("-0") and second.endswith("-1")
    assert rows["relaunch"][1] == f"{first} asked for it; the state machine relaunched {second}"
    assert rows["checkpoint-resume"][1] == (f"{first} wrote it, {second} read it back from the run's checkpoint "
                                            "prefix")
    assert rows["rendezvous"][1].endswith("slowest host 42 ms")
    # 2 x ml.c5.xlarge: the price the definition carries, times 120 + 300 billable seconds
    assert rows["cost"][1].startswith("$") and "420 billable s over 2 job(s) on 2 x ml.c5.xlarge" in rows["cost"][1]
    # the seed the job read: this run's nonce, in the channel's prefix of the data bucket
    uri = next(n["DataSource"]["S3DataSource"]["S3Uri"] for n in json_objects(json.loads(machine.text))
               if n.get("ChannelName") == "smoke")
    bucket, prefix = uri[5:].split("/", 1)
    seed = boto3.client("s3", region_name=DEV.region).get_object(Bucket=bucket, Key=prefix + "seed.json")
    assert json.loads(seed["Body"].read())["nonce"] == name
    assert f"started {name}: platform-smoke in dev (seed {uri}seed.json)" in result.err
    # The watchdog asked the job's streams (the relaunch trained for two looks) and found its smoke_started= line;
    # Search by the execution tag found both jobs.
    assert rows["watchdog"][0] == "PASS" and rows["watchdog"][1].startswith("FilterLogEvents found a smoke:started line")
    [query] = fake.log_queries
    assert (query["logStreamNamePrefix"], query["filterPattern"]) == (f"{second}/", "%smoke_started=%")
    assert rows["job-search"] == ("PASS", "Search by the tag training-platform:execution-arn found every job of the "
                                          "run, as the job reaper searches")
    assert "smoke dev: 13 pass, 0 fail, 1 skip" in result.err


def test_a_broken_platform_fails_its_rows_and_exits_1(cli, machine, monkeypatch) -> None:
    """The S3 channel reads an old seed, FSx is not mounted, and no metric reaches CloudWatch."""
    name = "smoke-e2e-broken"

    def broken(job: str, attempt: int, first: str) -> dict[str, list[str]]:
        lines = {h: good_lines(job, attempt, "an-old-nonce", first) for h in HOSTS}
        lines["algo-2"] = [text.replace("smoke_fsx_read=1", "smoke_fsx_read=0") for text in lines["algo-2"]]
        return lines

    fake = SmokeSageMaker(script=[fails(RELAUNCH), completes(300, describes_to_finish=2)], region=DEV.region, account=DEV.account,
                          scenario=broken, metrics=False)
    result = run_smoke(cli, monkeypatch, name, fake)
    assert result.code == 1
    rows = table_rows(result.out)
    assert rows["run"][0] == PASS.upper() and rows["relaunch"][0] == "PASS"
    assert rows["s3-input"] == ("FAIL", "algo-1, algo-2 read a seed that is not this run's (expected nonce "
                                        f"{name}): the channel did not read the object just written")
    assert rows["fsx-mount"][0] == "FAIL" and rows["fsx-mount"][1].startswith(f"algo-2 (failed) of {fake.seen[1]};")
    assert rows["metrics"][0] == "FAIL" and "algo-1, algo-2" in rows["metrics"][1]
    assert "smoke dev: 10 pass, 3 fail, 1 skip" in result.err


class RunningFollower:
    """A Follower whose run never ends: each poll says RUNNING until the run is stopped."""

    def __init__(self) -> None:
        self.clients, self.target, self.arn, self.interval = object(), object(), "arn:run", 5.0
        self.stopped = False
        self.polls = 0

    def poll(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        self.polls += 1
        return {"status": "ABORTED" if self.stopped else "RUNNING"}, []


def test_a_refused_metrics_read_fails_that_row_and_still_prints_the_table(cli, machine, monkeypatch) -> None:
    name = "smoke-e2e-no-metrics-read"
    fake = SmokeSageMaker(script=[fails(RELAUNCH), completes(300, describes_to_finish=2)], region=DEV.region, account=DEV.account,
                          scenario=healthy(name))
    monkeypatch.setattr(smoke.SmokeClients, "cloudwatch", _refusing("cloudwatch", "get_metric_data",
                                                                     "AccessDeniedException"))
    result = run_smoke(cli, monkeypatch, name, fake)
    assert result.code == 1
    rows = table_rows(result.out)
    assert rows["metrics"][0] == "FAIL"
    assert rows["metrics"][1].startswith("reading the job's metrics from CloudWatch: access denied in account "
                                         "111111111111: denied; use a role that may operate dev-platform-smoke")
    assert rows["metrics"][1].endswith("the credentials need cloudwatch:GetMetricData")
    assert [k for k, v in rows.items() if v[0] == "FAIL"] == ["metrics"]


def test_ctrl_c_while_waiting_asks_as_start_follow_does(cli, machine, monkeypatch) -> None:
    asked: list[str] = []

    def ctrl_c(*args: Any) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(smoke, "wait", ctrl_c)
    monkeypatch.setattr(smoke, "interrupted", lambda clients, target, arn: asked.append(arn) or 130)
    fake = SmokeSageMaker(script=[fails(RELAUNCH), completes(300, describes_to_finish=2)], region=DEV.region, account=DEV.account,
                          scenario=healthy("smoke-ctrl-c"))
    result = run_smoke(cli, monkeypatch, "smoke-ctrl-c", fake)
    assert result.code == 130 and result.out == ""
    assert asked == [f"{machine.arn.replace(':stateMachine:', ':execution:')}:smoke-ctrl-c"]


def test_a_run_past_the_timeout_is_stopped(monkeypatch) -> None:
    follower = RunningFollower()
    now = [0.0]
    stops: list[str] = []

    def stop(clients: Any, target: Any, arn: str) -> None:
        stops.append(arn)
        follower.stopped = True

    monkeypatch.setattr(smoke, "stop_execution", stop)
    ended = smoke.wait(follower, 12, lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])  # type: ignore[arg-type]
    assert ended is False and stops == ["arn:run"]
    assert now[0] == 15  # polled at 0, 5, 10 and 15 s: past 12, the run was stopped, then it ended
    row = by_check(observed(status="ABORTED", timed_out=True))["run"]
    assert (row.status, row.detail) == (FAIL, "ABORTED (stopped by trainctl smoke after --timeout)")


def test_a_run_that_ends_in_time_is_not_stopped(monkeypatch) -> None:
    follower = RunningFollower()
    follower.stopped = True  # it has ended already
    monkeypatch.setattr(smoke, "stop_execution", lambda *a: pytest.fail("stopped a finished run"))
    assert smoke.wait(follower, 12, lambda s: None, clock=lambda: 0.0) is True  # type: ignore[arg-type]


def test_a_workload_not_deployed_is_one_line(cli, machine, monkeypatch) -> None:
    """The GPU variant's state machine was never created here."""
    monkeypatch.setattr(smoke, "run_name", lambda: "smoke-never")
    result = cli("smoke", "--env", "dev", "--gpu")
    assert result.code == 1 and result.out == ""
    assert result.err.strip() == ("workload platform-smoke-gpu is not deployed to dev: there is no state machine "
                                  "dev-platform-smoke-gpu in account 111111111111, us-east-1. Deploy it with "
                                  "`npx cdk deploy 'dev/*'`")


def test_a_refused_seed_is_one_line_and_starts_nothing(cli, machine, monkeypatch, sfn) -> None:
    uri = next(n["DataSource"]["S3DataSource"]["S3Uri"] for n in json_objects(json.loads(machine.text))
               if n.get("ChannelName") == "smoke")
    bucket = uri.split("/")[2]
    monkeypatch.setattr(smoke, "run_name", lambda: "smoke-no-seed")
    monkeypatch.setattr(smoke.SmokeClients, "s3", _refusing("s3", "put_object", "AccessDenied"))
    result = cli("smoke", "--env", "dev")
    assert result.code == 1 and result.out == ""
    assert result.err.startswith(f"could not write the seed s3://{bucket}/datasets/smoke/seed.json: An error occurred "
                                 "(AccessDenied)")
    assert result.err.rstrip().endswith("the credentials need s3:PutObject there and kms:GenerateDataKey on "
                                        "environment dev's key")
    names = [e["name"] for e in sfn.list_executions(stateMachineArn=machine.arn)["executions"]]
    assert "smoke-no-seed" not in names


def _refusing(service: str, operation: str, code: str) -> Any:
    """A client whose `operation` is refused as AWS refuses it without the permission (moto would accept it)."""
    from botocore.stub import Stubber

    client = boto3.client(service, region_name=DEV.region)
    stubber = Stubber(client)
    stubber.add_client_error(operation, code, "Access Denied" if service == "s3" else "denied", 403)
    stubber.activate()
    return client


def test_missing_credentials_are_one_line(cli, monkeypatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    result = cli("smoke", "--env", "dev")
    assert result.code == 1 and result.out == ""
    assert result.err.strip() == ("credentials: no AWS credentials found; configure them for account 111111111111 "
                                  "(environment "
                                  "dev), e.g. `aws sso login` or AWS_PROFILE")


@pytest.mark.parametrize("option", [["--timeout", "0"], ["--timeout", "nan"], ["--timeout", "inf"],
                                    ["--interval", "-0.01"], ["--interval", "nan"], ["--interval", "inf"],
                                    ["--metrics-wait", "-1"], ["--metrics-wait", "nan"], ["--metrics-wait", "inf"]])
def test_bad_options_are_one_line_before_anything_starts(cli, option: list[str]) -> None:
    # nan passes every comparison: it would start the run, then stop it at once (--timeout) or fail in time.sleep
    result = cli("smoke", "--env", "dev", *option)
    assert result.code == 1
    assert result.err.strip() == ("--timeout must be above 0 seconds, --interval and --metrics-wait at least 0 "
                                  "(finite numbers)")


@pytest.mark.parametrize("option", [["--timeout", "0.01"], ["--interval", "0"], ["--metrics-wait", "0"]])
def test_options_at_their_boundary_pass_the_option_check(cli, option: list[str]) -> None:
    """Just inside what the refusals above stop just past: the command gets on to the environment (unknown here,
    so nothing starts)."""
    result = cli("smoke", "--env", "nowhere", *option)
    assert result.code == 2 and result.err.strip().startswith("unknown environment 'nowhere'"), result.err


def test_an_unknown_environment_is_one_line(cli) -> None:
    result = cli("smoke", "--env", "nowhere")
    assert result.code == 2 and result.err.strip() == "unknown environment 'nowhere'; cdk.json declares dev, prod"


# ------------------------------------------------------------------------------------------------ every row's fail


def job_facts(name: str, lines: dict[str, list[str]], status: str = "Completed", reason: str = "",
              billable: int | None = 100, count: int = 2) -> smoke.JobFacts:
    description: dict[str, Any] = {"TrainingJobStatus": status}
    if reason:
        description["FailureReason"] = reason
    if billable is not None:
        description["BillableTimeInSeconds"] = billable
    facts = smoke.JobFacts(Launch(name, "ml.c5.xlarge", count), description)
    facts.read([LogLine(n, host, text) for host, texts in lines.items() for n, text in enumerate(texts)])
    return facts


FIRST, SECOND = "platform-smoke-0123456789ab-0", "platform-smoke-0123456789ab-1"
NONCE = "smoke-20261126-080000-abcd"
SUMMARY = {"job_name": SECOND, "execution_arn": "arn:x", "cost_per_hour_usd": 0.408, "billable_seconds": 300}


def observed(jobs: list[smoke.JobFacts] | None = None, status: str = "SUCCEEDED", events: list[dict[str, Any]] | None
             = None, has_fsx: bool = True, gpu: bool = False, metric_hosts: set[str] | None = None,
             timed_out: bool = False, **described: Any) -> smoke.Observed:
    if jobs is None:
        jobs = [job_facts(FIRST, {h: good_lines(FIRST, 0, NONCE, FIRST) for h in HOSTS}, "Failed", RELAUNCH, 120),
                job_facts(SECOND, {h: good_lines(SECOND, 1, NONCE, FIRST) for h in HOSTS}, billable=300)]
    published = {"type": "TaskSucceeded", "taskSucceededEventDetails": {"resourceType": "sns", "resource": "publish"}}
    hosts = {f"{SECOND}/{h}" for h in HOSTS} if metric_hosts is None else metric_hosts
    facts = smoke.Observed({"status": status, "name": NONCE, "output": json.dumps(SUMMARY), **described},
                           [published, asked(found=True)] if events is None else events, jobs, NONCE, has_fsx, gpu,
                           hosts, timed_out)
    facts.searched = {j.launch.job_name for j in jobs}
    return facts


def asked(found: bool) -> dict[str, Any]:
    """The history event of the stall watchdog's FilterLogEvents question, as Step Functions records an AWS SDK task
    (resourceType `aws-sdk:cloudwatchlogs`, the answer as JSON text, PascalCase)."""
    events = [{"LogStreamName": f"{SECOND}/algo-1-1764325200", "Timestamp": 1764325260000,
               "Message": "smoke_started=1 python=3.12.8"}] if found else []
    return {"type": "TaskSucceeded", "taskSucceededEventDetails": {
        "resourceType": "aws-sdk:cloudwatchlogs", "resource": "filterLogEvents",
        "output": json.dumps({"Events": events, "SearchedLogStreams": []})}}


def by_check(o: smoke.Observed) -> dict[str, Result]:
    return {r.check: r for r in smoke.rows(o)}


def test_every_row_passes_on_healthy_facts() -> None:
    rows = by_check(observed())
    assert {k: r.status for k, r in rows.items() if r.status != PASS} == {"efa": SKIP}
    assert rows["cost"].detail.startswith("$0.0476: 420 billable s over 2 job(s) on 2 x ml.c5.xlarge at $0.408/h")


def test_the_watchdog_row_fails_without_a_question_a_finding_or_an_answer() -> None:
    published = {"type": "TaskSucceeded", "taskSucceededEventDetails": {"resourceType": "sns", "resource": "publish"}}
    never = by_check(observed(events=[published]))["watchdog"]
    assert never.status == FAIL and never.detail.startswith("the run never asked for progress")
    empty = by_check(observed(events=[published, asked(found=False), asked(found=False)]))["watchdog"]
    assert empty.status == FAIL and empty.detail.startswith("2 question(s) found no smoke_started= line")
    refused = {"type": "TaskFailed", "taskFailedEventDetails": {
        "resourceType": "aws-sdk:cloudwatchlogs", "resource": "filterLogEvents",
        "error": "CloudWatchLogs.CloudWatchLogsException", "cause": "User is not authorized to perform: "
        "logs:FilterLogEvents (Service: CloudWatchLogs, Status Code: 400, Request ID: 1)"}}
    failed = by_check(observed(events=[published, refused]))["watchdog"]
    assert failed.status == FAIL and "logs:FilterLogEvents on /aws/sagemaker/TrainingJobs" in failed.detail
    # one finding among empty answers passes: the question works
    found = by_check(observed(events=[published, asked(found=False), asked(found=True)]))["watchdog"]
    assert found.status == PASS and found.detail.startswith("FilterLogEvents found a smoke:started line in 1 of 2")


def test_the_job_search_row_fails_when_search_misses_a_job_or_is_refused() -> None:
    facts = observed()
    facts.searched = {FIRST}
    row = by_check(facts)["job-search"]
    assert row.status == FAIL and row.detail.startswith(f"Search by the tag training-platform:execution-arn missed "
                                                        f"{SECOND}: the job reaper would not find them")
    facts.read_errors["search"] = "AccessDeniedException: not authorized to perform: sagemaker:Search"
    assert by_check(facts)["job-search"].detail.endswith("; the credentials need sagemaker:Search")


def test_a_failed_run_names_its_error_and_cause() -> None:
    row = by_check(observed(status="FAILED", error="TrainingJobFailed", cause="platform-smoke job Failed"))["run"]
    assert (row.status, row.detail) == (FAIL, "FAILED: TrainingJobFailed: platform-smoke job Failed")


def test_without_any_job_every_job_row_fails() -> None:
    rows = by_check(observed(jobs=[], status="FAILED", error="AlreadyRunning", events=[]))
    for check in ("image-and-code", "s3-input", "fsx-mount", "rendezvous", "relaunch", "checkpoint-resume",
                  "metrics", "logs", "notification"):
        assert rows[check].status == FAIL, check
    assert rows["image-and-code"].detail == "no training job was launched; see the run row"
    assert rows["notification"].detail == "the run never published its result (it ended before the notification)"


def test_a_host_that_never_ran_the_script_fails_image_and_code() -> None:
    broken = job_facts(SECOND, {"algo-1": good_lines(SECOND, 1, NONCE, FIRST)}, "Failed",
                       "AlgorithmError: CannotStartContainerError")
    row = by_check(observed(jobs=[broken]))["image-and-code"]
    assert row.status == FAIL
    assert row.detail.startswith(f"algo-2 (no line) of {SECOND}; the job Failed: AlgorithmError: "
                                 "CannotStartContainerError; read the job's FailureReason")


def test_fsx_is_skipped_without_a_file_system_and_fails_without_its_channel() -> None:
    assert by_check(observed(has_fsx=False))["fsx-mount"].status == SKIP
    no_channel = [job_facts(SECOND, {h: [t for t in good_lines(SECOND, 1, NONCE, FIRST) if "fsx" not in t]
                                     for h in HOSTS})]
    row = by_check(observed(jobs=no_channel))["fsx-mount"]
    assert row.status == FAIL and row.detail.startswith("the job has no fsx channel although the environment has a "
                                                        "file system")


def test_each_channel_is_judged_by_its_own_nonce() -> None:
    """A stale seed on FSx (its import lags) leaves S3's verdict alone and passes the mount with a note."""
    lines = {h: [t.replace(f"nonce={NONCE} path=/opt/ml/input/data/fsx", "nonce=older path=/opt/ml/input/data/fsx")
                 for t in good_lines(SECOND, 1, NONCE, FIRST)] for h in HOSTS}
    rows = by_check(observed(jobs=[job_facts(FIRST, lines)]))
    assert rows["s3-input"].status == PASS
    assert rows["fsx-mount"].status == PASS and rows["fsx-mount"].detail.endswith(
        "; algo-1, algo-2 saw an earlier run's seed (the file system imports new objects from the bucket with a delay)")
    stale_s3 = {h: [t.replace(f"nonce={NONCE} path=/opt/ml/input/data/smoke", "nonce=older path=x")
                    for t in good_lines(SECOND, 1, NONCE, FIRST)] for h in HOSTS}
    rows = by_check(observed(jobs=[job_facts(FIRST, stale_s3)]))
    assert rows["s3-input"].status == FAIL
    assert rows["fsx-mount"].detail == f"read the seed on FSx for Lustre through the link to the data bucket (every " \
                                       f"host of {FIRST})"


def test_a_failed_rendezvous_names_the_security_group() -> None:
    lines = {h: [t.replace("smoke_rendezvous=1", "smoke_rendezvous=0") for t in good_lines(SECOND, 1, NONCE, FIRST)]
             for h in HOSTS}
    row = by_check(observed(jobs=[job_facts(FIRST, lines)]))["rendezvous"]
    assert row.status == FAIL and "algo-1 (failed), algo-2 (failed)" in row.detail
    assert row.detail.endswith("the job security group must admit all traffic from itself (port 29500 here)")


def test_efa_is_checked_with_gpu_only() -> None:
    jobs = observed().jobs
    assert by_check(observed(gpu=True))["efa"].status == FAIL  # the hosts printed no smoke_efa line
    for job in jobs:
        for host in job.hosts.values():
            host.checks["efa"] = 1
    assert by_check(observed(jobs=jobs, gpu=True))["efa"].status == PASS


def test_no_relaunch_or_another_failure_fails_relaunch_and_checkpoint() -> None:
    one = [job_facts(FIRST, {h: good_lines(FIRST, 0, NONCE, FIRST) for h in HOSTS})]
    rows = by_check(observed(jobs=one))
    assert rows["relaunch"].status == FAIL and rows["relaunch"].detail.startswith(
        f"one job only ({FIRST}, Completed): attempt 0 did not ask for a relaunch")
    assert rows["checkpoint-resume"].detail == "no relaunch to resume (see relaunch)"
    jobs = observed().jobs
    jobs[0].description = {"TrainingJobStatus": "Failed", "FailureReason": "AlgorithmError: OOM"}
    assert by_check(observed(jobs=jobs))["relaunch"].detail == f"{FIRST} failed without CapacityError: " \
                                                                "AlgorithmError: OOM"


def test_a_checkpoint_not_written_not_found_or_foreign_fails() -> None:
    jobs = observed().jobs
    jobs[0].hosts["algo-2"].checks.pop("checkpoint_written")
    assert by_check(observed(jobs=jobs))["checkpoint-resume"].detail == f"{FIRST} wrote no checkpoint on " \
                                                                         "algo-2 (no line)"
    jobs = observed().jobs
    jobs[1].hosts["algo-1"].checks["checkpoint_resumed"] = 0
    assert by_check(observed(jobs=jobs))["checkpoint-resume"].detail.startswith(
        f"{SECOND} found no checkpoint on algo-1 (failed): the run's checkpoint prefix did not carry it over")
    jobs = observed().jobs
    jobs[1].hosts["algo-2"].fields["checkpoint_resumed:written_by"] = "platform-smoke-ffffffffffff-0"
    assert by_check(observed(jobs=jobs))["checkpoint-resume"].detail == (
        f"algo-2 of {SECOND} read a checkpoint not written by {FIRST}")


def test_missing_metrics_and_silent_hosts_fail() -> None:
    row = by_check(observed(metric_hosts={f"{SECOND}/algo-1"}))["metrics"]
    assert row.status == FAIL and row.detail.startswith(f"CloudWatch has no smoke:passed for algo-2 of {SECOND} in "
                                                        "/aws/sagemaker/TrainingJobs")
    jobs = observed().jobs
    jobs[0].hosts.pop("algo-1")
    row = by_check(observed(jobs=jobs))["logs"]
    assert row.status == FAIL and row.detail.startswith(f"no log lines from {FIRST}/algo-1 in "
                                                        "/aws/sagemaker/TrainingJobs")


def test_unreadable_logs_and_metrics_fail_their_rows() -> None:
    o = observed()
    o.read_errors = {"logs": "reading the jobs' logs: access denied", "metrics": "reading the metrics: access denied"}
    rows = by_check(o)
    assert (rows["logs"].status, rows["logs"].detail) == (FAIL, "reading the jobs' logs: access denied; the "
                                                                "credentials need logs:DescribeLogStreams and "
                                                                "logs:GetLogEvents on /aws/sagemaker/TrainingJobs")
    assert (rows["metrics"].status, rows["metrics"].detail) == (FAIL, "reading the metrics: access denied; the "
                                                                      "credentials need cloudwatch:GetMetricData")


def test_a_failed_publish_fails_the_notification() -> None:
    failed = {"type": "TaskFailed", "taskFailedEventDetails": {"resourceType": "sns", "resource": "publish",
                                                               "error": "SNS.AuthorizationErrorException",
                                                               "cause": "not allowed"}}
    row = by_check(observed(events=[failed]))["notification"]
    assert (row.status, row.detail) == (FAIL, "publishing to the runs topic failed: SNS.AuthorizationErrorException: "
                                              "not allowed; check the topic's key policy and the state machine role")


def test_cost_without_a_price_is_skipped_and_counts_unknown_jobs() -> None:
    o = observed(output=json.dumps({**SUMMARY, "cost_per_hour_usd": None}))
    assert by_check(o)["cost"].status == SKIP
    jobs = observed().jobs
    jobs[0].description = {"TrainingJobStatus": "Failed", "FailureReason": RELAUNCH}
    row = by_check(observed(jobs=jobs))["cost"]
    assert row.detail.startswith("$0.0340: 300 billable s over 2 job(s)") and row.detail.endswith(
        ", 1 job(s) without billable time")


def test_metrics_are_waited_for_until_every_host_has_one(aws) -> None:
    """CloudWatch may trail the job: the query repeats until both hosts show, or the patience runs out."""
    cloudwatch = boto3.client("cloudwatch", region_name=DEV.region)
    job = job_facts("platform-smoke-aaaaaaaaaaaa-1", {})
    clients = _clients()
    now = [0.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds
        host = f"algo-{len(sleeps)}"
        cloudwatch.put_metric_data(Namespace="/aws/sagemaker/TrainingJobs", MetricData=[{
            "MetricName": "smoke:passed", "Dimensions": [{"Name": "Host", "Value": f"{job.launch.job_name}/{host}"}],
            "Value": 1.0, "Timestamp": datetime.now(UTC)}])

    target = smoke.Target(DEV, "platform-smoke")
    found = smoke.metric_hosts(clients, target, job, datetime.now(UTC), 300, sleep, clock=lambda: now[0])
    assert found == {f"{job.launch.job_name}/algo-1", f"{job.launch.job_name}/algo-2"} and sleeps == [30, 30]
    later = job_facts("platform-smoke-bbbbbbbbbbbb-1", {})
    assert smoke.metric_hosts(clients, target, later, datetime.now(UTC), 45, lambda s: now.__setitem__(0, now[0] + s),
                              clock=lambda: now[0]) == set()


def _clients() -> smoke.SmokeClients:
    return smoke.SmokeClients(DEV, None)


def test_the_spec_feeds_the_metric_the_command_reads() -> None:
    for path in sorted((ROOT / "workloads").glob("platform-smoke*.yaml")):
        text = path.read_text()
        assert '{Name: "smoke:passed", Regex: "smoke_passed=([0-9.]+)"}' in text, path


def _with_new_environment(tmp_path: Path, fsx: bool) -> Project:
    """The repository's project with an environment `staging` that no workload's environments: block names yet."""
    root = project_copy(tmp_path)
    settings = json.loads((root / "cdk.json").read_text())
    envs = settings["context"]["training-platform:environments"]
    envs["staging"] = {**{k: v for k, v in envs["dev"].items() if k != "fsx" or fsx}, "account": "333333333333",
                       "vpc_cidr": "10.40.0.0/16", "datasets": {}}
    (root / "cdk.json").write_text(json.dumps(settings))
    context = json.loads((root / "cdk.context.json").read_text())
    context["availability-zones:account=333333333333:region=us-east-1"] = ["us-east-1a", "us-east-1b"]
    (root / "cdk.context.json").write_text(json.dumps(context))
    return Project(root)


@pytest.mark.parametrize("fsx", [False, True])
def test_a_new_environment_is_refused_naming_the_lines_to_add(tmp_path, fsx) -> None:
    project = _with_new_environment(tmp_path, fsx)
    env = project.environments()["staging"]
    with pytest.raises(SpecError) as refused:
        smoke.smoke_workload(project, env, smoke.WORKLOAD)
    text = str(refused.value)
    assert "platform-smoke does not deploy to environment staging" in text
    assert "under environments: in workloads/platform-smoke.yaml" in text and "npx cdk deploy 'staging/*'" in text
    dataset = '\nand in cdk.json, under staging\'s datasets: "smoke": {"readers": ["platform-smoke", "platform-smoke-gpu"]}\n'
    assert dataset in text  # both the S3 channel and the FSx one read the data bucket's datasets/smoke/
    if fsx:
        assert "directory_path: /datasets/smoke" in text
    else:
        assert "\n  staging: {}" + dataset in text
    # following it word for word makes the workload deploy there
    spec = project.root / "workloads" / "platform-smoke.yaml"
    block = text.split("platform-smoke.yaml\n", 1)[1].split("\nand in cdk.json", 1)[0]
    spec.write_text(spec.read_text().replace("\nmetric_definitions:", f"\n{block}\nmetric_definitions:", 1))
    settings = json.loads((project.root / "cdk.json").read_text())
    settings["context"]["training-platform:environments"]["staging"]["datasets"]["smoke"] = {
        "readers": ["platform-smoke", "platform-smoke-gpu"]}
    (project.root / "cdk.json").write_text(json.dumps(settings))
    fresh = Project(project.root)
    assert smoke.smoke_workload(fresh, fresh.environments()["staging"], smoke.WORKLOAD).name == "platform-smoke"


def test_a_new_environment_that_grants_the_dataset_already_is_asked_for_the_spec_line_only(tmp_path) -> None:
    project = _with_new_environment(tmp_path, fsx=False)
    settings = json.loads((project.root / "cdk.json").read_text())
    settings["context"]["training-platform:environments"]["staging"]["datasets"]["smoke"] = {
        "readers": ["platform-smoke-gpu", "platform-smoke", "someone-else"]}
    (project.root / "cdk.json").write_text(json.dumps(settings))
    fresh = Project(project.root)
    with pytest.raises(SpecError) as refused:
        smoke.smoke_workload(fresh, fresh.environments()["staging"], smoke.WORKLOAD)
    assert "\n  staging: {}\nthen `trainctl validate`" in str(refused.value) and "cdk.json" not in str(refused.value)
