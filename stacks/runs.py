"""The runs stack of one environment: what every workload's state machine shares.

The SNS topic that receives a message for every run (with the environment's e-mail subscribers), the log group all
state machines log to, and the managed policies every state machine role shares (publishing, log delivery, X-Ray,
run metrics). The topic and the logs are encrypted with the runs' key. The job reaper
(`platform_constructs/job_reaper.py`) stops the training jobs of runs that ended while a job still ran.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from compiler.facts import run_metrics
from compiler.inputs.environments import Environment
from platform_constructs.budget import EnvironmentBudget
from platform_constructs.job_reaper import JobReaper
from platform_constructs.keys import environment_key
from platform_constructs.nag import acknowledge_required_wildcards
from platform_constructs.retention import retention

REASONS = {
    "LogDelivery": "CloudWatch Logs delivery APIs used by Step Functions logging accept no resource ARN (Step "
                   "Functions developer guide, 'Logging using CloudWatch Logs'): AWS requires Resource '*'.",
    "Tracing": "X-Ray's trace APIs accept no resource ARN: AWS requires Resource '*'.",
    "RunMetrics": "cloudwatch:PutMetricData has no resource-level permissions: AWS requires Resource '*'; the "
                  "cloudwatch:namespace condition limits it to the platform's own namespace.",
}


class RunsStack(cdk.Stack):
    """Per environment: notifications topic, run logs, and the policy all training state machines share."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Environment,
                 removal_policy: cdk.RemovalPolicy, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description=f"Training runs: notifications and logs ({settings.name})",
                         **kwargs)
        # The runs' own key (notifications and run logs), kept apart from the data key of the Storage stack.
        self.key = key = environment_key(self, "RunsKey", removal_policy=removal_policy,
                                         description=f"Training run notifications and logs ({settings.name})")
        self.topic = sns.Topic(self, "RunNotifications", topic_name=f"{settings.name}-training-runs",
                               display_name=f"Training runs ({settings.name})", master_key=key, enforce_ssl=True)
        for address in settings.notification_emails:
            self.topic.add_subscription(subscriptions.EmailSubscription(address))
        # The environment's alarms (failed runs, exhausted capacity) publish here: CloudWatch needs the topic and its
        # key, for this account's alarms only.
        alarms = iam.ServicePrincipal("cloudwatch.amazonaws.com",
                                      conditions={"StringEquals": {"aws:SourceAccount": self.account}})
        self.topic.add_to_resource_policy(iam.PolicyStatement(
            sid="AlarmsOfThisAccount", principals=[alarms], actions=["sns:Publish"], resources=[self.topic.topic_arn]))
        key.add_to_resource_policy(iam.PolicyStatement(
            sid="AlarmNotifications", principals=[alarms], actions=["kms:Decrypt", "kms:GenerateDataKey*"],
            resources=["*"]))
        # The environment's monthly budget (monthly_budget_usd in cdk.json) warns on this topic.
        self.budget = (EnvironmentBudget(self, "MonthlyBudget", environment=settings, topic=self.topic, key=key)
                       if settings.monthly_budget_usd is not None else None)
        # /aws/vendedlogs/ keeps CloudWatch from growing one resource policy per state machine (a 5 KB limit).
        self.log_group = logs.LogGroup(
            self, "RunLogs", log_group_name=f"/aws/vendedlogs/states/{settings.name}-training", encryption_key=key,
            retention=retention(settings.log_retention_days), removal_policy=removal_policy,
        )
        self.shared_policy = iam.ManagedPolicy(
            self, "StateMachineShared", description="What every training state machine may do besides its own jobs",
            statements=[
                iam.PolicyStatement(sid="Notify", actions=["sns:Publish"], resources=[self.topic.topic_arn]),
                iam.PolicyStatement(sid="EncryptNotifications", actions=["kms:GenerateDataKey", "kms:Decrypt"],
                                    resources=[key.key_arn]),
            ],
        )
        self.log_delivery_policy = iam.ManagedPolicy(self, "LogDelivery", statements=[iam.PolicyStatement(
            sid="LogDelivery", resources=["*"],
            actions=["logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery",
                     "logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:DescribeResourcePolicies",
                     "logs:DescribeLogGroups"])], description="Step Functions log delivery (no resource ARNs)")
        self.tracing_policy = iam.ManagedPolicy(self, "Tracing", statements=[iam.PolicyStatement(
            sid="Tracing", resources=["*"],
            actions=["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
                     "xray:GetSamplingTargets"])], description="Step Functions X-Ray tracing (no resource ARNs)")
        # Capacity relaunches and exhausted capacity, which Step Functions does not count (compiler/facts/run_metrics.py).
        self.metrics_policy = iam.ManagedPolicy(self, "RunMetrics", statements=[iam.PolicyStatement(
            sid="RunMetrics", actions=["cloudwatch:PutMetricData"], resources=["*"],
            conditions={"StringEquals": {"cloudwatch:namespace": run_metrics.NAMESPACE}})],
            description="The training state machines' own run metrics")
        acknowledge_required_wildcards(self.metrics_policy, {"RunMetrics": REASONS["RunMetrics"]})
        acknowledge_required_wildcards(self.log_delivery_policy, {"LogDelivery": REASONS["LogDelivery"]})
        acknowledge_required_wildcards(self.tracing_policy, {"Tracing": REASONS["Tracing"]})
        # No job outlives its run: stopped, timed-out and failed runs' jobs are stopped (issue 21).
        self.job_reaper = JobReaper(self, "JobReaper", environment=settings.name, log_group=self.log_group,
                                    managed_policies=[self.log_delivery_policy, self.tracing_policy],
                                    alarm_topic=self.topic, key=key)

    @property
    def state_machine_policies(self) -> list[iam.IManagedPolicy]:
        return [self.shared_policy, self.log_delivery_policy, self.tracing_policy, self.metrics_policy]
