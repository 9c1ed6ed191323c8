"""`trainctl start`: a run of a deployed workload, its overrides checked before anything starts.

The overrides are checked with the workload's `OverridePolicy.check()`, the same rules (and messages) the state
machine's first states apply, so a run the state machine would refuse is refused here. The execution input is exactly
what the state machine takes: `{}` runs the spec as written; `hyperparameters`, `instance_count` and `max_run` appear
only when given. `-p NAME=VALUE` reads VALUE by the type of the spec's value: as text where the spec has a string (so
`-p tag=10` stays the string "10"), else as JSON (`-p lr=3e-4`, `-p compile=false`, `-p layers=[64,32]`).
"""

from __future__ import annotations

import argparse
import getpass
import json
import re
import secrets
import sys
from datetime import UTC, datetime
from typing import Any

from compiler.compilation.overrides import OverridePolicy
from compiler.errors import warning_line
from compiler.spec import load_workload
from trainctl.common.aws import Clients, aws_errors
from trainctl.common.errors import problem
from trainctl.common.lookup import environment, project_of
from trainctl.common.overrides import parse_hyperparameters
from trainctl.common.target import Target
from trainctl.run.follow import check_interval, follow
from trainctl.run.resolve import check_execution_name


def execution_input(args: argparse.Namespace, policy: OverridePolicy) -> dict[str, Any]:
    """The execution input the state machine expects, from the command line's overrides."""
    hyperparameters = parse_hyperparameters(args.hyperparameter or [], policy.expected_types())
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


def start(args: argparse.Namespace) -> int:
    check_interval(args)
    project = project_of(args, args.workload)
    env = environment(project, args.env)
    workload = load_workload(project, args.workload, env)
    for warning in workload.warnings:
        print(warning_line(warning), file=sys.stderr)
    policy = OverridePolicy.of(workload, env.region)
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
    return follow(clients, target, arn, args.interval)
