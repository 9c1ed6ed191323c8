"""The spec keys that bound a run's waits (issue 21): `capacity_retry.capacity_window_minutes` and
`stall_watchdog`, with their defaults, their boundaries and the errors that name the field and the fix."""

from __future__ import annotations

import pytest

from compiler.state_machine import poll
from compiler.state_machine.machine import spec_for


def test_the_capacity_window_defaults_to_ten_minutes(make, envs) -> None:
    workload = make()
    assert workload.capacity_retry.capacity_window_minutes == 10
    # One look a minute (the poll loop's 60 s): ten looks.
    assert spec_for(workload, envs["dev"]).capacity_window_polls == 10


@pytest.mark.parametrize("minutes", [1, 1440])
def test_the_capacity_window_takes_one_minute_to_a_day(make, envs, minutes: int) -> None:
    workload = make(capacity_retry={"capacity_window_minutes": minutes})
    assert workload.capacity_retry.capacity_window_minutes == minutes
    assert spec_for(workload, envs["dev"]).capacity_window_polls == minutes * 60 // poll.POLL_SECONDS


@pytest.mark.parametrize("value", [0, 1441, 2.5, "10"])
def test_a_capacity_window_outside_its_bounds_is_refused(rejects, value) -> None:
    rejects("capacity_retry.capacity_window_minutes", "1", "1440", capacity_retry={"capacity_window_minutes": value})


METRICS = [{"Name": "train:loss", "Regex": "loss=([0-9.]+)"}, {"Name": "val:loss", "Regex": "val=([0-9.]+)"}]


def test_no_stall_watchdog_unless_the_spec_asks(make, envs) -> None:
    workload = make(metric_definitions=METRICS)
    assert workload.stall_watchdog is None and workload.max_relaunches == 3
    assert spec_for(workload, envs["dev"]).stall is None


def test_a_stall_watchdog_takes_its_defaults(make, envs) -> None:
    workload = make(metric_definitions=METRICS, stall_watchdog={"metric": "val:loss"})
    watchdog = workload.stall_watchdog
    assert (watchdog.metric, watchdog.minutes, watchdog.max_relaunches) == ("val:loss", 30, 2)
    assert workload.max_relaunches == 3 + 2  # the job names' attempt number goes that high
    assert spec_for(workload, envs["dev"]).stall == watchdog


@pytest.mark.parametrize(("minutes", "relaunches"), [(5, 0), (10080, 10)])
def test_the_watchdog_bounds_are_accepted(make, minutes: int, relaunches: int) -> None:
    workload = make(metric_definitions=METRICS,
                    stall_watchdog={"metric": "train:loss", "minutes": minutes, "max_relaunches": relaunches})
    assert (workload.stall_watchdog.minutes, workload.stall_watchdog.max_relaunches) == (minutes, relaunches)


def test_a_metric_that_is_not_defined_is_refused_naming_the_fix(rejects) -> None:
    message = rejects("stall_watchdog.metric", "'train:los'", "'train:loss', 'val:loss'", "metric_definitions",
                      metric_definitions=METRICS, stall_watchdog={"metric": "train:los"})
    assert "name one of them, or add a metric definition" in message
    rejects("stall_watchdog.metric", "the spec has no metric_definitions", stall_watchdog={"metric": "train:loss"})
    rejects("stall_watchdog.metric", "is required", metric_definitions=METRICS, stall_watchdog={"minutes": 30})


@pytest.mark.parametrize(("key", "value", "words"), [
    ("minutes", 4, ("5", "10080")), ("minutes", 10081, ("5", "10080")), ("minutes", "30", ("whole number",)),
    ("max_relaunches", -1, ("0", "10")), ("max_relaunches", 11, ("0", "10")),
])
def test_watchdog_values_outside_their_bounds_are_refused(rejects, key: str, value, words: tuple[str, ...]) -> None:
    rejects(f"stall_watchdog.{key}", *words, metric_definitions=METRICS,
            stall_watchdog={"metric": "train:loss", key: value})


def test_an_unknown_watchdog_key_is_refused(rejects) -> None:
    rejects("stall_watchdog.minute", "did you mean 'minutes'", metric_definitions=METRICS,
            stall_watchdog={"metric": "train:loss", "minute": 30})


def test_the_watchdogs_relaunches_lengthen_the_job_name(rejects, make) -> None:
    # `<base>-<12 hex>-<attempt>` within 63 characters: 7 + 2 relaunches need one digit, 7 + 3 need two.
    make(base_job_name="a" * 48, metric_definitions=METRICS,
         capacity_retry={"max_attempts": 7}, stall_watchdog={"metric": "train:loss", "max_relaunches": 2})
    rejects("base_job_name", "at most 47", base_job_name="a" * 48, metric_definitions=METRICS,
            capacity_retry={"max_attempts": 7}, stall_watchdog={"metric": "train:loss", "max_relaunches": 3})


def test_instance_preferences_are_asked_for_with_a_boolean(make, rejects) -> None:
    assert make().capacity_retry.instance_preferences is False
    assert make(capacity_retry={"instance_preferences": True}).capacity_retry.instance_preferences is True
    rejects("capacity_retry.instance_preferences", "true or false", capacity_retry={"instance_preferences": "yes"})
