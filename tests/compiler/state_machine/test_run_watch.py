"""What the run does while its job runs (issue 21), executed in moto against the fake SageMaker.

- Capacity window: a job whose SecondaryStatus stays `Starting` (waiting for instances) for the spec's
  `capacity_retry.capacity_window_minutes` (default 10) is stopped, waited on until Stopped, and relaunched at once
  on the next instance type from the same checkpoints; every attempt spent that way ends the run in
  `InsufficientCapacity`.
- Stall watchdog: see the second half.

The loop looks at the job once a minute (60 s, docs/state-machines.md), so a 10-minute window is 10 looks.
"""

from __future__ import annotations

import itertools

import pytest

from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import Deployed, check_requests, job_parts

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
    # 10 looks a minute apart at a job still Starting, 1 that finds it Stopped; the relaunch: its first look a minute
    # after its creation, then, while it trains, looks 4 minutes apart (max_run 24 h x 5 attempts x 9 events a look
    # within 20,000 events: 194 s, in whole minutes).
    assert run.fake.poll_waits == [LOOK_SECONDS] * (WINDOW_LOOKS + 1) + [LOOK_SECONDS, 240]
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


# --------------------------------------------------------------------------------------------- stall watchdog
# sm-watched: stall_watchdog {metric: train:loss, minutes: 5, max_relaunches: 1}, primary ml.g5.2xlarge, fallback
# ml.g5.4xlarge. While the job trains, each look asks CloudWatch for a train:loss datapoint since the last look that
# saw progress; 5 looks in a row without one stop the job.
STALL_LOOKS = 5
JOBS_NAMESPACE = "/aws/sagemaker/TrainingJobs"  # SageMaker's namespace for a job's metrics


@pytest.fixture(scope="module")
def watched(deployed_test) -> Deployed:
    return deployed_test["sm-watched"]


def test_a_job_that_progresses_is_watched_and_never_stopped(watched) -> None:
    run = watched.run({}, [sage.completes(describes_to_finish=4)])
    assert run.status == "SUCCEEDED", run.cause
    [request] = run.fake.calls
    name = request["TrainingJobName"]
    assert run.fake.stop_calls == []
    # Every look at the training job asks (4 looks), from the job's creation at first.
    queries = run.fake.metric_queries
    assert len(queries) == 4
    for query in queries:
        assert {q["Id"] for q in query["MetricDataQueries"]} == {"byhost", "byjob"}
        stats = {q["Id"]: q["MetricStat"] for q in query["MetricDataQueries"]}
        assert stats["byhost"]["Metric"] == {"Namespace": JOBS_NAMESPACE, "MetricName": "train:loss",
                                             "Dimensions": [{"Name": "Host", "Value": f"{name}/algo-1"}]}
        assert stats["byjob"]["Metric"]["Dimensions"] == [{"Name": "TrainingJobName", "Value": name}]
    # Each look that saw progress moves the start of the next question to its own time: right after its question.
    for earlier, later in itertools.pairwise(queries):
        assert earlier["StartTime"] < earlier["EndTime"] <= later["StartTime"] < later["EndTime"]
    assert run.output["stall_relaunches"] == 0
    check_requests(watched, run, {})


def test_a_stalled_job_is_stopped_and_relaunched_from_its_checkpoints(watched) -> None:
    run = watched.run({}, [sage.stalls(progress_looks=1), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    first, second = run.fake.calls
    assert run.fake.stop_calls == [first["TrainingJobName"]]
    assert run.fake.status(first["TrainingJobName"]) == ("Stopped", "Stopped")
    # The same type (a stall is not a capacity problem), the next attempt's name, the same checkpoints.
    assert first["ResourceConfig"]["InstanceType"] == second["ResourceConfig"]["InstanceType"] == "ml.g5.2xlarge"
    assert [job_parts(watched.spec, c["TrainingJobName"])[1] for c in run.fake.calls] == [0, 1]
    assert first["CheckpointConfig"] == second["CheckpointConfig"]
    # One look sees progress, then 5 quiet looks stop the job.
    assert run.fake.looks[first["TrainingJobName"]] == 1 + STALL_LOOKS
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
    assert ("Stalled after 2 attempt(s): Stalled: no new train:loss datapoint for 5 minutes while training; "
            "stopped by the run after 1 stall relaunch(es)") in run.cause
    [note] = run.notifications
    assert note["status"] == "Stalled" and note["failure_reason"].startswith("Stalled: no new train:loss datapoint")
    assert note["stall_relaunches"] == 1


def test_a_failure_of_the_users_code_is_never_relaunched(watched) -> None:
    run = watched.run({}, [sage.algorithm_error(), sage.completes()])
    assert (run.status, run.error) == ("FAILED", "TrainingJobFailed")
    assert len(run.fake.calls) == 1 and run.fake.stop_calls == []
    assert "AlgorithmError: ExecuteUserScriptError" in run.cause
    assert run.output is None and run.notifications[0]["stall_relaunches"] == 0


def test_a_job_waiting_for_capacity_moves_to_the_fallback_even_with_a_watchdog(watched) -> None:
    run = watched.run({}, [sage.never_starts(), sage.stalls(), sage.completes()])
    # capacity: p5 -> fallback; then the stall relaunch stays on the fallback type
    types = [c["ResourceConfig"]["InstanceType"] for c in run.fake.calls]
    assert types == ["ml.g5.2xlarge", "ml.g5.4xlarge", "ml.g5.4xlarge"], run.cause
    assert run.status == "SUCCEEDED", run.cause
    assert [job_parts(watched.spec, n)[1] for n in (c["TrainingJobName"] for c in run.fake.calls)] == [0, 1, 2]


# --------------------------------------------------------------------------------------------- the history
# Step Functions keeps at most 25,000 events per execution ("Step Functions service quotas") and fails one that
# needs more, the job left running. Looks at a training job are spaced so that every attempt training for max_run
# fits: measured here from the executed definitions, not from the compiler's own count.
HISTORY_LIMIT = 25_000


def _events_per_look(d: Deployed) -> tuple[float, int]:
    """(history events per look at a training job, events of a run with one job that trains two looks)."""
    short = d.run({}, [sage.completes(describes_to_finish=2)])
    long = d.run({}, [sage.completes(describes_to_finish=6)])
    assert short.status == long.status == "SUCCEEDED"
    return (len(long.history) - len(short.history)) / 4, len(short.history)


def test_every_attempt_training_for_max_run_fits_the_execution_history(deployed, deployed_test, specs) -> None:
    plain = _events_per_look(deployed_test["sm-fallback"])
    watching = _events_per_look(deployed_test["sm-watched"])
    assert watching[0] > plain[0]
    for spec in [*specs.values(), deployed_test["sm-fallback"].spec, deployed_test["sm-watched"].spec]:
        per_look, rest = watching if spec.stall else plain
        attempts = 1 + spec.capacity_relaunches + (spec.stall.max_relaunches if spec.stall else 0)
        looks = attempts * (spec.max_run / spec.training_poll_seconds + 1)
        assert looks * per_look + attempts * rest <= HISTORY_LIMIT, spec.workload
        assert spec.training_poll_seconds % 60 == 0 and spec.training_poll_seconds >= 60


class _StopRefused(sage.FakeSageMaker):
    """StopTrainingJob refused (AccessDenied, say): the job goes on and ends by itself."""

    def stop(self, name: str) -> None:
        self.stop_calls.append(name)
        raise sage.ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not authorized"},
                                "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": "1a"}}, "StopTrainingJob")


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
