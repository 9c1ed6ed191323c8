"""Naming a run on the command line, and finding the execution it names.

A run is one Step Functions execution of the workload's state machine (trainctl/common/target.py). The commands name a run
in one of three ways (`parse_run`, then `resolve_run`):

- an execution ARN, as `trainctl start` prints it: the environment follows from the ARN's account and region;
- `WORKLOAD/NAME` with `--env`: the execution named NAME (execution names never contain `/`);
- `WORKLOAD` with `--env`: the most recent execution (for `stop`: the one running execution).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from compiler.inputs.project import Project
from trainctl.common.aws import Clients, aws_errors
from trainctl.common.errors import problem
from trainctl.common.lookup import environment
from trainctl.common.target import Target, workload_target

RUNNING = "RUNNING"
_ARN = re.compile(r"^arn:(?P<partition>aws[a-z-]*):states:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):execution:"
                  r"(?P<machine>[^:]+):(?P<name>[^:]+)$")
# Step Functions execution names: 1-80 characters, none of these (the StartExecution API reference).
_NAME_FORBIDDEN = re.compile(r"[\s<>{}\[\]?*\"#%\\^|~`$&,;:/\x00-\x1f\x7f-\x9f]")


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
