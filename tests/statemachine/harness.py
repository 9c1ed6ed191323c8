"""Run a workload's definition in moto's Step Functions interpreter with the fake SageMaker behind it.

Creating a state machine parses its definition (ANTLR, about a second for ~20 KB), so a `Deployed`
machine is created once per workload and runs many executions.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass
from typing import Any

import boto3

from tests.statemachine.sagemaker_sync import FakeSageMaker, Outcome, installed
from compiler import placeholders as ph
from compiler import samples
from compiler import state_machine as sm

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


class Deployed:
    """A workload's state machine created in moto (call inside an active mock_aws), with a topic to watch."""

    def __init__(self, spec: sm.MachineSpec, definition: dict[str, Any] | None = None):
        self.spec = spec
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

    def run(self, execution_input: Any, script: list[Outcome] | None = None, name: str | None = None) -> Run:
        """Start one execution (always named) and wait for its end."""
        fake = FakeSageMaker(script=list(script or []), region=REGION)
        name = name or f"run-{next(_names)}"
        payload = execution_input if isinstance(execution_input, str) else json.dumps(execution_input)
        with installed(fake):
            arn = self.sfn.start_execution(stateMachineArn=self.arn, name=name, input=payload)["executionArn"]
            deadline = time.monotonic() + 60
            while (described := self.sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
                assert time.monotonic() < deadline, "execution did not finish in 60 s"
                time.sleep(0.02)
        history = self.sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
        messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
        for m in messages:
            self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
        output = json.loads(described["output"]) if described.get("output") else None
        return Run(
            name=name, status=described["status"], output=output, error=described.get("error"),
            cause=described.get("cause"), fake=fake, notifications=[json.loads(m["Body"]) for m in messages],
            history=history,
        )
