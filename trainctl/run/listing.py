"""`trainctl runs`: the table of a workload's recent runs, from each execution's history and summary."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from compiler.errors import printable
from compiler.facts import catalog
from compiler.facts.summaries import RunSummary
from trainctl.common.aws import Clients, aws_errors
from trainctl.common.errors import problem
from trainctl.common.lookup import project_of
from trainctl.common.money import money
from trainctl.common.target import Target, workload_target
from trainctl.run.durations import duration, elapsed
from trainctl.run.history import history, launches
from trainctl.run.resolve import RUNNING, recent_executions
from trainctl.run.summary import summary


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
    return [
        described["name"], status, described["startDate"].astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
        duration(elapsed(described, now)) + (" so far" if described["status"] == RUNNING else ""),
        ", ".join(j.job_name for j in jobs) or "-", resources, money(run.cost_usd if run else None, grouped=False, missing="-"),
    ]


def table(rows: list[list[str]], header: list[str]) -> str:
    """Aligned columns; each cell escaped (a run's error and its jobs' text are the job's to write) and on one line."""
    rows = [[printable(cell, keep_layout=False) for cell in row] for row in rows]
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
