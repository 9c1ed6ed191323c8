"""What a spec's `schedule:` (read by compiler.inputs.schedule) does: its next runs, and what it may cost a month.

The projection (next runs, runs in the busiest month, worst-case cost) follows the service's documented daylight
saving rule: a local time that does not exist is skipped, one that repeats runs once. Pure: no AWS call.
"""

from __future__ import annotations

import calendar
import itertools
import json
import math
import zoneinfo
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from compiler.compilation.overrides import OverridePolicy
from compiler.errors import Problem
from compiler.facts import catalog
from compiler.inputs.environments import Environment
from compiler.inputs.model import Schedule, Workload
from compiler.inputs.reader import Findings
from compiler.inputs.schedule import HOURS_IN_LONGEST_MONTH, KEY, Cron, parse_expression

# ------------------------------------------------------------------------------------------------- projection


def _offset(zone: zoneinfo.ZoneInfo, day: date) -> timedelta | None:
    return datetime(day.year, day.month, day.day, tzinfo=zone).utcoffset()


def _exists(local: datetime, zone: zoneinfo.ZoneInfo) -> bool:
    """False for a local time skipped by a daylight saving change (the service skips that run)."""
    aware = local.replace(tzinfo=zone)
    return datetime.fromtimestamp(aware.timestamp(), zone).replace(tzinfo=None) == local


def runs_on(cron: Cron, day: date, zone: zoneinfo.ZoneInfo) -> list[datetime]:
    """The runs of one local date, as aware datetimes; a repeated local time runs once (fold 0)."""
    if not cron.on(day):
        return []
    times = [datetime(day.year, day.month, day.day, h, m) for h, m in cron.times()]
    if _offset(zone, day) != _offset(zone, day + timedelta(days=1)):
        times = [t for t in times if _exists(t, zone)]
    return [t.replace(tzinfo=zone) for t in times]


def count_on(cron: Cron, day: date, zone: zoneinfo.ZoneInfo) -> int:
    if not cron.on(day):
        return 0
    if _offset(zone, day) == _offset(zone, day + timedelta(days=1)):
        return len(cron.hours) * len(cron.minutes)
    return len(runs_on(cron, day, zone))


def next_runs(expression: str, timezone: str, after: datetime, count: int = 3) -> list[datetime]:
    """The next runs of a cron schedule after `after` (aware), within 5 years; [] for a rate (it runs from deploy)."""
    parsed = parse_expression(expression)
    if isinstance(parsed, int):
        return []
    zone = zoneinfo.ZoneInfo(timezone)
    found: list[datetime] = []
    day = after.astimezone(zone).date()
    for _ in range(5 * 366):
        found += [t for t in runs_on(parsed, day, zone) if t > after][: count - len(found)]
        if len(found) == count:
            break
        day += timedelta(days=1)
    return found


def _months(start: date, count: int) -> Iterator[tuple[int, int]]:
    year, month = start.year, start.month
    for _ in range(count):
        yield year, month
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)


def runs_per_month(expression: str, timezone: str, start: date) -> int:
    """Runs in the busiest calendar month of the twelve from `start`'s month (a rate: in 31 days)."""
    parsed = parse_expression(expression)
    if isinstance(parsed, int):
        return math.ceil(31 * 86400 / parsed)
    zone = zoneinfo.ZoneInfo(timezone)
    busiest = 0
    for year, month in _months(start, 12):
        days = calendar.monthrange(year, month)[1]
        busiest = max(busiest, sum(count_on(parsed, date(year, month, d), zone) for d in range(1, days + 1)))
    return busiest


def shortest_interval(expression: str, start: date) -> int | None:
    """Seconds between the two closest runs in the year from `start` (daylight saving aside); None: under two runs."""
    parsed = parse_expression(expression)
    if isinstance(parsed, int):
        return parsed
    times = [h * 3600 + m * 60 for h, m in parsed.times()]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    days = [d for d in (start + timedelta(days=i) for i in range(366)) if parsed.on(d)]
    gaps += [(b - a).days * 86400 - times[-1] + times[0] for a, b in itertools.pairwise(days)]
    return min(gaps) if gaps and days else None


# ------------------------------------------------------------------------------------------------- cost


def run_hours(workload: Workload) -> float:
    """The longest a scheduled run may train: its input's max_run, else the spec's."""
    max_run = workload.schedule.input.get("max_run") if workload.schedule else None
    return (max_run if isinstance(max_run, int) else workload.max_run) / 3600


def hourly_worst_case(workload: Workload, region: str) -> float | None:
    """List price per hour of the cluster a scheduled run may use: its instance count, the dearest fallback type."""
    if workload.compute.instance_groups:
        return workload.hourly_cost(region)
    given = workload.schedule.input.get("instance_count") if workload.schedule else None
    count = given if isinstance(given, int) else workload.instance_count
    prices = [catalog.hourly_cost(t, count, region)
              for t in workload.launch_types]
    return None if any(p is None for p in prices) else max(p for p in prices if p is not None)


@dataclass(frozen=True)
class Projection:
    """What a schedule may cost a month at list prices, worst case (every run lasts max_run)."""

    runs_per_month: int
    cost_per_run: float | None
    cost_per_month: float | None


def projection(expression: str, timezone: str, hourly: float | None, run_seconds: int, concurrent: bool,
               start: date) -> Projection:
    """Runs in the busiest month x the longest run. Without concurrent runs a start is skipped while another run goes
    on, so a month never holds more than 31 days of the cluster."""
    runs = runs_per_month(expression, timezone, start)
    if hourly is None:
        return Projection(runs, None, None)
    hours = runs * run_seconds / 3600
    if not concurrent:
        hours = min(hours, HOURS_IN_LONGEST_MONTH)
    return Projection(runs, round(hourly * run_seconds / 3600, 2), round(hourly * hours, 2))


def describe_schedule(workload: Workload, env: Environment) -> dict[str, Any] | None:
    """The facts `trainctl review` compares and projects (template metadata of the schedule), at the environment's
    prices; None: no schedule."""
    schedule = workload.schedule
    if schedule is None:
        return None
    return {"workload": workload.name, "environment": env.name, "expression": schedule.expression,
            "timezone": schedule.timezone, "input": dict(schedule.input), "worst_cost_per_hour_usd":
            hourly_worst_case(workload, env.region), "max_run": int(run_hours(workload) * 3600),
            "concurrent_runs": workload.concurrent_runs, "prices": catalog.price_source(env.region)}


def project(workload: Workload, env: Environment, start: date) -> Projection | None:
    """The workload's schedule projected from `start` at the environment's list prices, worst case (every run lasts
    max_run)."""
    facts = describe_schedule(workload, env)
    if facts is None:
        return None
    return projection(facts["expression"], facts["timezone"], facts["worst_cost_per_hour_usd"], facts["max_run"],
                      workload.concurrent_runs, start)


# ------------------------------------------------------------------------------------------------- checks


def input_problems(workload: Workload, env: Environment, findings: Findings) -> None:
    """The schedule's input as a console start in an environment it runs in would be checked (the cost ceiling at
    that environment's prices)."""
    schedule = workload.schedule
    if schedule is None or not schedule.applies_to(env.name):
        return
    for message in OverridePolicy.of(workload, env.region).check(dict(schedule.input)):
        findings.problem(f"{KEY}.input", f"{message} (a scheduled run starts with this input, as a console start "
                         "would)")


def overlap_warnings(workload: Workload, findings: Findings, start: date) -> None:
    """A warning where runs would overlap: the shortest interval between starts is below the longest run."""
    schedule = workload.schedule
    if schedule is None:
        return
    interval = shortest_interval(schedule.expression, start)
    longest = int(run_hours(workload) * 3600)
    if interval is None or interval >= longest:
        return
    if workload.concurrent_runs:
        findings.warn(KEY, f"runs start {interval // 60} minutes apart at the closest, and max_run is {longest} s: with "
                      "concurrent_runs they may pile up, each a full cluster")
    else:
        findings.warn(KEY, f"runs start {interval // 60} minutes apart at the closest, and max_run is {longest} s: a "
                      "start while a run is still going ends at once with AlreadyRunning (skipped, no job), which "
                      "counts as a failed execution and raises the failed-runs alarm; lower max_run or space the runs")


def environment_problems(base: Mapping[str, Workload], deployed: Mapping[str, Mapping[str, Any]]) -> list[Problem]:
    """`schedule.environments` names environments the workload deploys to (`deployed`: environment -> workloads)."""
    problems = []
    for workload in base.values():
        for env in (workload.schedule.environments or ()) if workload.schedule else ():
            if workload.name in deployed.get(env, {}):
                continue
            where = sorted(e for e, names in deployed.items() if workload.name in names)
            known = "is not an environment of cdk.json" if env not in deployed else "is not one the workload deploys to"
            problems.append(Problem(workload.source, f"{KEY}.environments", f"{env!r} {known}; it deploys to "
                                    f"{', '.join(where) or 'none'}"))
    return problems


def budget_warnings(env: Environment, workloads: Iterable[Workload], start: date) -> list[Problem]:
    """A warning when the environment's schedules may cost more a month than its monthly budget (worst case)."""
    if env.monthly_budget_usd is None:
        return []
    where = f"{env.name}.monthly_budget_usd"
    scheduled = [w for w in workloads if w.schedule is not None and w.schedule.applies_to(env.name)]
    projections = {w.name: project(w, env, start) for w in scheduled}
    unpriced = sorted(name for name, p in projections.items() if p is None or p.cost_per_month is None)
    if unpriced:  # no projection beats a low one: say which and why
        types = {t for w in scheduled if w.name in unpriced
                 for t in w.launch_types if catalog.price(t, env.region) is None}
        return [Problem("cdk.json", where, f"the schedules of {', '.join(unpriced)} cannot be projected against the "
                        f"budget: {catalog.missing_price(types, env.region)}")]
    total = round(sum(p.cost_per_month or 0.0 for p in projections.values() if p is not None), 2)
    if total <= env.monthly_budget_usd:
        return []
    return [Problem("cdk.json", where, f"the schedules of {env.name} may cost up to ${total:,.2f} a month (every run "
                    f"lasting max_run, at {catalog.price_source(env.region)}), more than the budget of "
                    f"${env.monthly_budget_usd:,.2f}; raise the budget, or run less often or shorter")]


SCHEDULE_TEMPLATE_BYTES = 3_000  # the schedule, its role and policy as the template file holds them (about 2.6 KB)


def template_bytes(schedule: Schedule) -> int:
    """What a schedule adds to its workload stack's template: its resources, and its input three times over (the
    target's escaped JSON string and the metadata's indented copy)."""
    return SCHEDULE_TEMPLATE_BYTES + 3 * len(json.dumps(dict(schedule.input)))


def layout_bytes(workloads: Iterable[Workload], env: str) -> dict[str, int]:
    """Per workload scheduled in `env`, the bytes its schedule adds to the shard (compiler/compilation/stack_layout.py)."""
    return {w.name: template_bytes(w.schedule) for w in workloads
            if w.schedule is not None and w.schedule.applies_to(env)}
