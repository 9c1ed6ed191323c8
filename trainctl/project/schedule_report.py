"""Schedules, cost ceilings and the monthly budget in `trainctl summary` and `trainctl review`: what starts by itself,
what it may cost a month (worst case: every run lasts max_run, at the list prices of the environment's region), what
one run may cost at most (`max_run_cost_usd`), and the budget that watches it all.

Both read the facts each schedule, state machine and budget carries in its template metadata
(platform_constructs/schedule.py, budget.py, workload.py): the summary of one synthesized assembly, the review of two
revisions, read the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from compiler.compilation import schedules
from compiler.compilation.describe import METADATA_KEY
from trainctl.common.assembly import metadata
from trainctl.common.money import money, spot_ceiling

SCHEDULE_METADATA = "training-platform:schedule"  # platform_constructs/schedule.py
BUDGET_METADATA = "training-platform:budget"  # platform_constructs/budget.py
WORKLOAD_METADATA = METADATA_KEY  # on each workload's state machine
WORST_CASE = "worst case at list prices: every run lasts max_run on the dearest of its instance types"


def _projected(facts: Mapping[str, Any], today: date) -> schedules.Projection | None:
    try:
        return schedules.projection(facts["expression"], facts["timezone"], facts.get("worst_cost_per_hour_usd"),
                                    int(facts["max_run"]), bool(facts.get("concurrent_runs")), today)
    except (KeyError, TypeError, ValueError):  # facts of a revision that wrote them differently
        return None


def _next(facts: Mapping[str, Any], now: datetime) -> str:
    try:
        runs = schedules.next_runs(facts["expression"], facts["timezone"], now, 2)
    except (KeyError, TypeError, ValueError):  # facts of a revision that wrote them differently
        return "n/a"
    if not runs:
        return "from each deploy" if facts["expression"].startswith("rate(") else "none"
    return ", ".join(t.strftime("%Y-%m-%d %H:%M %Z") for t in runs)


def budget_line(env: str, budget: Mapping[str, Any] | None, scheduled: float | None) -> str:
    """The environment's budget (its template metadata, `budget.py`), and how much of it the schedules may take."""
    amount = (budget or {}).get("monthly_budget_usd")
    if amount is None:
        return "Monthly budget: none (set `monthly_budget_usd` in cdk.json for an AWS Budgets budget on the runs topic)."
    line = (f"Monthly budget: {money(amount)} (AWS Budgets `{(budget or {}).get('name', f'{env}-training')}`: 80% of "
            f"the actual and 100% of the forecast cost notify `{env}-training-runs`)")
    if scheduled:
        over = " **more than the budget**" if scheduled > amount else ""
        line += f"; scheduled runs may take up to {money(scheduled)} a month{over}"
    return line + "."


def summary_lines(templates: Mapping[str, Mapping[str, Any]], env: str, now: datetime | None = None) -> list[str]:
    """The summary's schedules table and budget line for one environment (stack name -> template), from the facts its
    schedules, state machines and budget carry, as the review reads them."""
    now = now or datetime.now(UTC)
    rows = [f"| Workload | Schedule | Time zone | Next runs | Runs in the busiest month | $/run | $/month ({WORST_CASE}) |",
            "|---|---|---|---|---|---|---|"]
    total: float | None = 0.0
    spot = _spot(templates)
    for facts in sorted(_metadata(templates, "AWS::Scheduler::Schedule", SCHEDULE_METADATA),
                        key=lambda f: str(f.get("workload"))):
        p = _projected(facts, now.date())
        cost = p.cost_per_month if p else None
        total = None if total is None or cost is None else total + cost
        on_spot = facts.get("workload") in spot
        rows.append(f"| {facts.get('workload')} | `{facts.get('expression')}` | {facts.get('timezone')} | "
                    f"{_next(facts, now)} | {p.runs_per_month if p else 'n/a'} "
                    f"| {spot_ceiling(money(p.cost_per_run if p else None), spot=on_spot)} "
                    f"| {spot_ceiling(money(cost), spot=on_spot)} |")
    lines = [*rows, ""] if len(rows) > 2 else ["No schedules: runs start only by hand.", ""]
    budgets = _metadata(templates, "AWS::Budgets::Budget", BUDGET_METADATA)
    return [*lines, budget_line(env, budgets[0] if budgets else None, total), ""]


# ------------------------------------------------------------------------------------------------- review


def _metadata(templates: Mapping[str, Mapping[str, Any]], kind: str, key: str) -> list[dict[str, Any]]:
    """The facts `key` of one environment's resources of type `kind` (stack name -> template)."""
    return metadata(templates.values(), kind, key)


def _spot(templates: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The workloads whose summary says they run on managed spot (their costs are on-demand ceilings)."""
    return {str(s.get("name")) for s in _metadata(templates, "AWS::StepFunctions::StateMachine", WORKLOAD_METADATA)
            if s.get("spot")}


def _schedule_cell(facts: Mapping[str, Any] | None, today: date, spot: bool = False) -> str:
    if facts is None:
        return "-"
    p = _projected(facts, today)
    runs = f"{p.runs_per_month} runs, up to {spot_ceiling(money(p.cost_per_month), spot=spot)}" if p else "n/a"
    return f"`{facts.get('expression')}` {facts.get('timezone')}: {runs}"


def review_lines(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]],
                 today: date | None = None) -> list[str]:
    """The review's schedules and budget of one environment, base (`old`) against head (`new`) templates."""
    today = today or date.today()
    before = {s["workload"]: s for s in _metadata(old, "AWS::Scheduler::Schedule", SCHEDULE_METADATA)}
    after = {s["workload"]: s for s in _metadata(new, "AWS::Scheduler::Schedule", SCHEDULE_METADATA)}
    rows = [f"| Workload | Schedule before | Schedule after ({WORST_CASE}) |", "|---|---|---|"]
    spot_before, spot_after = _spot(old), _spot(new)
    rows += [f"| {name} | {_schedule_cell(before.get(name), today, name in spot_before)} "
             f"| {_schedule_cell(after.get(name), today, name in spot_after)} |"
             for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]
    lines = rows if len(rows) > 2 else [f"Schedules unchanged ({len(after)})."]
    lines += ["", *cost_lines(old, new, today)]
    budgets = [_metadata(side, "AWS::Budgets::Budget", BUDGET_METADATA) for side in (old, new)]
    amounts = [money(b[0].get("monthly_budget_usd")) if b else "none" for b in budgets]
    verb = "unchanged" if amounts[0] == amounts[1] else f"{amounts[0]} before"
    return [*lines, "", f"Monthly budget: {amounts[1]} ({verb})."]


def _ceiling_cell(summary: Mapping[str, Any] | None) -> str:
    if summary is None:
        return "-"
    ceiling = summary.get("max_run_cost_usd")
    if ceiling is None:
        return "none"
    return f"{money(ceiling)}/run (the spec's worst case {money(summary.get('worst_case_run_usd'))})"


def _monthly_cell(facts: Mapping[str, Any] | None, today: date, machine: Mapping[str, Any] | None = None) -> str:
    if facts is None:
        return "no schedule"
    p = _projected(facts, today)
    return f"up to {spot_ceiling(money(p.cost_per_month if p else None), spot=bool((machine or {}).get('spot')))}"


def cost_lines(old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]], today: date) -> list[str]:
    """Each workload whose state machine or schedule changes: its per-run cost ceiling and its schedule's projected
    monthly cost (worst case), before and after, and whose prices the new figures use."""
    sides = []
    for templates in (old, new):
        machines = {s.get("name"): s for s in _metadata(templates, "AWS::StepFunctions::StateMachine", WORKLOAD_METADATA)}
        timed = {s.get("workload"): s for s in _metadata(templates, "AWS::Scheduler::Schedule", SCHEDULE_METADATA)}
        sides.append((machines, timed))
    (machines_before, timed_before), (machines_after, timed_after) = sides
    names = sorted(str(n) for n in {*machines_before, *machines_after, *timed_before, *timed_after} - {None}
                   if machines_before.get(n) != machines_after.get(n) or timed_before.get(n) != timed_after.get(n))
    if not names:
        return ["Cost ceilings and scheduled costs unchanged."]
    rows = ["| Workload | Cost ceiling before | Cost ceiling after | Schedule $/month before | Schedule $/month after |",
            "|---|---|---|---|---|"]
    rows += [f"| {n} | {_ceiling_cell(machines_before.get(n))} | {_ceiling_cell(machines_after.get(n))} "
             f"| {_monthly_cell(timed_before.get(n), today, machines_before.get(n))} "
             f"| {_monthly_cell(timed_after.get(n), today, machines_after.get(n))} |"
             for n in names]
    prices = sorted({str(s["prices"]) for side in (machines_after, timed_after) for n, s in side.items()
                     if n in names and s.get("prices")})
    return [*rows, "", f"Prices after: {'; '.join(prices) or 'not recorded by this revision'}."]
