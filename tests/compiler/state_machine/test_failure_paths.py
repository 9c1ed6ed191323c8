"""Failure paths where the run cannot tell whether a job exists (issues 21 and 32), executed in moto.

(a) CreateTrainingJob fails and DescribeTrainingJob fails too: the run stops the job by name and reports it as
    unknown, stopped; it reports "not created" only when SageMaker says no job of that name exists (its answer to a
    name no job has: "Requested resource not found."), and a throttled look-up is repeated first.
(b) A server error (5xx) on CreateTrainingJob that did create the job: the run finds the job and waits on it; it
    neither repeats the call under the same name nor stops its own healthy job.
"""

from __future__ import annotations

import pytest

from compiler.state_machine import definition as sm_definition
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.conftest import NAMES
from tests.compiler.state_machine.harness import Deployed

# The look-up after a 5xx: 2 repeats, 5 s doubling.
LOOKUP_WAITS = [5, 10]
POLL = 60


@pytest.fixture(scope="module")
def shipped(deployed) -> Deployed:
    return deployed[NAMES[0]]


# ------------------------------------------------------------------------------------------------- (a)


def test_a_job_whose_wait_and_describe_both_fail_is_stopped_and_reported_unknown(shipped: Deployed) -> None:
    # The job exists and runs; the create's answer is lost and every describe is throttled: the look-up is repeated
    # THROTTLE_RETRIES times (jittered, growing waits), then the job is stopped by name.
    run = shipped.run({}, [sage.lost()], describe_throttle=1 + sm_definition.THROTTLE_RETRIES)
    [request] = run.fake.calls
    name = request["TrainingJobName"]
    assert run.fake.stopped == [name], run.history[-3:]
    assert run.fake.describes == 1 + sm_definition.THROTTLE_RETRIES
    delays = sm_definition.throttle_delays()
    assert len(run.fake.waits) == len(delays)
    assert all(low <= wait <= high for wait, (low, high) in zip(run.fake.waits, delays, strict=True))
    assert (run.status, run.error) == ("FAILED", "TrainingJobFailed")
    assert "Unknown after 1 attempt(s): unknown, stopped: CreateTrainingJob failed (States.TaskFailed" in run.cause
    assert f"StopTrainingJob was sent for {name} in case the job exists" in run.cause
    [note] = run.notifications
    assert (note["status"], note["job_name"]) == ("Unknown", name)
    assert note["failure_reason"].startswith("unknown, stopped: ")


def test_a_throttled_look_up_within_its_budget_finds_the_job_and_waits_on_it(shipped: Deployed) -> None:
    # One throttled describe fewer than the budget: the job is found, waited on, and completes; nothing is stopped.
    run = shipped.run({}, [sage.lost()], describe_throttle=sm_definition.THROTTLE_RETRIES)
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.stop_calls == [] and len(run.fake.calls) == 1
    assert len(run.fake.waits) == sm_definition.THROTTLE_RETRIES


def test_a_job_that_never_existed_ends_not_created_with_sagemakers_message(shipped: Deployed) -> None:
    # Neither a refusal, throttling nor a server error (PassRole denied, say), and DescribeTrainingJob answers as it
    # does for a name no job has (ValidationException "Requested resource not found.", reported by the AWS SDK
    # integration as SageMaker.SageMakerException): the run ends "not created" at once, with the create's message;
    # no retry of the describe, no stop of a job that never existed.
    cause = sage.sdk_cause("User: arn:aws:sts::111111111111:assumed-role/dev-sm/x is not authorized to perform: "
                           "iam:PassRole on resource: arn:aws:iam::111111111111:role/dev-exec", 400, "3c")
    run = shipped.run({}, [sage.api_error("SageMaker.SageMakerException", cause)])
    assert (run.status, run.error) == ("FAILED", "TrainingJobNotCreated")
    assert run.fake.created == [] and run.fake.stop_calls == []
    assert run.fake.describes == 1 and run.fake.waits == []
    assert f"NotCreated after 1 attempt(s): SageMaker.SageMakerException: {cause}" in run.cause
    [note] = run.notifications
    assert note["status"] == "NotCreated" and "iam:PassRole" in note["failure_reason"]


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
