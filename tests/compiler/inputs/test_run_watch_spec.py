"""The spec keys that bound a run's waits (issues 21 and 32): `capacity_retry.capacity_window_minutes` and
`stall_watchdog`, with their defaults, their boundaries and the errors that name the field and the fix; and who
bounds the wait for instances (the run, SageMaker's MaxPendingTimeInSeconds, or spot's max_wait)."""

from __future__ import annotations

import pytest

from compiler import state_machine as sm
from compiler.state_machine import poll
from compiler.state_machine.machine import spec_for


def test_the_capacity_window_defaults_to_ten_minutes(make, envs) -> None:
    workload = make()
    assert workload.capacity_retry.capacity_window_minutes == 10
    # One look a minute (the poll loop's 60 s): ten looks.
    assert spec_for(workload, envs["dev"]).waiting.window_looks == 10


@pytest.mark.parametrize("minutes", [1, 1440])
def test_the_capacity_window_takes_one_minute_to_a_day(make, envs, minutes: int) -> None:
    workload = make(capacity_retry={"capacity_window_minutes": minutes})
    assert workload.capacity_retry.capacity_window_minutes == minutes
    spec = spec_for(workload, envs["dev"])
    assert spec.waiting.window_looks * spec.waiting.poll_seconds >= minutes * 60


@pytest.mark.parametrize(("types", "minutes", "bound"), [
    # MaxPendingTimeInSeconds "takes effect only for ... accelerated computing instance types, such as instances in
    # the ml.p, ml.g, and ml.trn families", from 1800 seconds.
    (("ml.g5.2xlarge",), 30, poll.SAGEMAKER),
    (("ml.g5.2xlarge",), 29, poll.RUN),  # below SageMaker's minimum: the run's own window
    (("ml.p4d.24xlarge", "ml.p5.48xlarge"), 60, poll.SAGEMAKER),
    (("ml.g5.48xlarge",), 1440, poll.SAGEMAKER),
    (("ml.c5.xlarge",), 60, poll.RUN),  # a CPU type: SageMaker's limit has no effect on it
])
def test_max_pending_time_only_where_sagemaker_applies_it(make, envs, types, minutes: int, bound: str) -> None:
    workload = make(instance_type=types[0], distribution=..., capacity_retry={
        "capacity_window_minutes": minutes, **({"fallback_instance_types": list(types[1:])} if types[1:] else {})})
    spec = spec_for(workload, envs["dev"])
    assert spec.waiting.bound == bound
    assert spec.waiting.pending_limit == (minutes * 60 if bound == poll.SAGEMAKER else None)
    train = next(s for s in sm.build_definition(spec)["States"].values() if s.get("Resource") == sm.CREATE_RESOURCE)
    assert train["Parameters"]["StoppingCondition"].get("MaxPendingTimeInSeconds") == spec.waiting.pending_limit


def test_spot_leaves_the_wait_to_max_wait(make, envs) -> None:
    workload = make(instance_type="ml.g5.2xlarge", use_spot_instances=True, max_run=3600, max_wait=7200,
                    checkpoints=True, capacity_retry={"capacity_window_minutes": 45})
    spec = spec_for(workload, envs["dev"])
    assert (spec.waiting.bound, spec.waiting.pending_limit, spec.waiting.window_looks) == (poll.SPOT, None, 0)
    # looks while waiting or running are spaced for max_wait, the longer of the two limits
    assert spec.training_poll_seconds == poll.training_poll_seconds(7200, spec.attempts, False)


def test_long_windows_space_the_waiting_looks_to_fit_the_history(make, envs) -> None:
    # A day's window on 11 attempts a minute apart would take 11 x 1440 x 13 events: the looks move apart instead.
    workload = make(capacity_retry={"capacity_window_minutes": 1440, "max_attempts": 10})
    waits = spec_for(workload, envs["dev"]).waiting
    assert waits.poll_seconds > poll.POLL_SECONDS and waits.poll_seconds % 60 == 0
    assert waits.history_events <= poll.WAITING_BUDGET + 2 * 11 * poll.WAITING_LOOK_EVENTS
    assert waits.window_looks * waits.poll_seconds >= 1440 * 60


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


def test_the_watchdog_looks_for_the_metrics_text_in_the_jobs_log(make) -> None:
    workload = make(metric_definitions=METRICS, stall_watchdog={"metric": "train:loss"})
    assert workload.stall_watchdog.log_pattern == "%loss=%"


@pytest.mark.parametrize("regex", ["([0-9.]+)", "(loss|acc)=([0-9.]+)", "(?i)loss=([0-9.]+)", "a|bcd=(\\d+)", "ab(\\d)"])
def test_a_metric_without_text_to_look_for_is_refused_naming_the_fix(rejects, regex: str) -> None:
    message = rejects("stall_watchdog.metric", "requires no piece of literal text", "e.g. 'train_loss=([0-9.]+)'",
                      metric_definitions=[{"Name": "train:loss", "Regex": regex}],
                      stall_watchdog={"metric": "train:loss"})
    assert repr(regex) in message


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
