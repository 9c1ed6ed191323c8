"""`trainctl logs RUN`: a run's training logs, every host in timestamp order, once or `--follow`ing it."""

from __future__ import annotations

import argparse
import sys

from trainctl.common.aws import Clients
from trainctl.common.lookup import project_of
from trainctl.run.follow import Follower, check_interval, follow
from trainctl.run.resolve import parse_run, resolve_run


def logs(args: argparse.Namespace) -> int:
    check_interval(args)
    ref = parse_run(project_of(args), args.run, args.env)
    clients = Clients(ref.target.env, args.profile)
    described = resolve_run(clients, ref)
    arn = described["executionArn"]
    print(f"run {described['name']} ({described['status']}): {ref.target.execution_link(arn)}", file=sys.stderr)
    if args.follow:
        return follow(clients, ref.target, arn, args.interval)
    follower = Follower(clients, ref.target, arn, interval=0)
    follower.poll(complete=True)
    if not follower.jobs:
        print("no training job yet", file=sys.stderr)
    return 0
