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
import secrets
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from compiler.compilation.request import TAG_EXECUTION
from compiler.errors import SpecError
from compiler.facts.run_metrics import JOBS_NAMESPACE
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.project import Project
from compiler.spec import load_workload
from compiler.spec.loading import ENVIRONMENTS_KEY
from compiler.state_machine.asl import json_objects
from trainctl.common.aws import Clients, aws_errors
from trainctl.common.errors import problem
from trainctl.common.lookup import environment, project_of
from trainctl.common.target import Target
from trainctl.common.verdicts import FAIL, counts, table
from trainctl.run.follow import Follower, LogTail, describe_job, interrupted
from trainctl.run.history import history, launches
from trainctl.run.resolve import RUNNING, describe
from trainctl.run.stop import stop_execution
from trainctl.smoke.facts import METRIC, JobFacts, Observed
from trainctl.smoke.rows import rows

WORKLOAD, GPU_WORKLOAD = "platform-smoke", "platform-smoke-gpu"
CHANNEL = "smoke"  # the input channel that reads the seed from the data bucket
SEED_FILE = "seed.json"  # the file smoke.py reads in each channel


class SmokeClients(Clients):
    """The run's clients, and the two more services the smoke test reads or writes."""

    @functools.cached_property
    def s3(self) -> Any:
        return self._client("s3")

    @functools.cached_property
    def cloudwatch(self) -> Any:
        return self._client("cloudwatch")


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


def smoke_workload(project: Project, env: Environment, name: str) -> Workload:
    """The smoke workload as it deploys to `env`; where it does not (a new environment), a refusal that names the lines
    to add: the spec's `environments:` entry (with a file system, its FSx channel) and the dataset `smoke` it reads."""
    try:
        return load_workload(project, name, env)
    except SpecError as error:
        if not any(p.field == ENVIRONMENTS_KEY and "does not deploy" in p.message for p in error.problems):
            raise
    lines = [f"  {env.name}: {{}}"]
    if env.has_fsx:  # the FSx channel reads the dataset `smoke` through the file system
        lines = [f"  {env.name}:", "    inputs:", f"      {CHANNEL}: datasets/smoke/", "      fsx: {file_system_type: "
                 "FSxLustre, directory_path: /datasets/smoke, file_system_access_mode: ro}"]
    readers = (WORKLOAD, GPU_WORKLOAD)
    granted = env.datasets.get("smoke")
    if granted is None or not granted.readers.issuperset(readers):  # both channels read the data bucket's dataset
        lines.append(f'and in cdk.json, under {env.name}\'s datasets: "smoke": {{"readers": ["{WORKLOAD}", '
                     f'"{GPU_WORKLOAD}"]}}')
    raise problem(f"{name} does not deploy to environment {env.name}: there is nothing to smoke-test there yet. Add "
                  f"under environments: in workloads/{name}.yaml\n" + "\n".join(lines) +
                  f"\nthen `trainctl validate` and deploy it: `npx cdk deploy '{env.name}/*'`")


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
        jobs = [JobFacts(launch, describe_job(clients.sagemaker, launch.job_name)) for launch in launches(events)]
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


def smoke(args: argparse.Namespace, sleep: Callable[[float], None] = time.sleep) -> int:
    finite = all(math.isfinite(v) for v in (args.timeout, args.interval, args.metrics_wait))  # nan passes < and <=
    if not finite or args.timeout <= 0 or args.interval < 0 or args.metrics_wait < 0:
        raise problem("--timeout must be above 0 seconds, --interval and --metrics-wait at least 0 (finite numbers)")
    project = project_of(args)
    env = environment(project, args.env)
    workload = smoke_workload(project, env, GPU_WORKLOAD if args.gpu else WORKLOAD)
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
    print(f"smoke {env.name}: {counts(results)}; logs again: `trainctl logs {target.run_argument(arn)}`",
          file=sys.stderr)
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
