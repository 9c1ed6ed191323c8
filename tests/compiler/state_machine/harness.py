"""Run a workload's definition in moto's Step Functions interpreter with the fake SageMaker behind it.

Creating a state machine parses its definition (ANTLR, about a second for ~20 KB), so a `Deployed`
machine is created once per workload and runs many executions. `check_requests` holds every request that reached
"SageMaker" to the full service-model check and to the compiled request of the attempt's instance type, filled in
as Step Functions and the run would: nothing else may differ.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import time
from dataclasses import dataclass
from typing import Any

import boto3
from moto.stepfunctions.parser.utils import TMP_THREADS

from compiler import state_machine as sm
from compiler.compilation.request import TAG_EXECUTION, compile_request
from compiler.facts import placeholders as ph
from compiler.facts import samples
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.rules.compute import with_instance_type
from compiler.sdk.service_model import validate_request
from compiler.state_machine import concurrency
from tests.compiler.state_machine.sagemaker_sync import FakeSageMaker, Outcome, installed

REGION = samples.REGION
ROLE_ARN = f"arn:aws:iam::{samples.ACCOUNT}:role/dev-training-state-machine"
_names = itertools.count()


@dataclass
class Run:
    """One finished execution: its description, the fake's records and the notifications it sent."""

    name: str
    status: str
    output: dict[str, Any] | None
    error: str | None
    cause: str | None
    fake: FakeSageMaker
    notifications: list[dict[str, Any]]
    history: list[dict[str, Any]]


def deploy_values(spec: sm.MachineSpec, topic_arn: str) -> dict[str, str]:
    """Realistic values for every deploy-time placeholder, as DefinitionSubstitutions would give."""
    values = {k: v for k, v in samples.sample_values(spec.request).items() if k not in ph.RUN_TIME}
    values[sm.NOTIFICATION_TOPIC_ARN] = topic_arn
    return values


def type_requests(workload: Workload, env: Environment) -> dict[str, dict[str, Any]]:
    """The request compiled on each type the workload may run on, independently of `spec_for`'s variants."""
    if workload.compute.instance_groups:
        return {}
    types = (workload.instance_type, *workload.capacity_retry.fallback_instance_types)
    return {t: compile_request(with_instance_type(workload, t), env) for t in types}


class Deployed:
    """A workload's state machine created in moto (call inside an active mock_aws), with a topic to watch."""

    def __init__(self, spec: sm.MachineSpec, requests: dict[str, dict[str, Any]] | None = None,
                 definition: dict[str, Any] | None = None):
        self.spec = spec
        self.requests = requests if requests is not None else {spec.instance_type: spec.request}
        sns = boto3.client("sns", region_name=REGION)
        self.sqs = boto3.client("sqs", region_name=REGION)
        self.sfn = boto3.client("stepfunctions", region_name=REGION)
        self.topic_arn = sns.create_topic(Name=f"training-{spec.environment}-{spec.workload}")["TopicArn"]
        self.queue_url = self.sqs.create_queue(QueueName=f"notes-{spec.workload}")["QueueUrl"]
        queue_arn = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])
        sns.subscribe(TopicArn=self.topic_arn, Protocol="sqs", Endpoint=queue_arn["Attributes"]["QueueArn"],
                      Attributes={"RawMessageDelivery": "true"})
        self.values = deploy_values(spec, self.topic_arn)
        self.text = sm.substitute_definition(sm.definition_string(definition or sm.build_definition(spec)),
                                             self.values)
        assert sm.deploy_time_names(self.text) == set(), "a placeholder has no substitution"
        self.arn = self.sfn.create_state_machine(
            name=sm.state_machine_name(spec.environment, spec.workload), definition=self.text, roleArn=ROLE_ARN,
        )["stateMachineArn"]

    def instance_type(self, attempt: int) -> str:
        """The type attempt n runs on, by the schedule (`MachineSpec.schedule`)."""
        if not self.spec.variants:
            return self.spec.instance_type
        return self.spec.variants[self.spec.schedule()[attempt]].instance_type

    def request_for(self, attempt: int) -> dict[str, Any]:
        return self.requests[self.instance_type(attempt)] if self.spec.variants else self.spec.request

    def run(self, execution_input: Any, script: list[Outcome] | None = None, name: str | None = None,
            throttle: int = 0, describe_throttle: int = 0, **fake_settings: Any) -> Run:
        """Start one execution (always named) and wait for its end; a str input is sent as it is.

        `throttle`: how many of the first CreateTrainingJob calls SageMaker answers with throttling;
        `describe_throttle`: the same for the definition's DescribeTrainingJob calls; `fake_settings`: other
        FakeSageMaker fields (stopping_looks, pending_stop, ingest_seconds, unfinished_searches).
        """
        fake = FakeSageMaker(script=list(script or []), region=REGION, throttle=throttle,
                             describe_throttle=describe_throttle, **fake_settings)
        name = name or f"run-{next(_names)}"
        payload = execution_input if isinstance(execution_input, str) else json.dumps(execution_input)
        with installed(fake):
            # Wait on the thread moto runs the execution in: polling DescribeExecution steals the interpreter from it.
            started = len(TMP_THREADS)
            arn = self.sfn.start_execution(stateMachineArn=self.arn, name=name, input=payload)["executionArn"]
            deadline = time.monotonic() + 60
            for thread in TMP_THREADS[started:started + 1]:
                thread.join(timeout=60)
            while (described := self.sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
                assert time.monotonic() < deadline, "execution did not finish in 60 s"
                time.sleep(0.02)
        history = [event for page in self.sfn.get_paginator("get_execution_history").paginate(executionArn=arn)
                   for event in page["events"]]
        messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
        for m in messages:
            self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
        # The wait before the check for other runs (compiler.state_machine.concurrency) comes first: kept apart, so
        # `waits` holds the retry and relaunch waits the tests are about.
        entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
        if concurrency.ENTRY in entered:
            fake.settle_waits = [fake.waits.pop(0)]  # type: ignore[attr-defined]
        output = json.loads(described["output"]) if described.get("output") else None
        return Run(
            name=name, status=described["status"], output=output, error=described.get("error"),
            cause=described.get("cause"), fake=fake, notifications=[json.loads(m["Body"]) for m in messages],
            history=history,
        )


# --------------------------------------------------------------------------------------------- expected requests


def job_parts(spec: sm.MachineSpec, job_name: str) -> tuple[str, int]:
    """RunId and Attempt of a job name, which must be `<base_job_name>-<12 hex>-<attempt>` and <= 63 chars."""
    match = re.fullmatch(re.escape(spec.base_job_name) + r"-([0-9a-f]{12})-(\d+)", job_name)
    assert match, f"job name {job_name!r} is not <base>-<run id>-<attempt>"
    assert len(job_name) <= 63
    return match.group(1), int(match.group(2))


def sent_text(value: Any, generic: bool) -> str:
    """An overriding value as the estimator sends it: str() for the generic Estimator, JSON for frameworks.

    Lists and objects are the one exception: the state machine can only write them as compact JSON
    (`States.JsonToString`), where the SDK's json.dumps puts a space after ',' and ':'.
    """
    if generic:
        return str(value)
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"))
    return json.dumps(value)


def expected_request(d: Deployed, job_name: str, execution_tag: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The attempt's compiled request, filled in as Step Functions and the run would, plus the overrides."""
    run_id, attempt = job_parts(d.spec, job_name)
    values = d.values | {ph.RUN_ID: run_id, ph.ATTEMPT: str(attempt)}
    request = ph.substitute(copy.deepcopy(d.request_for(attempt)), values)
    request["Tags"].append({"Key": TAG_EXECUTION, "Value": execution_tag})
    for key, value in overrides.get("hyperparameters", {}).items():
        request["HyperParameters"][key] = sent_text(value, d.spec.policy.str_encoded)
    if "instance_count" in overrides:
        request["ResourceConfig"]["InstanceCount"] = overrides["instance_count"]
    if "max_run" in overrides:
        request["StoppingCondition"]["MaxRuntimeInSeconds"] = overrides["max_run"]
    if d.spec.waiting.pending_limit is not None:  # the run's own control, beside what the SDK sends
        request["StoppingCondition"]["MaxPendingTimeInSeconds"] = d.spec.waiting.pending_limit
    return request


def check_requests(d: Deployed, run: Run, overrides: dict[str, Any], execution_tag: str | None = None) -> None:
    """Every CreateTrainingJob that reached SageMaker is valid and is exactly the expected request."""
    tag = execution_tag or f"{d.arn.replace(':stateMachine:', ':execution:')}:{run.name}"
    assert run.fake.calls, "no CreateTrainingJob reached SageMaker"
    for request in run.fake.calls:
        assert validate_request(request) == []
        assert request == expected_request(d, request["TrainingJobName"], tag, overrides)
