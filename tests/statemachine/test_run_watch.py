"""What the run does while its job runs (issue 21), executed in moto against the fake SageMaker.

- Capacity window: a job whose SecondaryStatus stays `Starting` (waiting for instances) for the spec's
  `capacity_retry.capacity_window_minutes` (default 10) is stopped, waited on until Stopped, and relaunched at once
  on the next instance type from the same checkpoints; every attempt spent that way ends the run in
  `InsufficientCapacity`.
- Stall watchdog: see the second half.

The loop looks at the job once a minute (60 s, docs/state-machines.md), so a 10-minute window is 10 looks.
"""

from __future__ import annotations

import pytest

from tests.statemachine import sagemaker_sync as sage
from tests.statemachine.harness import Deployed, check_requests, job_parts

LOOK_SECONDS = 60
WINDOW_LOOKS = 10  # capacity_window_minutes' default, one look a minute


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
    # 10 looks at a job still Starting, 1 that finds it Stopped; the relaunch: running, completed.
    assert run.fake.poll_waits == [LOOK_SECONDS] * (WINDOW_LOOKS + 1 + 2)
    assert run.fake.waits == [0]  # the window was the wait: the relaunch goes at once
    assert (run.output["attempts"], run.output["job_name"], run.output["instance_type"]) == (
        2, second["TrainingJobName"], "ml.p4de.24xlarge")
    check_requests(fallback, run, {})


def test_a_job_that_starts_within_the_window_is_not_stopped(fallback) -> None:
    # Starting for 9 looks, then training: never stopped.
    run = fallback.run({}, [sage.Outcome("complete", describes_to_finish=1, starting_looks=WINDOW_LOOKS - 1)])
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == [] and len(run.fake.calls) == 1
    assert len(run.fake.poll_waits) == WINDOW_LOOKS - 1 + 2


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
