"""`clock`: a state's entry time as epoch milliseconds with intrinsic functions only, executed in moto's interpreter
and compared with Python's calendar, at the edges where date arithmetic goes wrong.

The stall watchdog's FilterLogEvents question starts at the minute before the one its look was entered in
(`$$.State.EnteredTime`, ISO 8601 in UTC as the developer guide shows it: `2019-03-26T20:14:13.192Z`).
"""

from __future__ import annotations

import calendar
import json
import time
from datetime import UTC, datetime

import boto3
import pytest

from compiler.state_machine import clock
from compiler.state_machine.intrinsics import MAX_NESTING, calls
from tests.compiler.state_machine.harness import REGION, ROLE_ARN

TIMES = [
    "2025-01-01T00:00:00.000Z",  # the first year of the tables, its first minute
    "2026-11-28T10:15:30.123Z",
    "2026-12-31T23:59:59.999Z",  # a year's last minute
    "2027-03-01T00:00:00Z",  # a whole second: Java's Instant writes no fraction
    "2028-02-28T23:59:00.500Z", "2028-02-29T12:00:00.000Z", "2028-03-01T00:00:59.999Z",  # a leap day
    "2029-02-28T23:59:59.001Z", "2029-03-01T00:00:00.001Z",  # no leap day
    "2100-02-28T08:08:08.080Z", "2100-03-01T09:09:09.090Z",  # 2100 is no leap year
    "2125-12-31T23:59:59.999Z",  # the last year of the tables
]


def _expected(text: str) -> int:
    """The minute before the one `text` is in, as epoch milliseconds."""
    when = datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    return (calendar.timegm(when.timetuple()) // 60 - 1) * 60_000


@pytest.fixture(scope="module")
def evaluated(aws) -> dict[str, int]:
    """Each time of TIMES through the Pass states the watchdog uses (split, window start) and the Task's start time
    expression, in one execution of a Map over them."""
    item = {"StartAt": "Split", "States": {
        "Split": {"Type": "Pass", "Parameters": {"parts.$": clock.split("$.when"), "clock.$": "$.clock"},
                  "Next": "Window"},
        "Window": {"Type": "Pass", "Parameters": {"ticks.$": clock.window_start_parameters("$.parts", "$.clock")},
                   "Next": "Start"},
        "Start": {"Type": "Pass", "Parameters": {"ms.$": clock.start_time("$.ticks")}, "End": True}}}
    definition = {"StartAt": "Each", "States": {"Each": {
        "Type": "Map", "ItemsPath": "$.times", "ItemSelector": {"when.$": "$$.Map.Item.Value", "clock.$": "$.clock"},
        "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, **item}, "End": True}}}
    sfn = boto3.client("stepfunctions", region_name=REGION)
    arn = sfn.create_state_machine(name="clock", definition=json.dumps(definition), roleArn=ROLE_ARN)["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=arn, name="times",
                                    input=json.dumps({"times": TIMES, "clock": clock.tables()}))["executionArn"]
    deadline = time.monotonic() + 60
    while (described := sfn.describe_execution(executionArn=execution))["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert described["status"] == "SUCCEEDED", described
    return {when: out["ms"] for when, out in zip(TIMES, json.loads(described["output"]), strict=True)}


@pytest.mark.parametrize("when", TIMES)
def test_the_window_starts_at_the_minute_before(evaluated, when: str) -> None:
    assert evaluated[when] == _expected(when)


def test_every_operand_stays_below_2_to_the_31() -> None:
    # A 32-bit limit of States.MathAdd, were there one, could never bite: the largest sum is 10-second units to the
    # last minute of the tables.
    tables = clock.tables()
    largest = tables["year"][-1] + max(tables["month"]) + max(tables["day"]) + max(tables["hour"]) + max(tables["minute"])
    assert largest < 2**31
    assert len(tables["year"]) == clock.LAST_YEAR - clock.FIRST_YEAR + 1


def test_the_expressions_nest_within_step_functions_limit() -> None:
    for expression in (clock.split(), clock.window_start_parameters("$.p", "$.c"), clock.start_time("$.t")):
        assert calls(expression)[1] <= MAX_NESTING
