"""A workload's `schedule:`: an EventBridge Scheduler schedule that starts its state machine, with a role of its own.

The role may only `states:StartExecution` the one state machine, and only EventBridge Scheduler acting for this
account may assume it. No flexible time window: runs start at the minute the expression names. Overlap is the state
machine's business: without `concurrent_runs` a start while a run is in progress ends at once with AlreadyRunning
(compiler/state_machine/concurrency.py), so a scheduled start is skipped, not queued.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_scheduler as scheduler
from constructs import Construct

from compiler.inputs.model import Workload

METADATA_KEY = "training-platform:schedule"
# A start that has not got through within an hour is dropped (a nightly run should not begin mid-morning); until then
# EventBridge Scheduler retries with backoff, as often as its model allows.
MAX_EVENT_AGE_SECONDS = 3600
MAX_RETRY_ATTEMPTS = 185


class WorkloadSchedule(Construct):
    """Starts `state_machine_arn` on the workload's schedule, with the schedule's input; `facts` (the plan's) are
    recorded as the schedule's metadata for `trainctl review`."""

    def __init__(self, scope: Construct, construct_id: str, *, workload: Workload, environment: str,
                 facts: Mapping[str, Any], state_machine_arn: str) -> None:
        super().__init__(scope, construct_id)
        schedule = workload.schedule
        assert schedule is not None
        stack = cdk.Stack.of(self)
        self.role = iam.Role(
            self, "Role", description=f"EventBridge Scheduler starts runs of {workload.name} ({environment}) only",
            assumed_by=iam.ServicePrincipal("scheduler.amazonaws.com",
                                            conditions={"StringEquals": {"aws:SourceAccount": stack.account}}))
        policy = iam.Policy(self, "Policy", roles=[self.role], statements=[iam.PolicyStatement(
            sid="StartOwnStateMachine", actions=["states:StartExecution"], resources=[state_machine_arn])])
        self.schedule = scheduler.CfnSchedule(
            self, "Schedule", name=f"{environment}-{workload.name}",
            description=f"Starts {workload.name} in {environment} ({schedule.expression}, {schedule.timezone})",
            schedule_expression=schedule.expression, schedule_expression_timezone=schedule.timezone,
            flexible_time_window=scheduler.CfnSchedule.FlexibleTimeWindowProperty(mode="OFF"), state="ENABLED",
            target=scheduler.CfnSchedule.TargetProperty(
                arn=state_machine_arn, role_arn=self.role.role_arn, input=json.dumps(dict(schedule.input)),
                retry_policy=scheduler.CfnSchedule.RetryPolicyProperty(
                    maximum_event_age_in_seconds=MAX_EVENT_AGE_SECONDS, maximum_retry_attempts=MAX_RETRY_ATTEMPTS)),
        )
        self.schedule.node.add_dependency(policy)  # the first start must find its permission
        self.schedule.cfn_options.metadata = {METADATA_KEY: dict(facts)}
