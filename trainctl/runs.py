"""`start`, `runs`, `logs`, `stop`: training runs of a deployed workload, from the terminal.

`start` checks the overrides with the workload's `OverridePolicy.check()`, the same rules (and messages) the state
machine's first states apply, so a run the state machine would refuse is refused here, before anything starts.
The execution input is exactly what the state machine takes: `{}` runs the spec as written; `hyperparameters`,
`instance_count` and `max_run` appear only when given. `-p NAME=VALUE` reads VALUE by the type of the spec's value:
as text where the spec has a string (so `-p tag=10` stays the string "10"), else as JSON (`-p lr=3e-4`,
`-p compile=false`, `-p layers=[64,32]`).

RUN, for `logs` and `stop`: an execution ARN (the environment follows from its account and region), or with
`--env`: `WORKLOAD/NAME` (the execution named NAME) or `WORKLOAD` (its latest run; for `stop`, its one running run).
"""

from __future__ import annotations

import argparse
import getpass
import json
import re
import secrets
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from compiler.compilation.overrides import OverridePolicy
from compiler.facts import catalog
from compiler.facts.summaries import RunSummary
from compiler.spec import load_workload
from trainctl import follow as following
from trainctl.aws import Clients, aws_errors
from trainctl.common import problem, project_of
from trainctl.durations import duration, elapsed
from trainctl.history import history, launches
from trainctl.run_lookup import RUNNING, check_execution_name, parse_run, recent_executions, resolve_run
from trainctl.run_summary import summary
from trainctl.target import Target, environment, workload_target

DEFAULT_INTERVAL = 10.0
HELP = """Training runs of a deployed workload: executions of its state machine <env>-<workload>.

start checks the overrides with the rules the state machine applies (the same messages) and starts nothing when
they fail. -p NAME=VALUE: VALUE is text where the spec's value is a string, else JSON (-p learning_rate=3e-4,
-p compile=false, -p layers=[64,32]).

RUN (logs, stop): an execution ARN, or with --env: WORKLOAD/NAME (the execution NAME) or WORKLOAD (its latest run;
for stop, its one running run).

Standard output carries the execution ARN (start, stop), the table (runs) and the log lines (logs, --follow); job
status and problems go to standard error. --follow exits 0 when the run succeeded, 1 when it failed or was stopped
(with the reason), 130 after Ctrl-C.
"""


# ------------------------------------------------------------------------------------------------ start


MAX_NESTING = 100  # lists and objects in a -p value; Python's JSON reader and writer fail near 1,000 levels


def parse_value(text: str, expected: str | None, name: str = "NAME") -> Any:
    """A `-p` value: text where the spec's value is a string, else JSON (kept as text when it is not JSON)."""
    if expected == "string":
        return text
    too_deep = problem(f"-p {name}: the value is nested more than {MAX_NESTING} levels deep; pass such a value as a "
                       "file in an input channel")
    try:
        value = json.loads(text)
    except RecursionError:
        raise too_deep from None
    except ValueError:
        return text
    if _nesting(value) > MAX_NESTING:
        raise too_deep
    return value


def _nesting(value: Any) -> int:
    """How many lists and objects deep a JSON value goes, counted without recursion."""
    deepest, level = 0, [(value, 0)]
    while level:
        item, depth = level.pop()
        if isinstance(item, list | dict):
            deepest = max(deepest, depth + 1)
            if deepest > MAX_NESTING:
                return deepest
            level.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def execution_input(args: argparse.Namespace, policy: OverridePolicy) -> dict[str, Any]:
    """The execution input the state machine expects, from the command line's overrides."""
    expected = policy.expected_types()
    hyperparameters: dict[str, Any] = {}
    for item in args.hyperparameter or []:
        name, equals, text = item.partition("=")
        if not equals or not name:
            raise problem(f"-p {item!r}: write NAME=VALUE, e.g. -p learning_rate=0.0003")
        if name in hyperparameters:
            raise problem(f"-p {name}: given twice")
        hyperparameters[name] = parse_value(text, expected.get(name), name)
    given: dict[str, Any] = {}
    if hyperparameters:
        given["hyperparameters"] = hyperparameters
    if args.instance_count is not None:
        given["instance_count"] = args.instance_count
    if args.max_run is not None:
        given["max_run"] = args.max_run
    return given


def default_name() -> str:
    """`<user>-<UTC time>-<4 hex>`: readable in `trainctl runs`, unique without a lookup."""
    try:
        user = re.sub(r"[^A-Za-z0-9_-]", "", getpass.getuser())[:20]
    except (KeyError, OSError):
        user = ""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return "-".join(p for p in (user, stamp, secrets.token_hex(2)) if p)


MAX_INTERVAL = 3600.0  # an hour between looks: beyond it following shows nothing; inf and nan would stop time.sleep


def _check_interval(args: argparse.Namespace) -> None:
    if not 0 <= args.interval <= MAX_INTERVAL:  # also false for nan
        raise problem(f"--interval: give a number of seconds from 0 to {MAX_INTERVAL:g}")


def start(args: argparse.Namespace) -> int:
    _check_interval(args)
    project = project_of(args, args.workload)
    env = environment(project, args.env)
    workload = load_workload(project, args.workload, env)
    for warning in workload.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    policy = OverridePolicy.of(workload)
    given = execution_input(args, policy)
    refused = policy.check(given)
    if refused:
        for message in refused:
            print(f"refused: {message}", file=sys.stderr)
        print(f"nothing was started (the state machine applies the same rules to input {json.dumps(given)})",
              file=sys.stderr)
        return 1
    name = default_name() if args.name is None else args.name  # --name '' is refused below, not replaced
    check_execution_name(name)
    target = Target(env, workload.name)
    clients = Clients(env, args.profile)
    with aws_errors(target, "starting the run"):
        try:
            started = clients.sfn.start_execution(stateMachineArn=target.machine_arn, name=name, input=json.dumps(given))
        except clients.sfn.exceptions.ExecutionAlreadyExists:
            raise problem(f"an execution named {name} already exists for {workload.name} in {env.name} (names are "
                          "unique for 90 days); choose another --name") from None
    arn = started["executionArn"]
    print(arn, flush=True)
    print(f"started {name}: {workload.name} in {env.name}, input {json.dumps(given)}", file=sys.stderr)
    print(f"  {target.execution_link(arn)}", file=sys.stderr, flush=True)
    if not args.follow:
        print(f"follow it with `trainctl logs {target.run_argument(arn)} --follow`", file=sys.stderr)
        return 0
    return following.follow(clients, target, arn, args.interval)


# ------------------------------------------------------------------------------------------------ runs


def run_status(described: Mapping[str, Any], run: RunSummary | None) -> str:
    """STATUS: the execution's, with the state machine's error (e.g. TrainingStalled) and how often the stall
    watchdog relaunched the run's job (a run that succeeded after a stall says so too)."""
    notes = [str(described["error"])] if described.get("error") else []
    if run is not None and isinstance(run.stall_relaunches, int) and run.stall_relaunches > 0:
        notes.append(f"Stalled: {run.stall_relaunches} relaunch(es)")
    return str(described["status"]) + (f" ({'; '.join(notes)})" if notes else "")


def _row(clients: Clients, target: Target, execution: dict[str, Any], now: datetime) -> list[str]:
    """One table row: what the execution's history and summary say about the run."""
    described = clients.sfn.describe_execution(executionArn=execution["executionArn"])
    events = history(clients, target, execution["executionArn"])
    jobs = launches(events)
    run = summary(described, events)
    status = run_status(described, run)
    if run and run.instance_type:
        resources = f"{run.instance_count or '?'} x {run.instance_type}"
    else:
        resources = jobs[-1].resources if jobs else "-"
    estimate = run.cost_usd if run else None
    return [
        described["name"], status, described["startDate"].astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
        duration(elapsed(described, now)) + (" so far" if described["status"] == RUNNING else ""),
        ", ".join(j.job_name for j in jobs) or "-", resources, f"${estimate:.2f}" if estimate is not None else "-",
    ]


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
                     for r in [header, *rows])


def runs(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise problem("--limit: give a number of runs from 1")
    target = workload_target(project_of(args, args.workload), args.workload, args.env)
    clients = Clients(target.env, args.profile)
    executions = recent_executions(clients, target, args.limit)
    if not executions:
        print(f"no runs of {target.workload} in {target.env.name} yet; start one with "
              f"`trainctl start {target.workload} --env {target.env.name}`", file=sys.stderr)
        return 0
    now = datetime.now(UTC)
    with aws_errors(target, "reading the runs"):
        rows = [_row(clients, target, e, now) for e in executions]
    print(table(rows, ["NAME", "STATUS", "STARTED (UTC)", "DURATION", "JOBS", "INSTANCES", "EST. COST"]))
    print(f"EST. COST: billable time x {catalog.price_source(target.env.region)}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------------------------------------ logs, stop


def logs(args: argparse.Namespace) -> int:
    _check_interval(args)
    ref = parse_run(project_of(args), args.run, args.env)
    clients = Clients(ref.target.env, args.profile)
    described = resolve_run(clients, ref)
    arn = described["executionArn"]
    print(f"run {described['name']} ({described['status']}): {ref.target.execution_link(arn)}", file=sys.stderr)
    if args.follow:
        return following.follow(clients, ref.target, arn, args.interval)
    follower = following.Follower(clients, ref.target, arn, interval=0)
    follower.poll(complete=True)
    if not follower.jobs:
        print("no training job yet", file=sys.stderr)
    return 0


def stop(args: argparse.Namespace) -> int:
    ref = parse_run(project_of(args), args.run, args.env)
    clients = Clients(ref.target.env, args.profile)
    described = resolve_run(clients, ref, running=True)
    arn = described["executionArn"]
    if described["status"] != RUNNING:
        print(f"run {described['name']} already ended ({described['status']}): nothing to stop", file=sys.stderr)
        return 0
    following.stop_execution(clients, ref.target, arn)
    print(arn)
    print(f"stopping {described['name']}: the environment's job reaper stops its training job about a minute after "
          f"the run ends; see it with `trainctl runs {ref.target.workload} --env {ref.target.env.name}`",
          file=sys.stderr)
    return 0


# ------------------------------------------------------------------------------------------------ the parser


def _interval(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL, metavar="SECONDS",
                        help=f"seconds between polls while following (default {DEFAULT_INTERVAL:g})")


def _profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default=None, help="AWS profile (default: the usual boto3 credential chain)")


def add_commands(sub: argparse._SubParsersAction) -> None:
    run_help = ("an execution ARN, or with --env: WORKLOAD/NAME (the execution NAME) or WORKLOAD (its latest run)")
    p = sub.add_parser("start", help="start a training run of a deployed workload",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", help="a workload name (workloads/NAME.yaml) or a path to its YAML spec")
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.add_argument("-p", "--hyperparameter", action="append", metavar="NAME=VALUE",
                   help="override a hyperparameter the spec declares (repeatable)")
    p.add_argument("--instance-count", type=int, default=None, metavar="N",
                   help="instances for this run (up to the spec's max_instance_count)")
    p.add_argument("--max-run", type=int, default=None, metavar="SECONDS", help="run time limit (up to the spec's)")
    p.add_argument("--name", default=None, help="execution name (default: <user>-<UTC time>-<random>)")
    p.add_argument("--follow", action="store_true", help="show job status and logs until the run ends")
    _interval(p)
    _profile(p)
    p.set_defaults(func=start)

    p = sub.add_parser("runs", help="recent runs of a workload: status, jobs, instances, estimated cost",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", help="a workload name")
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.add_argument("--limit", type=int, default=10, metavar="N", help="how many runs, newest first (default 10)")
    _profile(p)
    p.set_defaults(func=runs)

    p = sub.add_parser("logs", help="a run's training logs, every host in timestamp order",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", metavar="RUN", help=run_help)
    p.add_argument("--env", default=None, help="environment name from cdk.json (for WORKLOAD forms of RUN)")
    p.add_argument("--follow", action="store_true", help="keep following until the run ends")
    _interval(p)
    _profile(p)
    p.set_defaults(func=logs)

    p = sub.add_parser("stop", help="stop a run (the job reaper then stops its training job)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", metavar="RUN", help=run_help.replace("its latest run", "its one running run"))
    p.add_argument("--env", default=None, help="environment name from cdk.json (for WORKLOAD forms of RUN)")
    _profile(p)
    p.set_defaults(func=stop)
