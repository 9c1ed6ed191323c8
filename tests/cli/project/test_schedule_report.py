"""Issue 25: `trainctl summary` and `trainctl review` show each schedule with its projected runs and worst-case cost,
and the environment's monthly budget. ml.g5.2xlarge lists at $1.515 an hour (compiler/facts/data/prices/us-east-1.json)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from compiler.compilation import schedules
from compiler.compilation.describe import workload_summary
from compiler.facts.summaries import WorkloadSummary
from compiler.spec import parse_workload
from tests.project import ENVIRONMENTS
from trainctl.common.assembly import Placed
from trainctl.project.schedule_report import (
    BUDGET_METADATA,
    SCHEDULE_METADATA,
    WORKLOAD_METADATA,
    cost_lines,
    review_lines,
    summary_lines,
)

NOW = datetime(2027, 1, 4, 12, tzinfo=UTC)  # a Monday
DEV = ENVIRONMENTS["dev"]


def _workload(tmp_path: Path, schedule: Any, **changes: Any) -> Any:
    (tmp_path / "train.py").write_text("print('hi')\n")
    raw = {"name": "demo", "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311",
           "entry_point": "train.py", "instance_type": "ml.g5.2xlarge", "instance_count": 1, "max_run": 7200,
           "schedule": schedule, **changes}
    return parse_workload(raw, source="demo.yaml", spec_dir=tmp_path, project_root=tmp_path)


def _summary(tmp_path: Path, workload: Any, budget: float | None, env: Any = DEV) -> list[str]:
    """The summary's lines for one environment whose templates hold the workload's state machine and, where it is
    scheduled there, its schedule, as synth writes them (the plan's facts in their metadata), and the budget."""
    facts = schedules.describe_schedule(workload, env) if workload.schedule.applies_to(env.name) else None
    templates = _templates(facts, budget)
    templates["Runs"]["Resources"]["M"] = {"Type": "AWS::StepFunctions::StateMachine",
                                           "Metadata": {WORKLOAD_METADATA: workload_summary(workload, env)}}
    return summary_lines(templates, env.name, NOW)


def test_the_summary_shows_the_schedule_its_next_runs_and_worst_case_cost(tmp_path: Path) -> None:
    workload = _workload(tmp_path, "cron(0 2 ? * MON-FRI *)")
    lines = _summary(tmp_path, workload, 2000)
    # January 2027 ... December 2027: at most 23 weekdays a month; 2 h x $1.515 = $3.03 a run
    assert "| demo | `cron(0 2 ? * MON-FRI *)` | UTC | 2027-01-05 02:00 UTC, 2027-01-06 02:00 UTC | 23 | $3.03 | $69.69 |" \
        in lines
    assert ("Monthly budget: $2,000.00 (AWS Budgets `dev-training`: 80% of the actual and 100% of the forecast cost "
            "notify `dev-training-runs`); scheduled runs may take up to $69.69 a month.") in lines


def test_a_budget_the_schedules_may_exceed_is_pointed_out(tmp_path: Path) -> None:
    lines = _summary(tmp_path, _workload(tmp_path, "rate(1 day)"), 50)
    assert any("up to $93.93 a month **more than the budget**" in line for line in lines)  # 31 x $3.03


def test_without_schedules_or_budget_the_summary_says_so(tmp_path: Path) -> None:
    workload = _workload(tmp_path, {"expression": "rate(1 day)", "environments": ["prod"]})
    lines = _summary(tmp_path, workload, None)
    assert "No schedules: runs start only by hand." in lines
    assert lines[-2].startswith("Monthly budget: none")


def _templates(schedule: dict[str, Any] | None, budget: float | None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if schedule is not None:
        resources["S"] = {"Type": "AWS::Scheduler::Schedule", "Metadata": {SCHEDULE_METADATA: schedule}}
    if budget is not None:
        resources["B"] = {"Type": "AWS::Budgets::Budget", "Metadata": {BUDGET_METADATA: {"monthly_budget_usd": budget}}}
    return {"Runs": {"Resources": resources}}


def test_the_review_shows_a_schedule_added_and_the_budget_before_and_after(tmp_path: Path) -> None:
    facts = schedules.describe_schedule(_workload(tmp_path, "rate(1 day)"), DEV)
    lines = review_lines(_templates(None, None), _templates(facts, 2000), date(2027, 1, 1))
    assert "| demo | - | `rate(1 day)` UTC: 31 runs, up to $93.93 |" in lines
    assert lines[-1] == "Monthly budget: $2,000.00 (none before)."
    same = review_lines(_templates(facts, 2000), _templates(facts, 2000), date(2027, 1, 1))
    assert same == ["Schedules unchanged (1).", "", "Cost ceilings and scheduled costs unchanged.", "",
                    "Monthly budget: $2,000.00 (unchanged)."]


def _machine(tmp_path: Path, **changes: Any) -> dict[str, Any]:
    """A state machine as the Workloads stack writes it: the workload summary in its metadata
    (compiler/compilation/describe.py)."""
    (tmp_path / "train.py").write_text("print('hi')\n")
    raw = {"name": "demo", "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311",
           "entry_point": "train.py", "instance_type": "ml.g5.2xlarge", "instance_count": 1, "max_run": 7200, **changes}
    workload = parse_workload(raw, source="demo.yaml", spec_dir=tmp_path, project_root=tmp_path)
    return {"Type": "AWS::StepFunctions::StateMachine", "Metadata": {WORKLOAD_METADATA: workload_summary(workload, DEV)}}


def test_the_review_shows_the_cost_ceiling_and_scheduled_cost_of_each_changed_workload(tmp_path: Path) -> None:
    facts = schedules.describe_schedule(_workload(tmp_path, "rate(1 day)"), DEV)
    old = _templates(None, None)
    old["Runs"]["Resources"]["M"] = _machine(tmp_path)
    new = _templates(facts, None)
    new["Runs"]["Resources"]["M"] = _machine(tmp_path, max_run_cost_usd=3.5)
    lines = cost_lines(old, new, date(2027, 1, 1))
    # 2 h x $1.515 = $3.03 a run (the spec's worst case); 31 runs in January
    assert lines == [
        "| Workload | Cost ceiling before | Cost ceiling after | Schedule $/month before | Schedule $/month after |",
        "|---|---|---|---|---|",
        "| demo | none | $3.50/run (the spec's worst case $3.03) | no schedule | up to $93.93 |",
        "",
        "Prices after: us-east-1 list prices as of 2026-11."]
    assert cost_lines(new, new, date(2027, 1, 1)) == ["Cost ceilings and scheduled costs unchanged."]


def test_without_prices_in_the_region_the_review_and_budget_say_so(tmp_path: Path) -> None:
    west = dataclasses.replace(DEV, name="west", region="us-west-2", monthly_budget_usd=100)
    workload = _workload(tmp_path, "rate(1 day)")
    assert schedules.project(workload, west, date(2027, 1, 1)) == schedules.Projection(31, None, None)
    [warning] = map(str, schedules.budget_warnings(west, [workload], date(2027, 1, 1)))
    assert warning.startswith("cdk.json: west.monthly_budget_usd: the schedules of demo cannot be projected against "
                              "the budget: no verified us-west-2 prices for ml.g5.2xlarge")
    assert "trainctl prices --region us-west-2" in warning
    facts = schedules.describe_schedule(workload, west)
    assert facts is not None and facts["prices"].startswith("no verified us-west-2 prices")
    assert cost_lines({}, _templates(facts, None), date(2027, 1, 1))[-1].startswith(
        "Prices after: no verified us-west-2 prices: run `trainctl prices --region us-west-2`")


SPOT = {"use_spot_instances": True, "max_wait": 7200, "checkpoints": True}


def test_a_spot_workloads_costs_are_labelled_as_on_demand_ceilings(tmp_path: Path) -> None:
    """No offline source gives SageMaker's managed spot rate (issue 36): the on-demand list price is the most an hour
    costs, and every cost of a spot workload says so, in the summary and the review alike."""
    from trainctl.project.summary import workload_rows

    spot = _workload(tmp_path, "cron(0 2 ? * MON-FRI *)", **SPOT)
    lines = _summary(tmp_path, spot, None)
    assert ("| demo | `cron(0 2 ? * MON-FRI *)` | UTC | 2027-01-05 02:00 UTC, 2027-01-06 02:00 UTC | 23 "
            "| ≤ $3.03 spot (on-demand ceiling) | ≤ $69.69 spot (on-demand ceiling) |") in lines
    placed = Placed("Workloads07", WorkloadSummary.of(workload_summary(spot, DEV)))
    [_, _, row, _] = workload_rows({"demo": placed}, "us-east-1")
    assert row.split(" | ")[-1] == "≤ 1.51 spot (on-demand ceiling) |"  # $1.515 an hour, two places
    facts = schedules.describe_schedule(spot, DEV)
    new = _templates(facts, None)
    new["Runs"]["Resources"]["M"] = _machine(tmp_path, **SPOT)
    lines = cost_lines(_templates(None, None), new, date(2027, 1, 1))
    assert "| demo | - | none | no schedule | up to ≤ $69.69 spot (on-demand ceiling) |" in lines
    assert "| demo | - | `cron(0 2 ? * MON-FRI *)` UTC: 23 runs, up to ≤ $69.69 spot (on-demand ceiling) |" in \
        review_lines(_templates(None, None), new, date(2027, 1, 1))
