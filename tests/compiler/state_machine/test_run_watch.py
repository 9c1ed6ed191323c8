"""What the run does while its job runs (issues 21 and 32), executed in moto against the scripted SageMaker, on its
virtual clock (every Wait and Retry delay moves it on; sagemaker_sync.py).

- Capacity window: a job whose SecondaryStatus stays `Starting` or `Pending` (waiting for instances) for
  `capacity_retry.capacity_window_minutes` (default 10) in a row is stopped, waited on until Stopped, and
  relaunched at once on the next instance type from the same checkpoints. A look that finds it doing anything else
  starts the count again (SageMaker's RetryStrategy sends a job back to `Starting`). Where SageMaker bounds the
  wait (accelerated types and a window of 30 minutes or more: MaxPendingTimeInSeconds; managed spot: max_wait),
  the run leaves the stop to SageMaker and relaunches the job it stopped.
- Stall watchdog: the second half.
- A DescribeTrainingJob that fails is tried again for minutes before anything is stopped.

The loop looks at a waiting job once a minute (60 s, docs/state-machines.md), so a 10-minute window is 10 looks.
"""

from __future__ import annotations

import calendar
import itertools
import json

import pytest

from compiler.state_machine import poll
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import Deployed, check_requests, job_parts

LOOK_SECONDS = 60
WINDOW_LOOKS = 10  # capacity_window_minutes' default, one look a minute
STARTING, PENDING, RUNNING, DONE = sage.STARTING, sage.PENDING, sage.RUNNING, ("Completed", "Completed")


@pytest.fixture(scope="module")
def fallback(deployed_test) -> Deployed:
    return deployed_test["sm-fallback"]  # p5, then p4de and p4d; 4 relaunches


def test_a_job_that_never_starts_is_stopped_after_the_window_and_relaunched_on_the_next_type(fallback) -> None:
    run = fallback.run({}, [sage.never_starts(), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    first, second = run.fake.calls
    assert run.fake.stop_calls == [first["TrainingJobName"]]  # stopped once, by the run
    assert run.fake.status(first["TrainingJobName"]) == ("Stopped", "Stopped")
    assert (first["ResourceConfig"]["InstanceType"], second["ResourceConfig"]["InstanceType"]) == (
        "ml.p5.48xlarge", "ml.p4de.24xlarge")
    assert [job_parts(fallback.spec, c["TrainingJobName"])[1] for c in run.fake.calls] == [0, 1]
    assert first["CheckpointConfig"] == second["CheckpointConfig"]  # the relaunch resumes
    assert "MaxPendingTimeInSeconds" not in first["StoppingCondition"]  # a 10-minute window is the run's own
    # 10 looks a minute apart at a job still Starting, 1 that finds it Stopped; the relaunch: its first look a minute
    # after its creation, then, while it trains, looks 4 minutes apart (max_run 24 h x 5 attempts x 9 events a look
    # within what the waiting looks leave of 20,000 events: 225 s, in whole minutes).
    assert run.fake.poll_waits == [LOOK_SECONDS] * (WINDOW_LOOKS + 1) + [LOOK_SECONDS, 240]
    assert run.fake.waits == [0]  # the window was the wait: the relaunch goes at once
    assert (run.output["attempts"], run.output["job_name"], run.output["instance_type"]) == (
        2, second["TrainingJobName"], "ml.p4de.24xlarge")
    check_requests(fallback, run, {})


@pytest.mark.parametrize("waiting", [STARTING, PENDING])
def test_a_job_that_starts_within_the_window_is_not_stopped(fallback, waiting) -> None:
    # Waiting for 9 looks (Starting, or Pending: "waiting for compute capacity"), then training: never stopped.
    run = fallback.run({}, [sage.Outcome("complete", describes_to_finish=1, starting_looks=WINDOW_LOOKS - 1,
                                         waiting=waiting)])
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == [] and len(run.fake.calls) == 1
    assert len(run.fake.poll_waits) == WINDOW_LOOKS - 1 + 2


def test_a_job_reported_pending_for_the_window_is_stopped(fallback) -> None:
    run = fallback.run({}, [sage.never_starts(PENDING), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == [run.fake.calls[0]["TrainingJobName"]]
    assert run.fake.poll_waits[:WINDOW_LOOKS + 1] == [LOOK_SECONDS] * (WINDOW_LOOKS + 1)


def test_the_window_counts_waiting_looks_in_a_row_not_over_the_attempt(fallback) -> None:
    # 9 looks waiting, a look training, then SageMaker's RetryStrategy sends the job back to Starting for 9 more
    # (18 in all, 9 in a row at most): never stopped. Counted over the attempt, it would have been.
    steps = (*[STARTING] * 9, RUNNING, *[STARTING] * 9, RUNNING, DONE)
    run = fallback.run({}, [sage.Outcome("complete", steps=steps)])
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == [] and len(run.fake.calls) == 1


def test_a_return_to_starting_that_outlasts_the_window_is_stopped(fallback) -> None:
    # The boundary just outside: back to Starting for 10 looks in a row after training.
    steps = (*[STARTING] * 5, RUNNING, *[STARTING] * 10, RUNNING, DONE)
    run = fallback.run({}, [sage.Outcome("complete", steps=steps), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    first = run.fake.calls[0]["TrainingJobName"]
    assert run.fake.stop_calls == [first] and len(run.fake.calls) == 2


def test_a_stopped_job_seen_stopping_for_a_while_is_still_relaunched(fallback) -> None:
    run = fallback.run({}, [sage.never_starts(), sage.completes()], stopping_looks=3)
    assert run.status == "SUCCEEDED", run.cause
    first, second = (c["TrainingJobName"] for c in run.fake.calls)
    assert run.fake.stop_calls == [first]
    # 10 looks waiting, 3 that find it Stopping and 1 Stopped, all a minute apart; then the relaunch.
    assert run.fake.poll_waits[:WINDOW_LOOKS + 4] == [LOOK_SECONDS] * (WINDOW_LOOKS + 4)
    assert run.output["job_name"] == second and run.output["attempts"] == 2


def test_the_window_spent_on_every_attempt_ends_in_insufficient_capacity(fallback) -> None:
    n = fallback.spec.capacity_relaunches
    run = fallback.run({}, [sage.never_starts() for _ in range(n + 1)])
    assert (run.status, run.error) == ("FAILED", "InsufficientCapacity")
    names = [c["TrainingJobName"] for c in run.fake.calls]
    assert len(names) == n + 1 and run.fake.stopped == names  # no job left waiting
    assert "CapacityError: the job had not started training after the capacity window (10 min)" in run.cause
    assert f"after {n + 1} attempt(s)" in run.cause
    assert run.fake.waits == [0] * n
    [note] = run.notifications
    assert note["status"] == "Stopped" and "capacity window" in note["failure_reason"]


# --------------------------------------------------------------------------------------- SageMaker's own bounds
# sm-pending: ml.g5 types only and a 45-minute window: the request carries StoppingCondition.MaxPendingTimeInSeconds
# 2700, and SageMaker stops a job still pending then (Stopped; which SecondaryStatus it leaves is not documented, so
# both readings are tried). The run relaunches it like one it stopped; it stops one itself only 15 minutes later.
PENDING_LIMIT = 45 * 60


@pytest.fixture(scope="module")
def pending(deployed_test) -> Deployed:
    return deployed_test["sm-pending"]


@pytest.mark.parametrize("left", [("Stopped", "Stopped"), ("Stopped", "Pending")])
def test_a_job_sagemaker_stops_after_max_pending_time_is_relaunched_on_the_next_type(pending, left) -> None:
    run = pending.run({}, [sage.never_starts(), sage.completes()], pending_stop=left)
    assert run.status == "SUCCEEDED", run.cause
    first, second = run.fake.calls
    assert first["StoppingCondition"]["MaxPendingTimeInSeconds"] == PENDING_LIMIT
    assert run.fake.stop_calls == []  # SageMaker stopped it, not the run
    assert (first["ResourceConfig"]["InstanceType"], second["ResourceConfig"]["InstanceType"]) == (
        "ml.g5.12xlarge", "ml.g5.24xlarge")
    assert first["CheckpointConfig"] == second["CheckpointConfig"]
    assert PENDING_LIMIT // LOOK_SECONDS <= len(run.fake.poll_waits) - 2 <= PENDING_LIMIT // LOOK_SECONDS + 1
    check_requests(pending, run, {})


def test_a_job_that_starts_just_inside_max_pending_time_runs(pending) -> None:
    run = pending.run({}, [sage.Outcome("complete", starting_looks=PENDING_LIMIT // LOOK_SECONDS - 2)])
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == [] and len(run.fake.calls) == 1


def test_both_attempts_stopped_by_sagemaker_end_in_insufficient_capacity(pending) -> None:
    run = pending.run({}, [sage.never_starts(), sage.never_starts()])
    assert (run.status, run.error) == ("FAILED", "InsufficientCapacity")
    assert run.fake.stop_calls == []
    assert f"SageMaker stopped {run.fake.calls[1]['TrainingJobName']} after MaxPendingTimeInSeconds (2700)" in run.cause


def test_the_run_stops_a_job_still_pending_long_after_max_pending_time(pending) -> None:
    # Should SageMaker leave the job waiting (it reads as Starting after the limit), the run's backstop stops it
    # after the window and poll.BACKSTOP_MINUTES more: 60 looks.
    run = pending.run({}, [sage.never_starts(), sage.completes()], pending_stop=STARTING)
    assert run.status == "SUCCEEDED", run.cause
    first = run.fake.calls[0]["TrainingJobName"]
    assert run.fake.stop_calls == [first]
    assert run.fake.poll_waits[:61] == [LOOK_SECONDS] * 61
    assert pending.spec.waiting.window_looks == (45 + poll.BACKSTOP_MINUTES)


# A person may stop a waiting job (StopTrainingJob in the console): it ends Stopped, SecondaryStatus Stopped, as one
# MaxPendingTimeInSeconds stops (botocore's SageMaker model: StopTrainingJob; docs/aws-assumptions.md). The run reads
# the stop as SageMaker's only after looks that found the job waiting, in a row, for all but poll.BACKSTOP_MINUTES (15)
# of the 45-minute limit: 30 looks a minute apart. A stop before that ends the run, nothing relaunched.
@pytest.mark.parametrize(("waiting_looks", "relaunched"), [(29, False), (30, True)])
def test_a_job_a_person_stops_while_it_waits_ends_the_run(pending, waiting_looks: int, relaunched: bool) -> None:
    stopped = sage.Outcome("complete", steps=(*[PENDING] * waiting_looks, ("Stopped", "Stopped")))
    run = pending.run({}, [stopped, sage.completes()])
    assert pending.spec.waiting.pending_looks == 30
    assert run.fake.stop_calls == []
    if relaunched:
        assert run.status == "SUCCEEDED", run.cause
        assert [c["ResourceConfig"]["InstanceType"] for c in run.fake.calls] == ["ml.g5.12xlarge", "ml.g5.24xlarge"]
    else:
        assert (run.status, run.error) == ("FAILED", "TrainingJobFailed"), run.cause
        assert len(run.fake.calls) == 1 and run.output is None
        assert f"{run.fake.calls[0]['TrainingJobName']} Stopped after 1 attempt(s)" in run.cause
        assert "MaxPendingTimeInSeconds" not in run.cause


# sm-spot: max_wait 2 hours. The wait for spot capacity is SageMaker's to bound: the run never stops a spot job for
# its window, and relaunches one SageMaker stopped with MaxWaitTimeExceeded.
@pytest.fixture(scope="module")
def spot(deployed_test) -> Deployed:
    return deployed_test["sm-spot"]


def test_a_spot_job_waiting_for_capacity_within_max_wait_is_never_stopped_by_the_run(spot) -> None:
    # 100 minutes waiting for spot capacity (ten times the default window), then training.
    run = spot.run({}, [sage.Outcome("complete", starting_looks=100, describes_to_finish=2)])
    assert run.status == "SUCCEEDED", run.cause
    [request] = run.fake.calls
    assert run.fake.stop_calls == []
    assert request["EnableManagedSpotTraining"] is True
    assert request["StoppingCondition"] == {"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200}


def test_a_spot_job_sagemaker_stops_at_max_wait_is_relaunched(spot) -> None:
    run = spot.run({}, [sage.never_starts(), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    first, second = run.fake.calls
    assert run.fake.status(first["TrainingJobName"]) == ("Stopped", "MaxWaitTimeExceeded")
    assert run.fake.stop_calls == []
    assert second["ResourceConfig"]["InstanceType"] == "ml.g5.4xlarge"
    # looks spaced like the training ones (max_wait bounds them: spot.spec.training_poll_seconds), over 2 hours
    waited = sum(run.fake.poll_waits[:-2])
    assert 7200 <= waited <= 7200 + spot.spec.training_poll_seconds


def test_a_spot_run_whose_every_wait_ran_out_says_so(spot) -> None:
    run = spot.run({}, [sage.never_starts(), sage.never_starts()])
    assert (run.status, run.error) == ("FAILED", "InsufficientCapacity")
    assert "after max_wait (7200 s) without finishing on spot capacity (MaxWaitTimeExceeded)" in run.cause


# --------------------------------------------------------------------------------------------- describe failures
# A DescribeTrainingJob that fails is tried again 10 times (waits drawn up to 10 s, 20 s, ... 300 s: poll.DESCRIBE_RETRY)
# before the job counts as lost and is stopped by name.
DESCRIBE_CAPS = [min(10 * 2**n, 300) for n in range(10)]


def test_a_healthy_job_survives_ten_failed_describes_in_a_row(fallback) -> None:
    run = fallback.run({}, [sage.completes(describes_to_finish=3)], describe_throttle=10, describe_throttle_after=2)
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == []
    assert len(run.fake.waits) == 10
    assert all(0 <= wait <= cap for wait, cap in zip(run.fake.waits, DESCRIBE_CAPS, strict=True))


def test_eleven_failed_describes_in_a_row_stop_the_job_lost_from_sight(fallback) -> None:
    run = fallback.run({}, [sage.completes(describes_to_finish=3)], describe_throttle=11, describe_throttle_after=2)
    assert (run.status, run.error) == ("FAILED", "TrainingJobFailed")
    name = run.fake.calls[0]["TrainingJobName"]
    assert run.fake.stop_calls == [name]
    assert "unknown, stopped: DescribeTrainingJob failed (SageMaker.SageMakerException: Rate exceeded" in run.cause


# --------------------------------------------------------------------------------------------- stall watchdog
# sm-watched: stall_watchdog {metric: train:loss, minutes: 5, max_relaunches: 1} (regex `loss=([0-9\.]+)`, so the
# filter pattern `%loss=%`), primary ml.g5.2xlarge, fallback ml.g5.4xlarge, looks a minute apart while training.
# The first Training look starts the clock; each later one asks FilterLogEvents for a progress line of the job's
# streams since the minute before the last look that found one; 5 looks in a row without one stop the job.
STALL_LOOKS = 5
LOG_GROUP = "/aws/sagemaker/TrainingJobs"


@pytest.fixture(scope="module")
def watched(deployed_test) -> Deployed:
    return deployed_test["sm-watched"]


def _window_starts(run) -> list[int]:
    """The epoch milliseconds each `Open progress window` derived, recomputed here from the time it was given."""
    starts = []
    for event in run.history:
        details = event.get("stateEnteredEventDetails")
        if details and details["name"] == "Open progress window":
            year, month, day, hour, minute = (int(p) for p in json.loads(details["input"])["now"]["parts"][:5])
            epoch_minutes = calendar.timegm((year, month, day, hour, minute, 0)) // 60
            starts.append((epoch_minutes - 1) * 60_000)
    return starts


def test_a_job_that_progresses_is_watched_and_never_stopped(watched) -> None:
    run = watched.run({}, [sage.completes(describes_to_finish=6)])
    assert run.status == "SUCCEEDED", run.cause
    [request] = run.fake.calls
    name = request["TrainingJobName"]
    assert run.fake.stop_calls == []
    # The first look at the training job starts the clock (no question); the next 5 ask, and each finds a line.
    queries = run.fake.log_queries
    assert len(queries) == 5 and all(answer["events"] for answer in run.fake.log_answers)
    for query in queries:
        assert (query["logGroupName"], query["logStreamNamePrefix"], query["filterPattern"], query["limit"]) == (
            LOG_GROUP, f"{name}/", "%loss=%", 1)
    # Each question starts a minute before the minute of the look that opened it (the clock's start, then each
    # look that found progress): recomputed from the time the definition was given, on 2028-02-29 23:58 and after.
    starts = _window_starts(run)
    assert [q["startTime"] for q in queries] == starts[:-1]
    assert all(0 < b - a <= 2 * 60_000 for a, b in itertools.pairwise(starts))
    assert run.output["stall_relaunches"] == 0
    check_requests(watched, run, {})


def test_the_clock_starts_at_the_first_training_look_not_at_creation(watched) -> None:
    # 8 minutes waiting for instances, then 4 minutes of image download and start-up without a progress line: the
    # 5-minute watchdog does not fire. Counted from the job's creation it would have.
    outcome = sage.Outcome("complete", starting_looks=8, describes_to_finish=7, silent=((0, 4),))
    run = watched.run({}, [outcome])
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == []


@pytest.mark.parametrize(("quiet_minutes", "stopped"), [(4, False), (5, True)])
def test_the_watchdog_fires_after_its_minutes_of_silence_and_not_before(watched, quiet_minutes, stopped) -> None:
    # The boundary: a first progress line 4 minutes into training is found by the 5th look; at 5 minutes it is not.
    outcome = sage.Outcome("complete", steps=(*[RUNNING] * 8, DONE), silent=((0, quiet_minutes),))
    run = watched.run({}, [outcome, sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    first = run.fake.calls[0]["TrainingJobName"]
    assert (run.fake.stop_calls == [first]) is stopped, run.fake.log_answers


def _silence_before_stop(run, name: str) -> float:
    """Minutes between the job's last progress line and the run's stop."""
    log = run.fake.logs[name]
    return (run.fake.stopped_ms[name] - log.last_progress(run.fake.stopped_ms[name])) / 60_000


def test_progress_after_quiet_looks_starts_the_count_again(watched) -> None:
    # Progress, 4 minutes without, progress again at minutes 5 and 6, then silence: not stopped in the gap, stopped
    # 5 minutes after the last line (two looks more at the most: each question reaches a minute or two back).
    outcome = sage.Outcome("stall", silent=((1, 5), (7, float("inf"))))
    run = watched.run({}, [outcome, sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    first = run.fake.calls[0]["TrainingJobName"]
    assert run.fake.stop_calls == [first]
    assert 5 <= _silence_before_stop(run, first) <= 5 + 2 + 0.5
    found = [bool(answer["events"]) for answer in run.fake.log_answers]
    assert found[-STALL_LOOKS:] == [False] * STALL_LOOKS and found.count(True) >= 3


def test_a_return_to_starting_restarts_the_clock(watched) -> None:
    # 4 quiet minutes of training, an internal retry (back to Starting for 3 looks), 4 quiet minutes more, then
    # progress: 8 quiet minutes in all, never 5 in a row of training.
    steps = (*[RUNNING] * 5, *[STARTING] * 3, *[RUNNING] * 8, DONE)
    outcome = sage.Outcome("complete", steps=steps, silent=((0, 13),))
    run = watched.run({}, [outcome])
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == []


def test_lines_that_arrive_late_still_count(watched) -> None:
    # Each line reaches CloudWatch Logs 50 s after its timestamp: the window reaching a minute back finds it.
    run = watched.run({}, [sage.completes(describes_to_finish=8)], ingest_seconds=50)
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == []


def test_an_unfinished_search_counts_as_neither_progress_nor_silence(watched) -> None:
    # FilterLogEvents may answer no line with a NextToken (more to search): such looks are not counted, so a
    # silent job is stopped only after 5 answers that really found nothing.
    run = watched.run({}, [sage.stalls(), sage.completes()], unfinished_searches=4)
    first = run.fake.calls[0]["TrainingJobName"]
    assert run.fake.stop_calls == [first]
    assert len(run.fake.log_queries) >= 4 + STALL_LOOKS
    assert [bool(a.get("nextToken")) for a in run.fake.log_answers[:4 + STALL_LOOKS]] == [True] * 4 + [False] * 5


def test_a_stalled_job_is_stopped_and_relaunched_from_its_checkpoints(watched) -> None:
    run = watched.run({}, [sage.stalls(progress_minutes=1), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    first, second = run.fake.calls
    assert run.fake.stop_calls == [first["TrainingJobName"]]
    assert run.fake.status(first["TrainingJobName"]) == ("Stopped", "Stopped")
    # The same type (a stall is not a capacity problem), the next attempt's name, the same checkpoints.
    assert first["ResourceConfig"]["InstanceType"] == second["ResourceConfig"]["InstanceType"] == "ml.g5.2xlarge"
    assert [job_parts(watched.spec, c["TrainingJobName"])[1] for c in run.fake.calls] == [0, 1]
    assert first["CheckpointConfig"] == second["CheckpointConfig"]
    # The first minute's line is found (by the look after it, and by the next, whose question reaches a minute or two
    # back), then 5 quiet looks stop the job: 5 to 7 minutes after the line.
    asked = [bool(a["events"]) for q, a in zip(run.fake.log_queries, run.fake.log_answers, strict=True)
             if q["logStreamNamePrefix"] == f"{first['TrainingJobName']}/"]
    assert asked in ([True] + [False] * STALL_LOOKS, [True, True] + [False] * STALL_LOOKS)
    assert 5 <= _silence_before_stop(run, first["TrainingJobName"]) <= 5 + 2 + 0.5
    assert run.fake.waits == []  # relaunched at once
    assert (run.output["stall_relaunches"], run.output["attempts"], run.output["job_name"]) == (
        1, 2, second["TrainingJobName"])
    [note] = run.notifications
    assert note["stall_relaunches"] == 1 and note["status"] == "Completed"


def test_a_run_that_stalls_past_its_relaunches_fails_saying_stalled(watched) -> None:
    run = watched.run({}, [sage.stalls(), sage.stalls(), sage.completes()])
    assert (run.status, run.error) == ("FAILED", "TrainingStalled")
    names = [c["TrainingJobName"] for c in run.fake.calls]
    assert len(names) == 2 and run.fake.stopped == names  # max_relaunches 1: two jobs, both stopped
    assert ("Stalled after 2 attempt(s): Stalled: no train:loss line in its log for 5 minutes of training; "
            "stopped by the run after 1 stall relaunch(es)") in run.cause
    [note] = run.notifications
    assert note["status"] == "Stalled" and note["failure_reason"].startswith("Stalled: no train:loss line")
    assert note["stall_relaunches"] == 1


def test_a_failure_of_the_users_code_is_never_relaunched(watched) -> None:
    run = watched.run({}, [sage.algorithm_error(), sage.completes()])
    assert (run.status, run.error) == ("FAILED", "TrainingJobFailed")
    assert len(run.fake.calls) == 1 and run.fake.stop_calls == []
    assert "AlgorithmError: ExecuteUserScriptError" in run.cause
    assert run.output is None and run.notifications[0]["stall_relaunches"] == 0


def test_a_job_waiting_for_capacity_moves_to_the_fallback_even_with_a_watchdog(watched) -> None:
    run = watched.run({}, [sage.never_starts(), sage.stalls(), sage.completes()])
    # capacity: g5.2xlarge -> fallback; then the stall relaunch stays on the fallback type
    types = [c["ResourceConfig"]["InstanceType"] for c in run.fake.calls]
    assert types == ["ml.g5.2xlarge", "ml.g5.4xlarge", "ml.g5.4xlarge"], run.cause
    assert run.status == "SUCCEEDED", run.cause
    assert [job_parts(watched.spec, n)[1] for n in (c["TrainingJobName"] for c in run.fake.calls)] == [0, 1, 2]


# --------------------------------------------------------------------------------------------- the history
# Step Functions keeps at most 25,000 events per execution ("Step Functions service quotas") and fails one that
# needs more, the job left running. Looks are spaced so that every attempt waiting its whole window and then
# running for max_run (max_wait for spot) fits: measured here from the executed definitions, not from the
# compiler's own count.
HISTORY_LIMIT = 25_000


def _events_per_look(d: Deployed, outcome: sage.Outcome, more: sage.Outcome) -> tuple[float, int]:
    """(history events per extra look, events of the shorter run): `more` has 4 looks more than `outcome`."""
    short, long = d.run({}, [outcome]), d.run({}, [more])
    assert short.status == long.status == "SUCCEEDED"
    return (len(long.history) - len(short.history)) / 4, len(short.history)


def test_every_attempt_waiting_and_running_its_longest_fits_the_execution_history(deployed, deployed_test,
                                                                                   specs) -> None:
    plain = _events_per_look(deployed_test["sm-fallback"], sage.completes(describes_to_finish=2),
                             sage.completes(describes_to_finish=6))
    watching = _events_per_look(deployed_test["sm-watched"], sage.completes(describes_to_finish=2),
                                sage.completes(describes_to_finish=6))
    waiting = _events_per_look(deployed_test["sm-fallback"], sage.Outcome("complete", starting_looks=2),
                               sage.Outcome("complete", starting_looks=6))
    assert watching[0] > plain[0]
    assert (plain[0], watching[0], waiting[0]) == (poll.LOOK_EVENTS, poll.WATCHDOG_LOOK_EVENTS, poll.WAITING_LOOK_EVENTS)
    tests = [deployed_test[n].spec for n in ("sm-fallback", "sm-watched", "sm-pending", "sm-spot")]
    for spec in [*specs.values(), *tests]:
        per_look, rest = watching if spec.stall else plain
        longest = max(spec.max_run, spec.max_wait or 0)
        waits = spec.waiting
        wait_looks = 0 if waits.bound == poll.SPOT else waits.window_looks + 1
        looks = spec.attempts * (longest / spec.training_poll_seconds + 1)
        total = looks * per_look + spec.attempts * (wait_looks * waiting[0] + rest)
        assert total <= HISTORY_LIMIT, spec.workload
        assert spec.training_poll_seconds % 60 == 0 and spec.training_poll_seconds >= 60
    # gpt-torchrun-fsx: 48 hours of max_run, 6 attempts, the watchdog: a look every 19 minutes.
    assert specs["gpt-torchrun-fsx"].training_poll_seconds == 19 * 60


class _StopRefused(sage.FakeSageMaker):
    """StopTrainingJob refused (AccessDenied, say): the job goes on and ends by itself."""

    def stop(self, name: str) -> None:
        self.stop_calls.append(name)
        raise sage.client_error("AccessDeniedException", "not authorized", "StopTrainingJob", "1a")


def test_a_job_the_run_cannot_stop_is_looked_at_like_a_training_one(fallback, monkeypatch) -> None:
    # The window stops a job still Starting; the stop is refused (3 repeats) and the job starts later and completes.
    # Looks after that are the training ones (4 minutes apart for sm-fallback), not one a minute until max_run.
    monkeypatch.setattr("tests.compiler.state_machine.harness.FakeSageMaker", _StopRefused)
    run = fallback.run({}, [sage.Outcome("complete", starting_looks=WINDOW_LOOKS + 3, describes_to_finish=2)])
    assert run.status == "SUCCEEDED", run.cause
    [request] = run.fake.calls
    assert run.fake.stop_calls == [request["TrainingJobName"]] * 4  # the call and its 3 repeats
    looks = run.fake.poll_waits
    assert looks[:WINDOW_LOOKS] == [LOOK_SECONDS] * WINDOW_LOOKS
    assert looks[WINDOW_LOOKS:] == [240] * (len(looks) - WINDOW_LOOKS)
    assert run.output["attempts"] == 1  # not relaunched: the job it could not stop went on
