"""CreateTrainingJob not accepted: refused (no job exists) or throttled (try again), executed in moto.

The AWS SDK integration reports both under one error name, `SageMaker.SageMakerException`, with SageMaker's message
in the cause (`... (Service: SageMaker, Status Code: 400, Request ID: ...)`). A refused request is reported as
`InvalidInput` after its one call; a refusal of the execution-ARN tag (an execution name with a character SageMaker
tags refuse) is tried once more tagged with the state machine's ARN; throttling (and a server error, status 5xx) is
repeated up to 6 times after a jittered wait, then the run ends saying so; any other error is read from the job, if
one exists, as before.

The fake SageMaker refuses whatever breaks botocore's service model (max, pattern, enum), and throttles the first
`throttle` calls of a run. The expected waits are the documented policy, written out here: 6 repeats, 5 s doubling,
at most 120 s, each wait between half and all of its step ("equal jitter").
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from compiler import state_machine as sm
from compiler.compilation.request import TAG_EXECUTION
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.conftest import NAMES
from tests.compiler.state_machine.harness import Deployed, Run, check_requests, expected_request, job_parts

# (shortest, longest) wait before repeat 1..6 of a throttled call.
THROTTLE_WAITS = [(3, 5), (5, 10), (10, 20), (20, 40), (40, 80), (60, 120)]
REFUSED = "SageMaker refused the request: "
# A string hyperparameter of each spec: 2,499 characters are 2,501 as JSON, one over SageMaker's max.
# (The generic Estimator's str() values: test_overrides.test_generic_string_length_limit_has_no_quotes.)
LONG_VALUES = {"sm-hostile": ("name", "x" * 2499), "sm-fallback": ("model", "m" * 2499)}
# The execution ARN in SageMaker's own wording of a refused tag value (the service message, not botocore's).
SERVICE_TAG_REFUSAL = ("1 validation error detected: Value '{arn}' at 'tags.4.member.value' failed to satisfy "
                       "constraint: Member must satisfy regular expression pattern: ^([\\p{{L}}\\p{{Z}}\\p{{N}}_.:/=+\\-@]*)$ "
                       "(Service: SageMaker, Status Code: 400, Request ID: 1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d)")


@pytest.fixture(scope="module")
def machines(deployed, deployed_test) -> Any:
    """A shipped workload, a fallback schedule with mixed EFA variables (Train is a Choice there), a heterogeneous
    cluster (no variants), and the specs with long string hyperparameters."""

    def get(label: str) -> Deployed:
        return deployed[NAMES[0]] if label == "shipped" else deployed_test[label]

    return get


def execution_arn(d: Deployed, run: Run) -> str:
    return f"{d.arn.replace(':stateMachine:', ':execution:')}:{run.name}"


def tag_value(request: dict[str, Any]) -> str:
    [value] = [t["Value"] for t in request["Tags"] if t["Key"] == TAG_EXECUTION]
    return value


def assert_throttle_waits_start(waits: list[int], n: int) -> None:
    """The run waited n times, as before the first n repeats of a throttled call."""
    assert len(waits) == n, waits
    for wait, (low, high) in zip(waits, THROTTLE_WAITS[:n], strict=True):
        assert isinstance(wait, int) and low <= wait <= high, waits


def assert_throttle_waits(waits: list[int]) -> None:
    assert_throttle_waits_start(waits, len(THROTTLE_WAITS))


# --------------------------------------------------------------------------------------------- refused


@pytest.mark.parametrize("label", sorted(LONG_VALUES))
def test_refused_request_is_invalid_input_after_one_call(machines, label: str) -> None:
    d = machines(label)
    key, value = LONG_VALUES[label]
    run = d.run({"hyperparameters": {key: value}}, [sage.completes()])
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT)
    assert run.cause.startswith(f"{REFUSED}1 validation error(s) detected: HyperParameters.{key}: value is 2501 "
                                "characters, max 2500"), run.cause
    assert len(run.fake.calls) == len(run.fake.refused) == 1
    assert run.fake.waits == [] and run.fake.created == [] and run.notifications == []


def test_refusal_in_the_service_wording_is_invalid_input_after_one_call(machines) -> None:
    d = machines("shipped")
    cause = ("1 validation error detected: Value '{...}' at 'hyperParameters' failed to satisfy constraint: Map value "
             "must satisfy constraint: [Member must have length less than or equal to 2500] (Service: SageMaker, "
             "Status Code: 400, Request ID: 0a1b)")
    run = d.run({}, [sage.api_error("SageMaker.SageMakerException", cause), sage.completes()])
    assert (run.status, run.error, run.cause) == ("FAILED", sm.INVALID_INPUT, REFUSED + cause)
    assert len(run.fake.calls) == 1 and run.fake.waits == []


def test_throttled_then_refused_ends_at_the_refusal(machines) -> None:
    d = machines("sm-hostile")
    run = d.run({"hyperparameters": {"name": "x" * 2499}}, [sage.completes()], throttle=2)
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT)
    assert run.cause.startswith(REFUSED + "1 validation error(s) detected: HyperParameters.name"), run.cause
    assert (len(run.fake.calls), run.fake.throttled, len(run.fake.refused)) == (3, 2, 1)
    assert_throttle_waits_start(run.fake.waits, 2)


# --------------------------------------------------------------------------------------------- throttled


@pytest.mark.parametrize("label", ["shipped", "sm-fallback-efa", "sm-hetero"])
def test_throttled_within_the_budget_then_accepted(machines, label: str) -> None:
    d = machines(label)
    overrides = {"max_run": 600}
    run = d.run(overrides, [sage.completes()], throttle=6)
    assert run.status == "SUCCEEDED", run.cause
    assert (len(run.fake.calls), run.fake.throttled, len(run.fake.created)) == (7, 6, 1)
    assert len({c["TrainingJobName"] for c in run.fake.calls}) == 1  # no job was created, so the name is free
    check_requests(d, run, overrides)  # every repeat is the same, complete request
    assert_throttle_waits(run.fake.waits)
    assert (run.output["attempts"], run.output["status"]) == (1, "Completed")
    assert run.notifications == [run.output]


@pytest.mark.parametrize("label", ["shipped", "sm-fallback-efa"])
def test_throttled_beyond_the_budget_fails_saying_so(machines, label: str) -> None:
    d = machines(label)
    run = d.run({}, [sage.completes()], throttle=100)
    assert (run.status, run.error) == ("FAILED", "TrainingJobNotCreated")
    assert ("NotCreated after 1 attempt(s): SageMaker.SageMakerException: CreateTrainingJob was throttled (or "
            "SageMaker was unavailable) 7 times in a row; the last answer: Rate exceeded") in run.cause, run.cause
    assert "Rate exceeded (Service: SageMaker, Status Code: 400" in run.cause
    assert (len(run.fake.calls), run.fake.throttled, run.fake.created) == (7, 7, [])
    assert_throttle_waits(run.fake.waits)
    assert 138 <= sum(run.fake.waits) <= 275  # about the budget of the Retry it replaces (5 s x 2^n, <= 120 s)
    [note] = run.notifications
    assert note["status"] == "NotCreated" and "7 times in a row" in note["failure_reason"]


def test_a_server_error_is_retried_like_throttling(machines) -> None:
    # Same generic name, status 5xx: transient, and no job exists (it was retried with throttling before, too).
    d = machines("shipped")
    cause = sage.sdk_cause("We encountered an internal error. Please try again.", 500, "2b3c")
    run = d.run({}, [sage.api_error("SageMaker.SageMakerException", cause)] * 2 + [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    assert (len(run.fake.calls), len(run.fake.created)) == (3, 1)
    # Before each repeat the run looks for a job the failed call may have created (test_failure_paths.py): moto
    # answers the describe of a missing job with a ValidationException, repeated twice (5 s, 10 s).
    waits = run.fake.waits
    assert waits[0:2] == waits[3:5] == [5, 10], waits
    assert_throttle_waits_start([waits[2], waits[5]], 2)


def test_another_generic_error_is_not_retried(machines) -> None:
    # Neither a refusal, throttling nor a server error: not repeated. SageMaker's describe says no job of the name
    # exists ("Requested resource not found."): reported as not created. (A describe that fails otherwise:
    # test_failure_paths.py.)
    d = machines("shipped")
    cause = sage.sdk_cause("Something else", 409, "3c")
    run = d.run({}, [sage.api_error("SageMaker.SageMakerException", cause), sage.completes()])
    assert (run.status, run.error) == ("FAILED", "TrainingJobNotCreated")
    assert f"SageMaker.SageMakerException: {cause}" in run.cause
    assert len(run.fake.calls) == 1
    assert run.fake.waits == [] and run.fake.describes == 1 and run.fake.stop_calls == []


def test_the_throttling_budget_is_per_launch(machines) -> None:
    # A capacity relaunch is a new CreateTrainingJob: it gets the whole budget again.
    d = machines("sm-fallback")
    run = d.run({}, [sage.throttled()] * 6 + [sage.capacity_error()] + [sage.throttled()] * 6 + [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(d, run, {})
    assert [job_parts(d.spec, c["TrainingJobName"])[1] for c in run.fake.calls] == [0] * 7 + [1] * 7
    assert len(run.fake.created) == 2
    assert_throttle_waits(run.fake.waits[:6])
    assert run.fake.waits[6] == 60  # the spec's capacity wait
    assert_throttle_waits(run.fake.waits[7:])
    assert run.output["attempts"] == 2


# --------------------------------------------------------------------------------------------- the execution tag


@pytest.mark.parametrize(("label", "name"), [("shipped", "nightly-✓"), ("sm-fallback-efa", "run-🚀-2"),
                                             ("sm-hetero", "«sweep»")])
def test_execution_name_with_a_symbol_tags_refuse(machines, label: str, name: str) -> None:
    d = machines(label)
    run = d.run({}, [sage.completes()], name=name)
    assert run.status == "SUCCEEDED", run.cause
    first, second = run.fake.calls
    assert tag_value(first) == execution_arn(d, run) and name in tag_value(first)
    [problems] = run.fake.refused
    assert len(problems) == 1 and problems[0].startswith("Tags[") and ".Value: " in problems[0], problems
    assert run.fake.created == [second]
    assert second == expected_request(d, second["TrainingJobName"], d.arn, {})  # tagged with the state machine
    assert {k: v for k, v in first.items() if k != "Tags"} == {k: v for k, v in second.items() if k != "Tags"}
    assert run.output["attempts"] == 1 and run.fake.waits == []


def test_refused_tag_in_the_service_wording_is_replaced(machines) -> None:
    d = machines("shipped")
    name = "nightly-7"
    arn = f"{d.arn.replace(':stateMachine:', ':execution:')}:{name}"
    refusal = sage.api_error("SageMaker.SageMakerException", SERVICE_TAG_REFUSAL.format(arn=arn))
    run = d.run({}, [refusal, sage.completes()], name=name)
    assert run.status == "SUCCEEDED", run.cause
    assert [tag_value(c) for c in run.fake.calls] == [arn, d.arn]
    assert len(run.fake.created) == 1


def test_the_tag_is_replaced_once_and_other_refusals_stay_invalid_input(machines) -> None:
    d = machines("sm-hostile")
    run = d.run(json.dumps({"hyperparameters": {"name": "x" * 2499}}), [sage.completes()], name="sweep-✓")
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT)
    first, second = run.fake.refused
    index = [t["Key"] for t in run.fake.calls[0]["Tags"]].index(TAG_EXECUTION)
    assert sorted(p.split(":")[0] for p in first) == ["HyperParameters.name", f"Tags[{index}].Value"]
    assert [p.split(":")[0] for p in second] == ["HyperParameters.name"]
    assert run.cause.startswith(REFUSED + "1 validation error(s) detected: HyperParameters.name"), run.cause
    assert [tag_value(c) for c in run.fake.calls] == [execution_arn(d, run), d.arn]
    assert run.fake.created == [] and run.notifications == []


def test_a_refused_state_machine_tag_is_not_retried(machines) -> None:
    # Tagged with the state machine from the start (the ASCII check): a tag refusal now is an ordinary refusal.
    d = machines("shipped")
    arn = d.arn
    refusal = sage.api_error("SageMaker.SageMakerException", SERVICE_TAG_REFUSAL.format(arn=arn))
    run = d.run({}, [refusal, sage.completes()], name="retry(3)")
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT)
    assert [tag_value(c) for c in run.fake.calls] == [arn]
