"""One run at a time per workload (issue 21): a second start while a run is in progress ends before any job.

The first execution's job keeps running (the fake holds it InProgress) while a second execution of the same state
machine starts; the second must end with `AlreadyRunning`, naming the first, with no CreateTrainingJob. A spec that
allows concurrent runs (`MachineSpec.concurrent_runs`) gets no such check.
"""

from __future__ import annotations

import dataclasses
import time

import pytest

from compiler.state_machine import concurrency
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.conftest import NAMES, WORKLOADS
from tests.compiler.state_machine.harness import Deployed, type_requests


def wait_for(condition, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def second_start_while_first_runs(d: Deployed, name: str) -> tuple[str, sage.FakeSageMaker, object]:
    """Start a run whose job stays InProgress, start another meanwhile, then let the first complete."""
    fake = sage.FakeSageMaker(script=[sage.Outcome("running")], region="us-east-1")
    with sage.installed(fake):
        first = d.sfn.start_execution(stateMachineArn=d.arn, name=f"{name}-first", input="{}")["executionArn"]
        wait_for(lambda: fake.created and fake.exists(fake.created[0]["TrainingJobName"]), "the first run's job")
        second = d.run({}, [sage.completes()], name=f"{name}-second")
        fake.timelines[fake.created[0]["TrainingJobName"]] = [("Completed", "Completed")]  # at its next describe
        wait_for(lambda: d.sfn.describe_execution(executionArn=first)["status"] != "RUNNING", "the first run")
    assert d.sfn.describe_execution(executionArn=first)["status"] == "SUCCEEDED"
    return first, fake, second


@pytest.fixture(scope="module")
def shipped(deployed) -> Deployed:
    return deployed[NAMES[0]]


def test_a_second_start_is_refused_while_a_run_is_in_progress(shipped: Deployed) -> None:
    first, fake, second = second_start_while_first_runs(shipped, "serial")
    assert (second.status, second.error) == ("FAILED", concurrency.ALREADY_RUNNING)
    assert second.cause == (f"another run of {NAMES[0]} is in progress ({first}); one run at a time: wait for it, or "
                            "stop it with trainctl stop, then start again")
    assert second.fake.calls == [] and second.notifications == []
    assert len(fake.calls) == 1  # the first run's job only


def test_a_start_after_the_run_ended_proceeds(shipped: Deployed) -> None:
    run = shipped.run({}, [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    assert run.fake.settle_waits == [10]  # time for a run started just before to be listed


def test_a_spec_that_allows_concurrent_runs_runs_both(aws, specs, dev) -> None:
    spec = dataclasses.replace(specs[NAMES[0]], concurrent_runs=True, workload=f"{NAMES[0]}-concurrent")
    d = Deployed(spec, type_requests(WORKLOADS[NAMES[0]], dev))
    _, fake, second = second_start_while_first_runs(d, "together")
    assert second.status == "SUCCEEDED", second.cause
    assert len(fake.calls) == 1 and len(second.fake.calls) == 1


def test_a_list_that_fails_ends_the_run_before_any_job(shipped: Deployed, monkeypatch) -> None:
    # No states:ListExecutions for the role, say: the run cannot tell, and a second full job costs more than a retry.
    def denied(*args, **kwargs):
        raise sage.ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not authorized"},
                                "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": "1a"}}, "ListExecutions")

    monkeypatch.setattr(sage.StateTaskServiceSdk, "_operation", denied)
    run = shipped.run({}, [sage.completes()])
    assert (run.status, run.error) == ("FAILED", concurrency.CHECK_FAILED)
    assert "its role needs states:ListExecutions on it" in run.cause
    assert run.fake.calls == []


@pytest.mark.parametrize(("member", "accepted"), [("StateMachineArn", True), ("stateMachineArn", False),
                                                  ("StateMachineARN", False)])
def test_aws_sdk_parameters_are_the_api_members_in_pascal_case(member: str, accepted: bool) -> None:
    from compiler.state_machine import integrations

    state = {"Type": "Task", "Resource": concurrency.LIST_RESOURCE, "Parameters": {f"{member}.$": "$$.StateMachine.Id"},
             "End": True}
    problems = integrations.definition_problems({"StartAt": "List", "States": {"List": state}})
    assert (problems == []) is accepted, problems
