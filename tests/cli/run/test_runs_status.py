"""`trainctl runs` STATUS says why a run ended and whether the stall watchdog relaunched its job (issue 21)."""

from __future__ import annotations

from compiler.facts.summaries import RunSummary
from trainctl.run.listing import run_status

ARN = "arn:aws:states:us-east-1:111111111111:execution:dev-gpt:n"


def _summary(**fields) -> RunSummary:
    run = RunSummary.of({"job_name": "gpt-0123456789ab-0", "execution_arn": ARN, **fields})
    assert run is not None
    return run


def test_a_run_that_stalled_past_its_relaunches_shows_the_error_and_the_relaunches() -> None:
    described = {"status": "FAILED", "error": "TrainingStalled"}
    run = _summary(status="Stalled", stall_relaunches=2)
    assert run_status(described, run) == "FAILED (TrainingStalled; Stalled: 2 relaunch(es))"


def test_a_run_that_succeeded_after_a_stall_says_so() -> None:
    assert run_status({"status": "SUCCEEDED"}, _summary(stall_relaunches=1)) == "SUCCEEDED (Stalled: 1 relaunch(es))"


def test_a_run_without_a_stall_or_without_a_watchdog_shows_the_status_alone() -> None:
    assert run_status({"status": "SUCCEEDED"}, _summary(stall_relaunches=0)) == "SUCCEEDED"
    assert run_status({"status": "SUCCEEDED"}, _summary()) == "SUCCEEDED"
    assert run_status({"status": "FAILED", "error": "InsufficientCapacity"}, None) == "FAILED (InsufficientCapacity)"
