"""`trainctl stop RUN`: stop a run; the environment's job reaper then stops its training job."""

from __future__ import annotations

import argparse
import sys

from trainctl.common.aws import Clients, aws_errors
from trainctl.common.lookup import project_of
from trainctl.common.target import Target
from trainctl.run.resolve import RUNNING, parse_run, resolve_run


def stop(args: argparse.Namespace) -> int:
    ref = parse_run(project_of(args), args.run, args.env)
    clients = Clients(ref.target.env, args.profile)
    described = resolve_run(clients, ref, running=True)
    arn = described["executionArn"]
    if described["status"] != RUNNING:
        print(f"run {described['name']} already ended ({described['status']}): nothing to stop", file=sys.stderr)
        return 0
    stop_execution(clients, ref.target, arn)
    print(arn)
    print(f"stopping {described['name']}: the environment's job reaper stops its training job about a minute after "
          f"the run ends; see it with `trainctl runs {ref.target.workload} --env {ref.target.env.name}`",
          file=sys.stderr)
    return 0


def stop_execution(clients: Clients, target: Target, execution_arn: str) -> None:
    with aws_errors(target, "stopping the execution"):
        clients.sfn.stop_execution(executionArn=execution_arn, error="StoppedByUser",
                                   cause="stopped from the command line (trainctl)")
