"""Where a workload's runs live in AWS, and what an execution's history says about its training jobs.

A run is one Step Functions execution of the workload's state machine (`<env>-<workload>`, in the account and region
cdk.json pins for the environment). The commands name a run in one of three ways (`resolve_run`):

- an execution ARN, as `trainctl start` prints it: the environment follows from the ARN's account and region;
- `WORKLOAD/NAME` with `--env`: the execution named NAME (execution names never contain `/`);
- `WORKLOAD` with `--env`: the most recent execution (for `stop`: the one running execution).

The execution's history is the one record of every training job it launched, relaunches included: each
`createTrainingJob` task is scheduled with the job's name and resources in its parameters. That keeps this module
independent of the definition's state names; only the summary (the execution's output, `_summary_parameters` in
`compiler.state_machine.definition`) is read by its documented fields.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from compiler import state_machine as sm
from compiler.environments import Environment
from compiler.errors import Problem, SpecError
from compiler.project import Project
from compiler.spec import load_workload

LOG_GROUP = "/aws/sagemaker/TrainingJobs"
RUNNING = "RUNNING"
_ARN = re.compile(r"^arn:(?P<partition>aws[a-z-]*):states:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):execution:"
                  r"(?P<machine>[^:]+):(?P<name>[^:]+)$")
# Step Functions execution names: 1-80 characters, none of these (the StartExecution API reference).
_NAME_FORBIDDEN = re.compile(r"[\s<>{}\[\]?*\"#%\\^|~`$&,;:/\x00-\x1f\x7f-\x9f]")
_CONSOLE = {"aws": "console.aws.amazon.com", "aws-cn": "console.amazonaws.cn",
            "aws-us-gov": "console.amazonaws-us-gov.com"}


def problem(message: str) -> SpecError:
    """A message for the user (exit 1); the CLI prints it without a traceback."""
    return SpecError(Problem("", "", message))


# ------------------------------------------------------------------------------------------------ the target


@dataclass(frozen=True)
class Target:
    """One workload's state machine in one environment: every ARN and console link follows from it."""

    env: Environment
    workload: str

    @property
    def machine_name(self) -> str:
        return sm.state_machine_name(self.env.name, self.workload)

    @property
    def machine_arn(self) -> str:
        return f"arn:{self.env.partition}:states:{self.env.region}:{self.env.account}:stateMachine:{self.machine_name}"

    def execution_arn(self, name: str) -> str:
        return f"arn:{self.env.partition}:states:{self.env.region}:{self.env.account}:execution:{self.machine_name}:{name}"

    def run_argument(self, execution_arn: str) -> str:
        """How to name this run on the command line again: `WORKLOAD/NAME --env ENV`."""
        return f"{self.workload}/{execution_arn.rsplit(':', 1)[-1]} --env {self.env.name}"

    def _console(self, service: str) -> str:
        host = _CONSOLE.get(self.env.partition, _CONSOLE["aws"])
        return f"https://{self.env.region}.{host}/{service}/home?region={self.env.region}"

    def execution_link(self, execution_arn: str) -> str:
        return f"{self._console('states')}#/v2/executions/details/{execution_arn}"

    def job_link(self, job_name: str) -> str:
        return f"{self._console('sagemaker')}#/jobs/{job_name}"

    def logs_link(self, job_name: str) -> str:
        return (f"{self._console('cloudwatch')}#logStream:group={LOG_GROUP};prefix={job_name};"
                "streamFilter=typeLogStreamPrefix")

    def not_deployed(self) -> SpecError:
        return problem(f"workload {self.workload} is not deployed to {self.env.name}: there is no state machine "
                       f"{self.machine_name} in account {self.env.account}, {self.env.region}. Deploy it with "
                       f"`npx cdk deploy '{self.env.name}/*'`")


class Clients:
    """The AWS clients of one environment, from the usual credential chain, checked against its account (aws.py).

    Each client is made on first use: a command pays only for the services it calls.
    """

    def __init__(self, env: Environment, profile: str | None) -> None:
        from botocore.exceptions import ProfileNotFound

        from trainctl.aws import session

        try:
            self.boto = session(env, profile)
        except ProfileNotFound:
            raise problem(f"AWS profile '{profile}' is not configured (~/.aws/config); name a profile of account "
                          f"{env.account} (environment {env.name})") from None

    def _client(self, service: str) -> Any:
        from botocore.config import Config

        return self.boto.client(service, config=Config(retries={"mode": "standard", "max_attempts": 8}))

    @functools.cached_property
    def sfn(self) -> Any:
        return self._client("stepfunctions")

    @functools.cached_property
    def sagemaker(self) -> Any:
        return self._client("sagemaker")

    @functools.cached_property
    def logs(self) -> Any:
        return self._client("logs")


@contextlib.contextmanager
def aws_errors(target: Target, doing: str) -> Iterator[None]:
    """Turn AWS errors into messages that say what to do; `doing` names the step for the rest."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        message = error.response.get("Error", {}).get("Message", str(error))
        if code == "StateMachineDoesNotExist":
            raise target.not_deployed() from None
        if code == "ExecutionDoesNotExist":
            raise problem(f"{doing}: no such execution of {target.workload} in {target.env.name}; list recent runs "
                          f"with `trainctl runs {target.workload} --env {target.env.name}`") from None
        if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation"):
            raise problem(f"{doing}: access denied in account {target.env.account}: {message}; use a role that may "
                          f"operate {target.machine_name} (--profile or AWS_PROFILE)") from None
        raise problem(f"{doing}: {code or 'error'}: {message}") from None
    except BotoCoreError as error:
        raise problem(f"{doing}: {error}") from None


# ------------------------------------------------------------------------------------------------ naming a run


def environment(project: Project, name: str) -> Environment:
    envs = project.environments()
    if name not in envs:
        raise problem(f"unknown environment '{name}'; cdk.json declares {', '.join(envs)}")
    return envs[name]


def workload_target(project: Project, workload: str, env_name: str) -> Target:
    """The target of a workload named on the command line (its spec must exist and deploy to the environment)."""
    env = environment(project, env_name)
    return Target(env, load_workload(project, workload, env).name)


def check_execution_name(name: str) -> None:
    """Refuse a name Step Functions would refuse, before any call."""
    if not 1 <= len(name) <= 80 or _NAME_FORBIDDEN.search(name):
        raise problem(f"--name {name!r}: an execution name has 1 to 80 characters, without spaces, brackets, "
                      "wildcards or any of \" # % \\ ^ | ~ ` $ & , ; : /")


def _target_of_arn(project: Project, match: re.Match[str], env_name: str | None) -> Target:
    account, region, machine = match["account"], match["region"], match["machine"]
    envs = project.environments()
    candidates = [e for e in envs.values() if e.account == account and e.region == region]
    if env_name is not None:
        env = environment(project, env_name)
        if env not in candidates:
            raise problem(f"the execution is in account {account}, {region}, but environment {env.name} is account "
                          f"{env.account}, {env.region} (cdk.json); drop --env or name the right one")
    elif len(candidates) == 1:
        env = candidates[0]
    elif not candidates:
        raise problem(f"no environment in cdk.json is account {account} in {region}, where this execution runs")
    else:
        raise problem(f"environments {', '.join(e.name for e in candidates)} share account {account} in {region}; "
                      "add --env to say which one")
    return Target(env, machine.removeprefix(f"{env.name}-"))


@dataclass(frozen=True)
class RunRef:
    """A run as named on the command line: the target, and the execution ARN (None: pick the latest)."""

    target: Target
    execution_arn: str | None


def parse_run(project: Project, run: str, env_name: str | None) -> RunRef:
    """Read RUN: an execution ARN, `WORKLOAD/NAME` or `WORKLOAD` (the latter two with --env)."""
    match = _ARN.match(run)
    if match:
        return RunRef(_target_of_arn(project, match, env_name), run)
    if run.startswith("arn:"):
        raise problem(f"{run!r} is not a Step Functions execution ARN (arn:aws:states:REGION:ACCOUNT:execution:"
                      "STATE_MACHINE:NAME)")
    if env_name is None:
        raise problem(f"RUN {run!r} is not an execution ARN: name the environment too, e.g. `--env dev` "
                      "(RUN is an execution ARN, WORKLOAD/NAME, or WORKLOAD for its latest run)")
    workload, _, name = run.partition("/")
    target = workload_target(project, workload, env_name)
    if name:
        check_execution_name(name)
        return RunRef(target, target.execution_arn(name))
    return RunRef(target, None)


def recent_executions(clients: Clients, target: Target, limit: int, status: str | None = None) -> list[dict[str, Any]]:
    """The newest executions first (the service's order; sorted again to be sure)."""
    found: list[dict[str, Any]] = []
    request: dict[str, Any] = {"stateMachineArn": target.machine_arn, "maxResults": min(limit, 1000)}
    if status:
        request["statusFilter"] = status
    with aws_errors(target, "listing executions"):
        while len(found) < limit:
            page = clients.sfn.list_executions(**request)
            found += page.get("executions", [])
            if not page.get("nextToken"):
                break
            request["nextToken"] = page["nextToken"]
    return sorted(found, key=lambda e: e["startDate"], reverse=True)[:limit]


def describe(clients: Clients, target: Target, execution_arn: str) -> dict[str, Any]:
    with aws_errors(target, execution_arn):
        described: dict[str, Any] = clients.sfn.describe_execution(executionArn=execution_arn)
    return described


def resolve_run(clients: Clients, ref: RunRef, *, running: bool = False) -> dict[str, Any]:
    """DescribeExecution of the run named; for a bare WORKLOAD, its latest (or, `running`, its one running) run."""
    target = ref.target
    if ref.execution_arn is not None:
        return describe(clients, target, ref.execution_arn)
    candidates = recent_executions(clients, target, 100 if running else 1, RUNNING if running else None)
    where = f"{target.workload} in {target.env.name}"
    if not candidates:
        what = "no run of" if not running else "no running execution of"
        raise problem(f"{what} {where}; list recent runs with `trainctl runs {target.workload} --env {target.env.name}`")
    if len(candidates) > 1:
        names = ", ".join(f"{target.workload}/{c['name']}" for c in candidates)
        raise problem(f"{len(candidates)} runs of {where} are running ({names}); name one as WORKLOAD/NAME")
    return describe(clients, target, candidates[0]["executionArn"])


# ------------------------------------------------------------------------------------------------ the history


def history(clients: Clients, target: Target, execution_arn: str) -> list[dict[str, Any]]:
    """Every event of the execution, oldest first."""
    events: list[dict[str, Any]] = []
    request: dict[str, Any] = {"executionArn": execution_arn, "maxResults": 1000}
    with aws_errors(target, "reading the execution's history"):
        while True:
            page = clients.sfn.get_execution_history(**request)
            events += page.get("events", [])
            if not page.get("nextToken"):
                break
            request["nextToken"] = page["nextToken"]
    return sorted(events, key=lambda e: e["id"])


@dataclass(frozen=True)
class Launch:
    """One CreateTrainingJob the execution scheduled: a job, with what it runs on."""

    job_name: str
    instance_type: str
    instance_count: int

    @property
    def resources(self) -> str:
        return f"{self.instance_count} x {self.instance_type}"


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


def launch_of(event: Mapping[str, Any]) -> Launch | None:
    """The job a history event schedules, if it schedules one."""
    details = event.get("taskScheduledEventDetails") or {}
    if details.get("resourceType") != "sagemaker" or not str(details.get("resource", "")).startswith(
            "createTrainingJob"):
        return None
    parameters = _json(details.get("parameters")) or {}
    name = parameters.get("TrainingJobName")
    if not name:
        return None
    resources = parameters.get("ResourceConfig") or {}
    groups = resources.get("InstanceGroups") or []
    if groups:
        kind = " + ".join(f"{g.get('InstanceCount')} x {g.get('InstanceType')}" for g in groups)
        return Launch(name, kind, sum(int(g.get("InstanceCount", 0)) for g in groups))
    return Launch(name, str(resources.get("InstanceType", "?")), int(resources.get("InstanceCount", 0)))


def launches(events: list[dict[str, Any]]) -> list[Launch]:
    """The training jobs of the execution in launch order (a task retried under the same name counts once)."""
    found: dict[str, Launch] = {}
    for event in events:
        launch = launch_of(event)
        if launch is not None and launch.job_name not in found:
            found[launch.job_name] = launch
    return list(found.values())


def create_failure(event: Mapping[str, Any]) -> str | None:
    """`error: cause` of a CreateTrainingJob call that failed without a job (throttling, quota), if it is one."""
    details = event.get("taskFailedEventDetails") or {}
    if details.get("resourceType") == "sagemaker" and details.get("error") != "States.TaskFailed":
        return f"{details.get('error', '')}: {details.get('cause', '')}"
    return None


def summary(described: Mapping[str, Any], events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The run's summary: the execution's output; for a failed run, the summary its last states carried."""
    output = _json(described.get("output"))
    if isinstance(output, dict) and "job_name" in output:
        return output
    for event in reversed(events):
        details = event.get("stateExitedEventDetails") or {}
        result = (_json(details.get("output")) or {}).get("result") if details else None
        if isinstance(result, dict) and "job_name" in result and "execution_arn" in result:
            return result
    return None


def cost(run_summary: Mapping[str, Any] | None) -> float | None:
    """The summary's estimate: catalog price per hour x billable seconds (None where either is unknown)."""
    if not run_summary:
        return None
    rate, seconds = run_summary.get("cost_per_hour_usd"), run_summary.get("billable_seconds")
    if not isinstance(rate, int | float) or not isinstance(seconds, int | float):
        return None
    return float(rate) * float(seconds) / 3600


def duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def elapsed(described: Mapping[str, Any], now: datetime) -> float:
    start: datetime = described["startDate"]
    stop: datetime = described.get("stopDate") or now
    return (stop - start).total_seconds()
