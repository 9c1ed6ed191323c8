"""`schedule:` in a spec (issue 25): EventBridge Scheduler's documented formats, each rule at its boundary, the input
checked like a console start, and the projected runs and cost.

Expected values are the documents' own: "rate(1 hours) and rate(5 hour) aren't valid, but rate(1 hour) and rate(5
hours) are valid"; "Cron expressions have six required fields"; "If you specify a value or * in one of the fields, you
must use ? in the other"; "'3#1,6#3' is invalid"; ScheduleExpression 256 and ScheduleExpressionTimezone 50 characters
(botocore's scheduler model); a local time skipped by daylight saving time is skipped, not moved.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime
from typing import Any

import pytest

from compiler import rules
from compiler.compilation import schedules
from compiler.compilation.schedules import next_runs, runs_per_month, shortest_interval
from compiler.inputs import schedule as grammar
from compiler.inputs.environments import Environment
from compiler.inputs.model import Schedule, Workload
from compiler.inputs.reader import Findings
from compiler.inputs.schedule import ScheduleError, parse_expression

VALID = ["rate(1 minute)", "rate(5 minutes)", "rate(1 hour)", "rate(5 hours)", "rate(1 day)", "rate(7 days)",
         "cron(0 10 * * ? *)", "cron(15 12 * * ? *)", "cron(0 18 ? * MON-FRI *)", "cron(0 8 1 * ? *)",
         "cron(0/15 * * * ? *)", "cron(0/10 * ? * MON-FRI *)", "cron(0/5 8-17 ? * MON-FRI *)", "cron(0 9 ? * 2#1 *)",
         "cron(0 2 L * ? *)", "cron(0 2 15W * ? *)", "cron(0 2 ? * 6L *)", "cron(0 2 * JAN,FEB ? 2026-2199)"]


@pytest.mark.parametrize("expression", VALID)
def test_the_documented_examples_are_accepted(expression: str) -> None:
    parse_expression(expression)


@pytest.mark.parametrize(("expression", "words"), [
    ("rate(1 minutes)", "rate(1 minute)"), ("rate(1 hours)", "rate(1 hour)"), ("rate(5 hour)", "rate(5 hours)"),
    ("rate(2 day)", "rate(2 days)"), ("rate(0 minutes)", "positive"), ("rate(1 week)", "minute(s), hour(s) or day(s)"),
    ("rate(1.5 hours)", "whole number"), ("rate(5)", "whole number and a unit"),
    ("cron(0 2 * * *)", "6 fields"), ("cron(0 2 * * * * *)", "6 fields"), ("cron(0 2 * * * *)", "exactly one"),
    ("cron(0 2 ? * ? *)", "exactly one"), ("cron(0 2 ? * 3#1,6#3 *)", "one expression"), ("cron(60 2 * * ? *)", "0-59"),
    ("cron(0 24 * * ? *)", "0-23"), ("cron(0 2 32 * ? *)", "1-31"), ("cron(0 2 * 13 ? *)", "1-12"),
    ("cron(0 2 ? * 8 *)", "1-7"), ("cron(0 2 * * ? 1969)", "1970-2199"), ("cron(0 2 * * ? 2200)", "1970-2199"),
    ("cron(0 2 ? * 1/2 *)", "/"), ("cron(0 2 ? * 2#6 *)", "1-5"), ("cron(0 2 * * ? *", "cron(...) or rate(...)"),
    ("at(2026-12-01T02:00:00)", "one-time"), ("cron(0 17-9 * * ? *)", "backwards"), ("cron(0/0 * * * ? *)", "step"),
    ("cron(0 2 LW * ? *)", "15W"), ("cron(0 2 1? * * *)", "stands alone"),
])
def test_what_the_service_refuses_is_refused_with_the_fix(expression: str, words: str) -> None:
    with pytest.raises(ScheduleError, match=None) as info:
        parse_expression(expression)
    assert words in str(info.value)


def test_a_string_schedule_runs_in_utc_in_every_environment(make) -> None:
    workload = make(schedule="cron(0 2 * * ? *)")
    assert workload.schedule == Schedule(expression="cron(0 2 * * ? *)")
    assert workload.schedule.timezone == "UTC" and workload.schedule.applies_to("prod")


def test_a_mapping_schedule_names_its_time_zone_environments_and_input(make) -> None:
    workload = make(schedule={"expression": "rate(1 day)", "timezone": "Europe/Berlin", "environments": ["dev"],
                              "input": {"hyperparameters": {"epochs": 1}}})
    assert workload.schedule.timezone == "Europe/Berlin"
    assert workload.schedule.applies_to("dev") and not workload.schedule.applies_to("prod")
    assert workload.schedule.input == {"hyperparameters": {"epochs": 1}}


def test_an_expression_the_service_refuses_names_the_field_and_the_fix(rejects) -> None:
    rejects("schedule", "rate(1 minute)", schedule="rate(1 minutes)")
    rejects("schedule.expression", "6 fields", schedule={"expression": "cron(0 2 * * *)"})
    rejects("schedule.expression", "required", schedule={"timezone": "UTC"})


def test_an_unknown_time_zone_is_refused_with_the_close_name(rejects) -> None:
    rejects("schedule.timezone", "Europe/Berlin", schedule={"expression": "rate(1 day)", "timezone": "Europe/Berln"})
    rejects("schedule.timezone", "IANA", schedule={"expression": "rate(1 day)", "timezone": "CEST"})


def test_lengths_are_the_scheduler_models() -> None:
    assert grammar.service_lengths() == {"ScheduleExpression": (1, 256), "ScheduleExpressionTimezone": (1, 50)}


def test_an_expression_over_256_characters_is_refused(rejects) -> None:
    long = "cron(0 2 " + ",".join(["1"] * 124) + " * ? *)"
    assert len(long) == 263
    rejects("schedule", "at most 256", schedule=long)


def test_unknown_keys_and_shapes_are_refused(rejects) -> None:
    rejects("schedule.timezon", "timezone", schedule={"expression": "rate(1 day)", "timezon": "UTC"})
    rejects("schedule", "mapping", schedule=["rate(1 day)"])
    rejects("schedule.input", "mapping", schedule={"expression": "rate(1 day)", "input": "{}"})
    rejects("schedule.environments", "list", schedule={"expression": "rate(1 day)", "environments": "dev"})


def _input_problems(workload: Workload, env: Environment) -> list[str]:
    """The environment rules' problems on the schedule's input, where the workload deploys to `env`."""
    findings = Findings("demo.yaml")
    rules.check_in_environment(workload, env, findings)
    return [p.message for p in findings.problems if p.field == "schedule.input"]


def test_the_input_is_checked_like_a_console_start(make, envs) -> None:
    def said(**schedule_input: Any) -> str:
        return "\n".join(_input_problems(make(schedule={"expression": "rate(1 day)", "input": schedule_input}),
                                          envs["dev"]))

    assert "unknown name" in said(hyperparameters={"epoch": 1})
    assert "from 1 to 2" in said(instance_count=3)
    assert "JSON type" in said(hyperparameters={"epochs": "3"})
    assert said(hyperparameters={"epochs": 1}, instance_count=1) == ""


def test_the_input_is_held_to_the_cost_ceiling_in_each_environment_it_runs_in(make, envs) -> None:
    # ml.p4d.24xlarge lists at $37.688 an hour in us-east-1 (dev's region): a ceiling of $75.38 buys
    # floor(75.38 x 3600 / (3 x 37.688)) = 2400 s on 3 instances
    def scheduled(max_run: int, **schedule: Any) -> Workload:
        return make(max_run=3600, max_instance_count=3, max_run_cost_usd=75.38, schedule={
            "expression": "rate(1 day)", "input": {"instance_count": 3, "max_run": max_run}, **schedule})

    [problem] = _input_problems(scheduled(2401), envs["dev"])
    assert "with instance_count 3 max_run may be at most 2400 seconds" in problem
    assert problem.endswith("(a scheduled run starts with this input, as a console start would)")
    assert _input_problems(scheduled(2400), envs["dev"]) == []
    # scheduled in dev only: another environment with the same prices never starts it with this input
    qa = dataclasses.replace(envs["dev"], name="qa")
    assert _input_problems(scheduled(2401, environments=["dev"]), qa) == []
    assert _input_problems(scheduled(2401), qa) != []


def test_runs_closer_than_max_run_are_warned_about(make) -> None:
    assert not make(schedule="rate(1 day)", max_run=86400).warnings  # equal: the next run starts as this one ends
    warned = make(schedule="rate(1 day)", max_run=86401).warnings
    assert len(warned) == 1 and "AlreadyRunning" in warned[0]
    piled = make(schedule="rate(1 day)", max_run=86401, concurrent_runs=True).warnings
    assert len(piled) == 1 and "pile up" in piled[0]


def test_runs_per_month_count_the_busiest_month() -> None:
    start = date(2027, 1, 1)
    assert runs_per_month("rate(1 day)", "UTC", start) == 31
    assert runs_per_month("rate(7 days)", "UTC", start) == 5
    assert runs_per_month("rate(1 minute)", "UTC", start) == 44640
    assert runs_per_month("cron(0 2 * * ? *)", "UTC", start) == 31
    assert runs_per_month("cron(0 18 ? * MON-FRI *)", "UTC", start) == 23  # 2027: March, June, September, December
    assert runs_per_month("cron(0 2 * * ? 2026)", "UTC", start) == 0  # only in a year already past


def test_a_time_skipped_by_daylight_saving_is_skipped() -> None:
    after = datetime(2027, 3, 27, 12, tzinfo=UTC)
    days = [t.day for t in next_runs("cron(30 2 * * ? *)", "Europe/Berlin", after, 2)]
    assert days == [29, 30]  # 28 March 2027 has no 02:30 in Berlin
    assert runs_per_month("cron(30 2 * * ? *)", "Europe/Berlin", date(2027, 3, 1)) == 31  # other months have 31
    assert next_runs("rate(1 day)", "UTC", after) == []  # a rate runs from its deploy


def test_a_repeated_local_time_runs_once() -> None:
    after = datetime(2027, 10, 30, 12, tzinfo=UTC)
    runs = next_runs("cron(30 2 * * ? *)", "Europe/Berlin", after, 2)
    assert [t.day for t in runs] == [31, 1]


def test_the_shortest_interval() -> None:
    start = date(2027, 1, 1)
    assert shortest_interval("rate(5 minutes)", start) == 300
    assert shortest_interval("cron(0 2,4 * * ? *)", start) == 7200
    assert shortest_interval("cron(0 18 ? * MON-FRI *)", start) == 86400
    assert shortest_interval("cron(0 2 1 1 ? 2027)", start) is None


def test_projected_cost_is_the_worst_case(make, envs) -> None:
    # ml.p4d.24xlarge lists at $37.688 an hour (compiler/facts/data/prices/us-east-1.json): 2 for one hour is $75.376
    workload = make(schedule="rate(1 day)", max_run=3600)
    projection = schedules.project(workload, envs["dev"], date(2027, 1, 1))
    assert projection == schedules.Projection(runs_per_month=31, cost_per_run=75.38, cost_per_month=2336.66)
    one_node = make(schedule={"expression": "rate(1 day)", "input": {"instance_count": 1, "max_run": 1800}},
                    max_run=3600)
    assert schedules.project(one_node, envs["dev"], date(2027, 1, 1)).cost_per_run == 18.84


def test_one_run_at_a_time_caps_a_month_at_31_days_of_the_cluster(make, envs) -> None:
    workload = make(schedule="rate(1 hour)", max_run=86400)  # 744 starts, but each waits for the last
    assert schedules.project(workload, envs["dev"], date(2027, 1, 1)).cost_per_month == 56079.74  # 744 h x $75.376


def test_schedule_environments_must_be_ones_the_workload_deploys_to(make) -> None:
    workload = make(schedule={"expression": "rate(1 day)", "environments": ["prod", "qa"]})
    problems = schedules.environment_problems({"demo": workload}, {"dev": {"demo": workload}, "prod": {}})
    assert [(p.field, p.message) for p in problems] == [
        ("schedule.environments", "'prod' is not one the workload deploys to; it deploys to dev"),
        ("schedule.environments", "'qa' is not an environment of cdk.json; it deploys to dev"),
    ]
    assert schedules.environment_problems({"demo": workload}, {"prod": {"demo": workload}, "qa": {"demo": 1}}) == []


def test_schedules_that_may_cost_more_than_the_budget_are_warned_about(make, envs) -> None:
    workload = make(schedule="rate(1 day)", max_run=3600)  # up to $2,336.66 a month (above)
    over = dataclasses.replace(envs["dev"], monthly_budget_usd=2336.65)
    [warning] = map(str, schedules.budget_warnings(over, [workload], date(2027, 1, 1)))
    assert warning.startswith("cdk.json: dev.monthly_budget_usd: the schedules of dev may cost up to $2,336.66 a month")
    assert schedules.budget_warnings(dataclasses.replace(over, monthly_budget_usd=2336.66), [workload],
                                     date(2027, 1, 1)) == []
    assert schedules.budget_warnings(dataclasses.replace(over, monthly_budget_usd=None), [workload],
                                     date(2027, 1, 1)) == []


def test_a_schedule_counts_in_its_shards_size_estimate(make, envs) -> None:
    from compiler.compilation.stack_layout import layout_problems, workload_template_bytes

    scheduled = make(schedule={"expression": "rate(1 day)", "input": {"hyperparameters": {"epochs": 1}}})
    assert schedules.template_bytes(scheduled.schedule) == 3000 + 3 * len('{"hyperparameters": {"epochs": 1}}')
    assert schedules.layout_bytes([scheduled, make()], "dev") == {"demo": 3102}
    small = dataclasses.replace(envs["dev"], workload_shards=1)

    def shard(extra: int) -> dict[int, list[int]]:
        """Two workloads in one shard, 1,000 bytes under the limit without `extra` (each fits a shard alone)."""
        return {0: [workload_template_bytes("x" * 381_998, extra), workload_template_bytes("y" * 381_998)]}

    assert layout_problems(small, shard(0)) == []
    assert layout_problems(small, shard(1000)) == []  # exactly at the limit
    (problem,) = layout_problems(small, shard(1001))  # one byte past it
    assert problem.field == "dev.workload_shards"
    (problem,) = layout_problems(small, shard(3102))
    assert problem.field == "dev.workload_shards"


# --- the n-th weekday (issue 33) ----------------------------------------------------------------------------------
# EventBridge's cron reference (docs.aws.amazon.com/eventbridge/latest/userguide/eb-cron-expressions.html), which
# EventBridge Scheduler's "Schedule types" page points to for cron: Day-of-week takes "1-7 or SUN-SAT"; "The #
# wildcard in the Day-of-week field specifies a certain instance of the specified day of the week within a month.
# For example, 3#2 would be the second Tuesday of the month: the 3 refers to Tuesday because it is the third day of
# each week, and the 2 refers to the second day of that type within the month." So 1 is Sunday and 2#1 the first
# Monday. The dates below are the calendar's (GNU `date -d 2027-MM-DD +%a`): 1 January 2027 is a Friday.

FIRST_MONDAYS_2027_AT_9 = [datetime(2027, 1, 4, 9, tzinfo=UTC), datetime(2027, 2, 1, 9, tzinfo=UTC),
                           datetime(2027, 3, 1, 9, tzinfo=UTC), datetime(2027, 4, 5, 9, tzinfo=UTC)]


@pytest.mark.parametrize("expression", ["cron(0 9 ? * 2#1 *)", "cron(0 9 ? * MON#1 *)"])
def test_the_first_monday_runs_on_the_calendars_first_mondays(expression: str) -> None:
    assert next_runs(expression, "UTC", datetime(2027, 1, 1, tzinfo=UTC), 4) == FIRST_MONDAYS_2027_AT_9


@pytest.mark.parametrize(("after", "first"), [
    (datetime(2027, 1, 31, 23, 59, tzinfo=UTC), datetime(2027, 2, 1, 9, tzinfo=UTC)),  # the month's 1st is its Monday
    (datetime(2027, 2, 1, 8, 59, tzinfo=UTC), datetime(2027, 2, 1, 9, tzinfo=UTC)),  # a minute before the run
    (datetime(2027, 2, 1, 9, tzinfo=UTC), datetime(2027, 3, 1, 9, tzinfo=UTC)),  # at the run: the next month's
    (datetime(2027, 11, 1, 9, 1, tzinfo=UTC), datetime(2027, 12, 6, 9, tzinfo=UTC)),  # Nov 1 Mon; Dec 1 is a Wed
    (datetime(2027, 12, 6, 9, 1, tzinfo=UTC), datetime(2028, 1, 3, 9, tzinfo=UTC)),  # over the year: 3 Jan 2028
])
def test_the_first_monday_across_month_boundaries(after: datetime, first: datetime) -> None:
    assert next_runs("cron(0 9 ? * 2#1 *)", "UTC", after, 1) == [first]


@pytest.mark.parametrize(("expression", "days"), [
    ("cron(0 9 ? * 1#1 *)", [(1, 3), (2, 7), (3, 7)]),  # 1 is Sunday, not Monday
    ("cron(0 9 ? * SUN#1 *)", [(1, 3), (2, 7), (3, 7)]),
    ("cron(0 9 ? * 7#1 *)", [(1, 2), (2, 6), (3, 6)]),  # 7 is Saturday
    ("cron(0 9 ? * 3#2 *)", [(1, 12), (2, 9), (3, 9)]),  # the documents' own example: the second Tuesday
    ("cron(0 9 ? * 2#5 *)", [(3, 29), (5, 31), (8, 30)]),  # a fifth Monday: only the months that have one
])
def test_day_of_week_numbers_start_at_sunday(expression: str, days: list[tuple[int, int]]) -> None:
    runs = next_runs(expression, "UTC", datetime(2027, 1, 1, tzinfo=UTC), 3)
    assert [(t.month, t.day) for t in runs] == days


def test_the_first_monday_is_the_local_one() -> None:
    # New York: 09:00 EST is 14:00 UTC, 09:00 EDT (from 14 March 2027, the second Sunday of March) 13:00 UTC
    assert next_runs("cron(0 9 ? * 2#1 *)", "America/New_York", datetime(2027, 1, 1, tzinfo=UTC), 4) == [
        datetime(2027, 1, 4, 14, tzinfo=UTC), datetime(2027, 2, 1, 14, tzinfo=UTC),
        datetime(2027, 3, 1, 14, tzinfo=UTC), datetime(2027, 4, 5, 13, tzinfo=UTC)]
    # Tokyo (UTC+9, no daylight saving): Monday 1 February 01:30 is still Sunday 31 January in UTC
    assert next_runs("cron(30 1 ? * 2#1 *)", "Asia/Tokyo", datetime(2027, 1, 5, tzinfo=UTC), 3) == [
        datetime(2027, 1, 31, 16, 30, tzinfo=UTC), datetime(2027, 2, 28, 16, 30, tzinfo=UTC),
        datetime(2027, 4, 4, 16, 30, tzinfo=UTC)]


def test_an_nth_weekday_runs_once_in_the_busiest_month() -> None:
    assert runs_per_month("cron(0 9 ? * 2#1 *)", "UTC", date(2027, 1, 1)) == 1
    assert runs_per_month("cron(0 9 ? * 2#5 *)", "UTC", date(2027, 1, 1)) == 1  # and none in the other months
    assert runs_per_month("cron(0 9,21 ? * 2#1 *)", "UTC", date(2027, 1, 1)) == 2
