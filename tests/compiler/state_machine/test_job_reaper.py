"""The job reaper's real definition executed in moto's Step Functions interpreter (issue 21).

A run that ends by console Stop, `trainctl stop` (both StopExecution: ABORTED), its execution timeout (TIMED_OUT) or
a failure outside its catches (FAILED) runs no state of its own; the environment's reaper, started by EventBridge
with the execution's ARN, stops the jobs the run left InProgress. Here the reaper runs against real executions of a
workload-like state machine in moto and training jobs in moto's SageMaker, tagged as the workload definitions tag
them. StopTrainingJob and DescribeTrainingJob reach the test SageMaker of `sagemaker_sync` (every stop recorded);
Search reaches `_Search` below, because moto 5.2.5's Search stops at the first tag filter (a job with the right
execution tag matches whatever else is asked) and does not page: `_Search` applies every filter (`And`, as the
reaper asks), sorts by CreationTime and pages with MaxResults and NextToken as the API reference describes.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

import boto3
import pytest
from botocore.exceptions import ClientError
from moto.core import DEFAULT_ACCOUNT_ID
from moto.sagemaker.models import sagemaker_backends
from moto.sagemaker.responses import SageMakerResponse
from moto.stepfunctions.parser.api import ExecutionStatus
from moto.stepfunctions.parser.models import stepfunctions_parser_backends
from moto.stepfunctions.parser.utils import TMP_THREADS

from compiler.compilation.request import TAG_ENVIRONMENT, TAG_EXECUTION
from compiler.state_machine import reaper
from compiler.state_machine.asl import all_states
from tests.compiler.state_machine.harness import REGION, ROLE_ARN, Deployed
from tests.compiler.state_machine.sagemaker_sync import FakeSageMaker, Outcome, installed

_names = itertools.count()
# A workload's state machine for the reaper's look-ups: its runs wait (moto stops a Wait on StopExecution).
_WORKLOAD = {"StartAt": "Train", "States": {"Train": {"Type": "Wait", "Seconds": 86400, "End": True}}}


class _Search:
    """SageMaker Search over moto's training jobs: Equals filters on tags and properties, all of them (`And`),
    sorted by CreationTime, MaxResults per page and a NextToken while more remain."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    @staticmethod
    def _matches(job: Any, rule: dict[str, Any]) -> bool:
        assert rule["Operator"] == "Equals", rule
        if rule["Name"].startswith("Tags."):
            return {"Key": rule["Name"][5:], "Value": rule["Value"]} in job.tags
        return bool(getattr(job, {"TrainingJobStatus": "training_job_status"}[rule["Name"]]) == rule["Value"])

    def __call__(self, response: SageMakerResponse) -> Any:
        request = json.loads(response.body)
        self.calls.append(request)
        assert request["Resource"] == "TrainingJob" and request["SearchExpression"]["Operator"] == "And"
        assert (request["SortBy"], request["SortOrder"]) == ("CreationTime", "Ascending")
        jobs = sorted(sagemaker_backends[DEFAULT_ACCOUNT_ID][REGION].training_jobs.values(),
                      key=lambda j: j.creation_time)
        found = [j for j in jobs if all(self._matches(j, f) for f in request["SearchExpression"]["Filters"])]
        start = int(request.get("NextToken", "0"))
        end = start + request["MaxResults"]
        page: dict[str, Any] = {"Results": [{"TrainingJob": j.gen_response_object()} for j in found[start:end]]}
        if end < len(found):
            page["NextToken"] = str(end)
        return json.dumps(page, default=str)


@dataclass
class Reaped:
    status: str
    error: str | None
    fake: FakeSageMaker
    search: _Search
    history: list[dict[str, Any]]


class World:
    """Workload state machines, their executions and jobs in moto, and the reaper to run against them."""

    def __init__(self) -> None:
        self.sfn = boto3.client("stepfunctions", region_name=REGION)
        self.sagemaker = boto3.client("sagemaker", region_name=REGION)
        self.reaper = self.sfn.create_state_machine(
            name="training-job-reaper-dev", roleArn=ROLE_ARN,
            definition=json.dumps(reaper.build_reaper_definition("dev")))["stateMachineArn"]
        self.running: list[str] = []

    def workload(self) -> str:
        return self.sfn.create_state_machine(name=f"dev-workload-{next(_names)}", definition=json.dumps(_WORKLOAD),
                                             roleArn=ROLE_ARN)["stateMachineArn"]

    def start(self, machine: str) -> str:
        """A run that waits in its Train state until stopped."""
        arn = self.sfn.start_execution(stateMachineArn=machine, name=f"run-{next(_names)}")["executionArn"]
        self.running.append(arn)
        # In its wait before `installed()` makes waits instant: else it would end at once, not run on.
        deadline = time.monotonic() + 10
        while not any(e["type"] == "WaitStateEntered" for e in
                      self.sfn.get_execution_history(executionArn=arn)["events"]):
            assert time.monotonic() < deadline, "the run did not reach its wait in 10 s"
            time.sleep(0.01)
        time.sleep(0.05)  # from entering the state to waiting in it
        return arn

    def abort(self, arn: str) -> None:
        """StopExecution, as console Stop and `trainctl stop` call it."""
        self.sfn.stop_execution(executionArn=arn)
        self.running.remove(arn)
        deadline = time.monotonic() + 10
        while (status := self.sfn.describe_execution(executionArn=arn)["status"]) == "RUNNING":
            assert time.monotonic() < deadline, "the run did not stop in 10 s"
            time.sleep(0.01)
        assert status == "ABORTED"

    def job(self, tag: str, status: str = "InProgress", environment: str = "dev") -> str:
        """A training job tagged as the workload definitions tag them, in the given status."""
        name = f"gpt-{next(_names):012x}-0"
        self.sagemaker.create_training_job(
            TrainingJobName=name, RoleArn=ROLE_ARN,
            AlgorithmSpecification={"TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/t:1",
                                    "TrainingInputMode": "File"},
            OutputDataConfig={"S3OutputPath": "s3://out/"}, StoppingCondition={"MaxRuntimeInSeconds": 3600},
            ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 30},
            Tags=[{"Key": TAG_ENVIRONMENT, "Value": environment}, {"Key": TAG_EXECUTION, "Value": tag}])
        sagemaker_backends[DEFAULT_ACCOUNT_ID][REGION].training_jobs[name].training_job_status = status
        return name

    def status_of(self, name: str) -> str:
        return str(sagemaker_backends[DEFAULT_ACCOUNT_ID][REGION].training_jobs[name].training_job_status)

    def reap(self, execution: str, status: str = "ABORTED", fake: FakeSageMaker | None = None) -> Reaped:
        """Run the reaper with the input the environment's rule gives it for the execution's end."""
        fake = fake or FakeSageMaker(script=[], region=REGION)
        machine = execution.replace(":execution:", ":stateMachine:").rsplit(":", 1)[0]
        payload = {reaper.EXECUTION_ARN: execution, reaper.STATE_MACHINE_ARN: machine, reaper.STATUS: status}
        search = _Search()

        def respond(response: SageMakerResponse) -> Any:  # a function, so moto finds the action as a method
            return search(response)

        with installed(fake), mock.patch.object(SageMakerResponse, "search", respond):
            started = len(TMP_THREADS)
            arn = self.sfn.start_execution(stateMachineArn=self.reaper, name=f"reap-{next(_names)}",
                                           input=json.dumps(payload))["executionArn"]
            for thread in TMP_THREADS[started:started + 1]:
                thread.join(timeout=60)
            deadline = time.monotonic() + 60
            while (described := self.sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
                assert time.monotonic() < deadline, "the reaper did not finish in 60 s"
                time.sleep(0.02)
        history = self.sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
        return Reaped(described["status"], described.get("error"), fake, search, history)


@pytest.fixture(scope="module")
def world(aws: None) -> Iterator[World]:
    w = World()
    yield w
    for arn in list(w.running):  # let the runs' threads end
        w.sfn.stop_execution(executionArn=arn)


def test_the_definition_passes_the_checks_workload_definitions_pass() -> None:
    definition = reaper.build_reaper_definition("dev")  # raises on a refused resource, field, error or intrinsic
    tasks = {name: s["Resource"] for name, s in all_states(definition) if s["Type"] == "Task"}
    assert set(tasks.values()) == {reaper.DESCRIBE_EXECUTION_RESOURCE, reaper.SEARCH_RESOURCE, reaper.STOP_RESOURCE,
                                   reaper.DESCRIBE_JOB_RESOURCE, reaper.LIST_EXECUTIONS_RESOURCE}
    assert definition["TimeoutSeconds"] == reaper.TIMEOUT_SECONDS


def test_an_aborted_runs_running_job_is_stopped_and_nothing_else(world: World) -> None:
    machine = world.workload()
    ended, other = world.start(machine), world.start(machine)
    running = world.job(ended)
    finished = {world.job(ended, status): status for status in ("Completed", "Failed", "Stopped", "Stopping")}
    of_another_run = world.job(other)
    of_another_environment = world.job(ended, environment="prod")
    world.abort(ended)

    reaped = world.reap(ended)

    assert reaped.status == "SUCCEEDED", reaped.error
    assert reaped.fake.stop_calls == [running]
    assert world.status_of(running) == "Stopping"  # StopTrainingJob: Stopping, then Stopped
    assert {name: world.status_of(name) for name in finished} == finished
    assert world.status_of(of_another_run) == world.status_of(of_another_environment) == "InProgress"
    # Only this environment's jobs of this execution were asked for; the fallback looked for the state machine's.
    first = reaped.search.calls[0]["SearchExpression"]["Filters"]
    assert {"Name": f"Tags.{TAG_EXECUTION}", "Operator": "Equals", "Value": ended} in first
    assert {"Name": f"Tags.{TAG_ENVIRONMENT}", "Operator": "Equals", "Value": "dev"} in first


@pytest.mark.parametrize("status", reaper.STATUSES)
def test_every_way_a_run_ends_outside_its_definition_gets_its_job_stopped(world: World, status: str) -> None:
    """ABORTED (console Stop, `trainctl stop`), TIMED_OUT and FAILED: the rule passes the status; the reaper acts
    on the execution being over, whichever way."""
    machine = world.workload()
    ended = world.start(machine)
    job = world.job(ended)
    world.abort(ended)  # moto cannot time an execution out or fail it from outside: the status is the input's

    reaped = world.reap(ended, status=status)

    assert reaped.status == "SUCCEEDED", reaped.error
    assert reaped.fake.stopped == [job]


def test_pages_are_followed_and_every_running_job_on_them_is_stopped(world: World) -> None:
    machine = world.workload()
    ended = world.start(machine)
    jobs = [world.job(ended, "Completed" if i % 4 == 0 else "InProgress") for i in range(2 * reaper.PAGE_SIZE + 3)]
    world.abort(ended)

    reaped = world.reap(ended)

    assert reaped.status == "SUCCEEDED", reaped.error
    assert sorted(reaped.fake.stopped) == sorted(j for i, j in enumerate(jobs) if i % 4)
    pages = [c for c in reaped.search.calls if {"Name": f"Tags.{TAG_EXECUTION}", "Operator": "Equals",
                                                 "Value": ended} in c["SearchExpression"]["Filters"]]
    assert [c.get("NextToken") for c in pages] == [None, str(reaper.PAGE_SIZE), str(2 * reaper.PAGE_SIZE)]
    assert {c["MaxResults"] for c in pages} == {reaper.PAGE_SIZE}


def test_a_redriven_run_keeps_its_job(world: World) -> None:
    """The event said ABORTED, but by the time the reaper looks the execution runs again (RedriveExecution)."""
    machine = world.workload()
    again = world.start(machine)
    job = world.job(again)

    reaped = world.reap(again)

    assert world.sfn.describe_execution(executionArn=again)["status"] == "RUNNING"
    assert reaped.status == "SUCCEEDED", reaped.error
    assert reaped.fake.stop_calls == [] and reaped.search.calls == []
    assert world.status_of(job) == "InProgress"


def test_jobs_tagged_with_the_state_machine_are_stopped_only_when_none_of_its_runs_goes_on(world: World) -> None:
    """A run whose name SageMaker tags refuse tags its job with the state machine's ARN, shared by its other runs."""
    machine = world.workload()
    first, second = world.start(machine), world.start(machine)
    orphan = world.job(machine)
    world.abort(first)

    reaped = world.reap(first)  # `second` still runs and may own the job

    assert world.sfn.describe_execution(executionArn=second)["status"] == "RUNNING"
    assert reaped.status == "SUCCEEDED", reaped.error
    assert reaped.fake.stop_calls == [] and world.status_of(orphan) == "InProgress"

    world.abort(second)
    reaped = world.reap(second)  # the next end of a run that leaves none running

    assert reaped.status == "SUCCEEDED", reaped.error
    assert reaped.fake.stop_calls == [orphan] and world.status_of(orphan) == "Stopping"


def test_a_run_pending_redrive_keeps_its_job(world: World) -> None:
    """The run was aborted, and its redrive accepted: DescribeExecution says PENDING_REDRIVE until it runs again."""
    machine = world.workload()
    run = world.start(machine)
    job = world.job(run)
    world.abort(run)
    execution = next(e for sm in stepfunctions_parser_backends[DEFAULT_ACCOUNT_ID][REGION].state_machines
                     for e in sm.executions if e.exec_arn == run)
    execution.exec_status = ExecutionStatus.PENDING_REDRIVE

    reaped = world.reap(run)

    assert world.sfn.describe_execution(executionArn=run)["status"] == "PENDING_REDRIVE"
    assert reaped.status == "SUCCEEDED", reaped.error
    assert reaped.fake.stop_calls == [] and reaped.search.calls == []
    assert world.status_of(job) == "InProgress"


class _StopRefused(FakeSageMaker):
    """StopTrainingJob fails for the named jobs; `ended` of them finished meanwhile, the others still run."""

    def __init__(self, refused: set[str], ended: set[str]) -> None:
        super().__init__(script=[], region=REGION)
        self.refuse, self.ended = refused, ended

    def stop(self, name: str) -> None:
        if name not in self.refuse:
            return super().stop(name)
        self.stop_calls.append(name)
        if name in self.ended:
            sagemaker_backends[DEFAULT_ACCOUNT_ID][REGION].training_jobs[name].training_job_status = "Completed"
        raise ClientError({"Error": {"Code": "ValidationException", "Message": "The job is not InProgress."},
                           "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": "1a2b"}}, "StopTrainingJob")


def test_a_stop_that_fails_on_a_job_that_ended_meanwhile_is_forgiven(world: World) -> None:
    machine = world.workload()
    ended = world.start(machine)
    job = world.job(ended)
    world.abort(ended)

    reaped = world.reap(ended, fake=_StopRefused({job}, {job}))

    assert reaped.status == "SUCCEEDED", reaped.error
    assert world.status_of(job) == "Completed"


def test_a_job_left_running_fails_the_reaper_after_the_others_are_stopped(world: World) -> None:
    machine = world.workload()
    ended = world.start(machine)
    stubborn, other = world.job(ended), world.job(ended)
    world.abort(ended)

    reaped = world.reap(ended, fake=_StopRefused({stubborn}, set()))

    assert (reaped.status, reaped.error) == ("FAILED", reaper.JOBS_LEFT_RUNNING)
    assert world.status_of(other) == "Stopping" and world.status_of(stubborn) == "InProgress"
    # Throttling and other unmodelled errors are retried before the job is looked at.
    assert reaped.fake.stop_calls.count(stubborn) == 1 + 5


class _Unreadable(_StopRefused):
    """StopTrainingJob fails for the named jobs, and DescribeTrainingJob then fails for them too."""

    def describe_call(self, name: str) -> dict[str, Any]:
        if name in self.refuse:
            raise ClientError({"Error": {"Code": "InternalFailure", "Message": "We encountered an internal error."},
                               "ResponseMetadata": {"HTTPStatusCode": 500, "RequestId": "5c"}}, "DescribeTrainingJob")
        return super().describe_call(name)


def test_a_job_whose_stop_and_describe_both_fail_fails_the_reaper_so_its_alarm_fires(world: World) -> None:
    # The job may still bill: the reaper cannot say it stopped, so it fails (the environment's alarm on the reaper's
    # failed executions: tests/platform/test_job_reaper.py), naming the run.
    machine = world.workload()
    ended = world.start(machine)
    stuck = world.job(ended)
    world.abort(ended)

    reaped = world.reap(ended, fake=_Unreadable({stuck}, set()))

    assert (reaped.status, reaped.error) == ("FAILED", reaper.JOBS_LEFT_RUNNING)
    assert world.status_of(stuck) == "InProgress"
    failed = [e for e in reaped.history if e["type"] == "ExecutionFailed"]
    assert ended in failed[0]["executionFailedEventDetails"]["cause"]


@pytest.mark.parametrize("execution_name", ["plain-run", "untaggable(run)"])
def test_a_real_run_stopped_by_stop_execution_leaves_its_job_to_the_reaper_which_stops_it(
        world: World, deployed: dict[str, Deployed], execution_name: str) -> None:
    """gpt-smddp's own definition, stopped the way console Stop and `trainctl stop` stop it: the run runs no state
    after StopExecution, so its job is still InProgress; the reaper, given the run's end as the rule gives it, stops
    it. An execution name SageMaker tags refuse makes the run tag its job with the state machine's ARN instead."""
    d = deployed["gpt-smddp"]
    fake = FakeSageMaker(script=[Outcome("running")], region=REGION)
    with installed(fake):
        arn = d.sfn.start_execution(stateMachineArn=d.arn, name=execution_name, input="{}")["executionArn"]
        deadline = time.monotonic() + 30
        while not fake.created:
            assert time.monotonic() < deadline, "the run created no job in 30 s"
            time.sleep(0.01)
        d.sfn.stop_execution(executionArn=arn)
        while (status := d.sfn.describe_execution(executionArn=arn)["status"]) == "RUNNING":
            assert time.monotonic() < deadline, "the run did not stop"
            time.sleep(0.01)
    assert status == "ABORTED"
    [job] = [request["TrainingJobName"] for request in fake.created]
    [tag] = [t["Value"] for t in fake.created[0]["Tags"] if t["Key"] == TAG_EXECUTION]
    assert tag == (d.arn if "(" in execution_name else arn)
    assert world.status_of(job) == "InProgress"  # nothing in the definition stopped it

    reaped = world.reap(arn, fake=fake)

    assert reaped.status == "SUCCEEDED", reaped.error
    assert reaped.fake.stopped == [job] and world.status_of(job) == "Stopping"
