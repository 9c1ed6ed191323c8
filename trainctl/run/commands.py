"""`start`, `runs`, `logs`, `stop`: training runs of a deployed workload, from the terminal. This module registers
them; each is a module of its own (start.py, listing.py, logs.py, stop.py), on what they share: naming a run and
finding its execution (resolve.py), its history (history.py) and summary (summary.py), and following it (follow.py).

RUN, for `logs` and `stop`: an execution ARN (the environment follows from its account and region), or with
`--env`: `WORKLOAD/NAME` (the execution named NAME) or `WORKLOAD` (its latest run; for `stop`, its one running run).
"""

from __future__ import annotations

import argparse

from trainctl.run import listing, logs, start, stop
from trainctl.run.follow import DEFAULT_INTERVAL

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
    p.set_defaults(func=start.start)

    p = sub.add_parser("runs", help="recent runs of a workload: status, jobs, instances, estimated cost",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", help="a workload name")
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.add_argument("--limit", type=int, default=10, metavar="N", help="how many runs, newest first (default 10)")
    _profile(p)
    p.set_defaults(func=listing.runs)

    p = sub.add_parser("logs", help="a run's training logs, every host in timestamp order",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", metavar="RUN", help=run_help)
    p.add_argument("--env", default=None, help="environment name from cdk.json (for WORKLOAD forms of RUN)")
    p.add_argument("--follow", action="store_true", help="keep following until the run ends")
    _interval(p)
    _profile(p)
    p.set_defaults(func=logs.logs)

    p = sub.add_parser("stop", help="stop a run (the job reaper then stops its training job)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", metavar="RUN", help=run_help.replace("its latest run", "its one running run"))
    p.add_argument("--env", default=None, help="environment name from cdk.json (for WORKLOAD forms of RUN)")
    _profile(p)
    p.set_defaults(func=stop.stop)
