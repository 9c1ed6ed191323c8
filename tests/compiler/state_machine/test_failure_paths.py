"""Failure paths where the run cannot tell whether a job exists (issue 21), executed in moto.

(a) CreateTrainingJob's wait fails and DescribeTrainingJob fails too: the run stops the job by name and reports it
    as unknown, stopped, never "not created" (unless SageMaker says no job of that name exists).
(b) A server error (5xx) on CreateTrainingJob that did create the job: the run finds the job and waits on it; it
    neither repeats the call under the same name nor stops its own healthy job.
"""

from __future__ import annotations

import pytest

from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.conftest import NAMES
from tests.compiler.state_machine.harness import Deployed

# The describe's retry of `SageMaker.SageMakerException`: 4 repeats, 5 s doubling; the look-up after a 5xx: 2.
DESCRIBE_WAITS = [5, 10, 20, 40]
LOOKUP_WAITS = [5, 10]
STOP_WAITS = [5, 10, 20]
POLL = 60


@pytest.fixture(scope="module")
def shipped(deployed) -> Deployed:
    return deployed[NAMES[0]]


# ------------------------------------------------------------------------------------------------- (a)


def test_a_job_whose_wait_and_describe_both_fail_is_stopped_and_reported_unknown(shipped: Deployed) -> None:
    # The job exists and runs; the create's answer is lost and every describe (1 + 4 retries) is throttled.
    run = shipped.run({}, [sage.lost()], describe_throttle=5)
    [request] = run.fake.calls
    name = request["TrainingJobName"]
    assert run.fake.stopped == [name], run.history[-3:]
    assert (run.status, run.error) == ("FAILED", "TrainingJobFailed")
    assert "Unknown after 1 attempt(s): unknown, stopped: CreateTrainingJob failed (States.TaskFailed" in run.cause
    assert f"StopTrainingJob was sent for {name} in case the job exists" in run.cause
    [note] = run.notifications
    assert (note["status"], note["job_name"]) == ("Unknown", name)
    assert note["failure_reason"].startswith("unknown, stopped: ")


def test_an_unexplained_create_error_stops_by_name_harmlessly_when_no_job_exists(shipped: Deployed) -> None:
    # Neither a refusal, throttling nor a server error, and the describe fails (moto: ValidationException, which the
    # aws-sdk integration names SageMaker.SageMakerException): the stop is sent, fails, and the run says unknown.
    cause = sage.sdk_cause("Something else", 409, "3c")
    run = shipped.run({}, [sage.api_error("SageMaker.SageMakerException", cause)])
    [request] = run.fake.calls
    assert run.fake.created == [] and run.fake.stopped == []
    # The missing job's ValidationException reaches the stop as SageMaker.SageMakerException, which it repeats 3
    # times (the name it shares with throttling), 5 s doubling, before it lets the error go.
    assert run.fake.stop_calls == [request["TrainingJobName"]] * 4
    assert (run.status, run.error) == ("FAILED", "TrainingJobFailed")
    assert f"unknown, stopped: CreateTrainingJob failed (SageMaker.SageMakerException: {cause})" in run.cause
    assert "DescribeTrainingJob failed (SageMaker.SageMakerException: " in run.cause
    assert run.fake.waits == DESCRIBE_WAITS + STOP_WAITS


def test_resource_not_found_from_the_describe_proves_no_job_exists(shipped: Deployed) -> None:
    cause = sage.sdk_cause("Something else", 409, "3c")
    run = shipped.run({}, [sage.api_error("SageMaker.SageMakerException", cause)], missing="ResourceNotFound")
    assert (run.status, run.error) == ("FAILED", "TrainingJobNotCreated")
    assert run.fake.stop_calls == [] and run.fake.describes == 1
    assert f"SageMaker.SageMakerException: {cause}" in run.cause


# ------------------------------------------------------------------------------------------------- (b)


def test_a_job_created_despite_a_server_error_is_waited_on_not_stopped(shipped: Deployed) -> None:
    run = shipped.run({}, [sage.created_despite_server_error(describes_to_finish=2)])
    assert run.status == "SUCCEEDED", run.cause
    [request] = run.fake.calls  # not repeated under the same name
    assert run.fake.created == [request] and run.fake.stop_calls == []
    assert run.output["status"] == "Completed" and run.output["job_name"] == request["TrainingJobName"]
    assert run.fake.poll_waits == [POLL, POLL], "the run looks at the job again every 60 s while it runs"
    assert run.fake.waits == []
    [note] = run.notifications
    assert note["status"] == "Completed"


def test_a_job_found_after_a_server_error_is_read_like_any_other(shipped: Deployed) -> None:
    # Already complete at the first look: no wait, one call, no stop.
    run = shipped.run({}, [sage.created_despite_server_error(describes_to_finish=0)])
    assert run.status == "SUCCEEDED", run.cause
    assert len(run.fake.calls) == 1 and run.fake.waits == [] and run.fake.stop_calls == []


def test_a_server_error_without_a_job_is_repeated_after_the_look_up(shipped: Deployed) -> None:
    cause = sage.sdk_cause("We encountered an internal error. Please try again.", 500, "2b3c")
    run = shipped.run({}, [sage.api_error("SageMaker.SageMakerException", cause), sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    assert (len(run.fake.calls), len(run.fake.created)) == (2, 1)
    assert run.fake.calls[0]["TrainingJobName"] == run.fake.calls[1]["TrainingJobName"]
    assert run.fake.waits[:2] == LOOKUP_WAITS and len(run.fake.waits) == 3 and 3 <= run.fake.waits[2] <= 5
