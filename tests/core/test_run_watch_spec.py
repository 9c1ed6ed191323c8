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
