"""The environment's job reaper: no training job outlives the workload run that started it (issue 21).

A run's definition cannot act when its execution is stopped (console Stop, `trainctl stop`), times out or fails
outside its catches, and with the run loop on an AWS SDK create and a describe loop Step Functions no longer stops
the job on those exits. Per environment:

- an EventBridge rule on the "Step Functions Execution Status Change" events (source `aws.states`) whose status is
  one of `statuses` (ABORTED, TIMED_OUT, FAILED) and whose `stateMachineArn` starts with the environment's workload
  state machines' prefix `<account/region>:stateMachine:<env>-` (one environment per account and Region,
  `compiler.inputs.environments`);
- its target, the reaper state machine (`compiler.state_machine.reaper`: Search by the execution tag, StopTrainingJob
  each InProgress job), started with the execution's ARN, its state machine's ARN and its status only (an input
  transformer: the event also carries the run's input and output, up to 248 KB); EventBridge retries a start that
  fails for `max_event_age` (up to `retry_attempts` times), then puts the event in a dead-letter queue;
- why a state machine and not a Lambda function: each step is one AWS API call with retries and error handling that
  Step Functions does itself, the definition is pure data executed in the tests by moto's interpreter like the
  workloads', every call and error name is held to botocore's models (`compiler.state_machine.integrations`), there
  is no code package, runtime or function log group to patch and keep, and its history shows what it stopped;
- its role: StopTrainingJob and DescribeTrainingJob only on training jobs tagged with the environment
  (`aws:ResourceTag/training-platform:environment`; job names are per run and span every workload, and the
  environment's workload list is too long for one policy at scale), `sagemaker:Search` on `*` (it has no resource
  type), DescribeExecution and ListExecutions only on the environment's workload state machines; only Step Functions
  acting for the reaper may assume it;
- logs (ALL, with execution data) to the environment's run log group and X-Ray tracing, like the workloads';
- alarms to `alarm_topic`: a reaper execution that failed or timed out (a job it found is still running, or a call
  kept failing), and an event in the dead-letter queue (a run whose end the reaper never saw).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from compiler.compilation.request import TAG_ENVIRONMENT
from compiler.state_machine import reaper
from compiler.state_machine.machine import state_machine_name
from platform_constructs.nag import acknowledge, acknowledge_required_wildcards
from platform_constructs.state_machines import logged_state_machine, state_machine_arn
from platform_constructs.trust import state_machine_principal

# "EventBridge (CloudWatch Events) for Step Functions execution status changes" and the EventBridge events reference
# for Step Functions: the event's source and detail-type, and the statuses its detail.status takes.
EVENT_SOURCE = "aws.states"
EVENT_DETAIL_TYPE = "Step Functions Execution Status Change"
END_STATUSES = frozenset({"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"})
# EventBridge's RetryPolicy limits (EventBridge API reference, RetryPolicy): 0-185 attempts, 60-86400 seconds.
MAX_RETRY_ATTEMPTS = 185
MAX_EVENT_AGE = cdk.Duration.hours(24)
DEAD_LETTER_RETENTION = cdk.Duration.days(14)
REASONS = {
    "EnvironmentJobs": "Training job names are made per run (<base job name>-<run id>-<attempt>) for every workload "
                       "of the environment, and the environment's workload list outgrows one policy at scale; the "
                       "aws:ResourceTag condition limits the statement to jobs tagged with this environment.",
    "FindJobs": "sagemaker:Search has no resource type in the Service Authorization Reference: AWS requires Resource "
                "'*'. It only reads; the definition's tag filters name the run's jobs, and the stop is limited to "
                "this environment's jobs by EnvironmentJobs.",
    "RunsOfTheEnvironment": "The executions of the environment's workload state machines (<env>-<workload>), named "
                            "per run; read-only (DescribeExecution, whether a run was redriven).",
    "WorkloadMachines": "The environment's workload state machines (<env>-<workload>), one per workload; "
                        "read-only (ListExecutions, whether a run of the workload is in progress).",
}


def reaper_name(environment: str) -> str:
    """The reaper's state machine name; it must not start like the workloads' (`<env>-`), or its own failures
    would start it."""
    return f"training-job-reaper-{environment}"


class JobReaper(Construct):
    """Stops the training jobs of an environment's workload runs that ended while a job still ran.

    Safe defaults: every way a run ends outside its definition (`reaper.STATUSES`), a one-minute wait before the
    search, a one-hour execution timeout, EventBridge's longest retry (185 attempts over 24 hours) before the
    dead-letter queue. `metric_*` give the reaper's metrics, as CDK constructs offer them.
    """

    def __init__(self, scope: Construct, construct_id: str, *, environment: str, log_group: logs.ILogGroup,
                 managed_policies: Sequence[iam.IManagedPolicy] = (), alarm_topic: sns.ITopic | None = None,
                 key: kms.IKey | None = None,
                 statuses: Sequence[str] = reaper.STATUSES, settle: cdk.Duration | None = None,
                 timeout: cdk.Duration | None = None, retry_attempts: int = MAX_RETRY_ATTEMPTS,
                 max_event_age: cdk.Duration = MAX_EVENT_AGE) -> None:
        super().__init__(scope, construct_id)
        settle = settle or cdk.Duration.seconds(reaper.SETTLE_SECONDS)
        timeout = timeout or cdk.Duration.seconds(reaper.TIMEOUT_SECONDS)
        self._check(statuses, settle, timeout, retry_attempts, max_event_age)
        self.environment = environment
        stack = cdk.Stack.of(self)
        self.state_machine_name = reaper_name(environment)
        self.state_machine_arn = state_machine_arn(self, self.state_machine_name)
        # The environment's workload state machines and their executions: `<env>-<workload>`.
        prefix = state_machine_name(environment, "")
        self.workload_machines = state_machine_arn(self, f"{prefix}*")
        self.workload_executions = stack.format_arn(service="states", resource="execution",
                                                    resource_name=f"{prefix}*:*",
                                                    arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME)
        self.role = self._role(managed_policies)
        definition = reaper.build_reaper_definition(environment, settle_seconds=int(settle.to_seconds()),
                                                    timeout_seconds=int(timeout.to_seconds()))
        self.state_machine = logged_state_machine(
            self, "StateMachine", name=self.state_machine_name, role_arn=self.role.role_arn,
            definition=json.dumps(definition, separators=(",", ":")), log_group_arn=log_group.log_group_arn)
        self.state_machine.node.add_dependency(self.role, self.state_machine_policy)
        self.rule_name = reaper_name(environment)
        rule_arn = stack.format_arn(service="events", resource="rule", resource_name=self.rule_name)
        self.dead_letter_queue = self._dead_letter_queue(key, rule_arn)
        # EventBridge starts the reaper with a role only EventBridge acting for this rule may assume.
        self.events_role = iam.Role(
            self, "EventsRole", description=f"EventBridge starts the job reaper of {environment} only",
            assumed_by=iam.ServicePrincipal("events.amazonaws.com", conditions={
                "StringEquals": {"aws:SourceAccount": stack.account}, "ArnEquals": {"aws:SourceArn": rule_arn}}))
        self.rule = events.Rule(
            self, "RunEnded", rule_name=self.rule_name,
            description=f"Starts the job reaper when a run of a {environment} workload ends {', '.join(statuses)}",
            event_pattern=events.EventPattern(
                source=[EVENT_SOURCE], detail_type=[EVENT_DETAIL_TYPE],
                detail={"status": list(statuses),
                        "stateMachineArn": events.Match.prefix(state_machine_arn(self, prefix))}),
        )
        target = sfn.StateMachine.from_state_machine_arn(self, "Target", self.state_machine_arn)
        self.rule.add_target(targets.SfnStateMachine(
            target, role=self.events_role, dead_letter_queue=self.dead_letter_queue, retry_attempts=retry_attempts,
            max_event_age=max_event_age,
            input=events.RuleTargetInput.from_object({
                reaper.EXECUTION_ARN: events.EventField.from_path("$.detail.executionArn"),
                reaper.STATE_MACHINE_ARN: events.EventField.from_path("$.detail.stateMachineArn"),
                reaper.STATUS: events.EventField.from_path("$.detail.status"),
            })))
        self.rule.node.add_dependency(self.state_machine, self.events_role)
        self.alarms: list[cloudwatch.Alarm] = []
        if alarm_topic is not None:
            self._alarms(alarm_topic)

    @staticmethod
    def _check(statuses: Sequence[str], settle: cdk.Duration, timeout: cdk.Duration, retry_attempts: int,
               max_event_age: cdk.Duration) -> None:
        """Props AWS would refuse, or that would leave a way of ending unwatched, stop synth naming the prop."""
        unknown = sorted(set(statuses) - END_STATUSES)
        if not statuses or unknown:
            raise ValueError(f"JobReaper statuses: {unknown or 'none given'}; give end statuses of Step Functions "
                             f"executions, from {', '.join(sorted(END_STATUSES))}")
        if not 0 <= settle.to_seconds() < timeout.to_seconds():
            raise ValueError("JobReaper settle: must be 0 or more seconds and shorter than timeout")
        if not 0 <= retry_attempts <= MAX_RETRY_ATTEMPTS:
            raise ValueError(f"JobReaper retry_attempts: EventBridge takes 0 to {MAX_RETRY_ATTEMPTS}")
        if not 60 <= max_event_age.to_seconds() <= MAX_EVENT_AGE.to_seconds():
            raise ValueError("JobReaper max_event_age: EventBridge takes 60 seconds to 24 hours")

    def _dead_letter_queue(self, key: kms.IKey | None, rule_arn: str) -> sqs.Queue:
        """Encrypted with `key` (EventBridge may use it for this rule only), else with SQS-managed keys."""
        if key is None:
            queue = sqs.Queue(self, "DeadLetters", encryption=sqs.QueueEncryption.SQS_MANAGED, enforce_ssl=True,
                              retention_period=DEAD_LETTER_RETENTION)
        else:
            queue = sqs.Queue(self, "DeadLetters", encryption=sqs.QueueEncryption.KMS, encryption_master_key=key,
                              enforce_ssl=True, retention_period=DEAD_LETTER_RETENTION)
            stack = cdk.Stack.of(self)
            key.add_to_resource_policy(iam.PolicyStatement(
                sid="JobReaperDeadLetters", principals=[iam.ServicePrincipal("events.amazonaws.com")],
                actions=["kms:GenerateDataKey", "kms:Decrypt"], resources=["*"],
                conditions={"StringEquals": {"aws:SourceAccount": stack.account},
                            "ArnEquals": {"aws:SourceArn": rule_arn}}))
        acknowledge(queue, "SQS3", "This queue is itself the dead-letter queue of the job reaper's EventBridge "
                    "target; an event that lands here is alarmed on (UndeliveredAlarm), not redriven.")
        return queue

    def _role(self, managed_policies: Sequence[iam.IManagedPolicy]) -> iam.Role:
        stack = cdk.Stack.of(self)
        role = iam.Role(
            self, "Role", description=f"The job reaper of {self.environment}: stops the environment's training jobs",
            assumed_by=state_machine_principal(stack, self.state_machine_arn),
            managed_policies=list(managed_policies),
        )
        jobs = stack.format_arn(service="sagemaker", resource="training-job", resource_name="*")
        policy = iam.Policy(self, "Policy", roles=[role], statements=[
            iam.PolicyStatement(sid="EnvironmentJobs", actions=["sagemaker:StopTrainingJob",
                                                                "sagemaker:DescribeTrainingJob"],
                                resources=[jobs],
                                conditions={"StringEquals": {f"aws:ResourceTag/{TAG_ENVIRONMENT}": self.environment}}),
            iam.PolicyStatement(sid="FindJobs", actions=["sagemaker:Search"], resources=["*"]),
            iam.PolicyStatement(sid="RunsOfTheEnvironment", actions=["states:DescribeExecution"],
                                resources=[self.workload_executions]),
            iam.PolicyStatement(sid="WorkloadMachines", actions=["states:ListExecutions"],
                                resources=[self.workload_machines]),
        ])
        acknowledge_required_wildcards(policy, REASONS)
        self.state_machine_policy = policy
        return role

    def _alarms(self, topic: sns.ITopic) -> None:
        action = cloudwatch_actions.SnsAction(topic)
        failed = cloudwatch.MathExpression(
            expression="FILL(failed, 0) + FILL(timed_out, 0)", period=cdk.Duration.minutes(5), label="reaper failures",
            using_metrics={"failed": self.metric_failed(), "timed_out": self.metric_timed_out()})
        self.failed_alarm = failed.create_alarm(
            self, "FailedAlarm", threshold=1, evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"The job reaper of {self.environment} failed or timed out: a training job of an ended "
                              f"run may still be running. See the failed execution of {self.state_machine_name} "
                              f"(its error names the run) and stop the job with StopTrainingJob.")
        undelivered = self.dead_letter_queue.metric_approximate_number_of_messages_visible(
            period=cdk.Duration.minutes(5), statistic="Maximum")
        self.undelivered_alarm = undelivered.create_alarm(
            self, "UndeliveredAlarm", threshold=1, evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"EventBridge could not start the job reaper of {self.environment} for a run that "
                              f"ended: the event (the run's execution ARN) is in the dead-letter queue; start "
                              f"{self.state_machine_name} with it by hand.")
        for alarm in (self.failed_alarm, self.undelivered_alarm):
            alarm.add_alarm_action(action)
            self.alarms.append(alarm)

    # ------------------------------------------------------------------------------------------------- metrics

    def metric(self, metric_name: str, **props: object) -> cloudwatch.Metric:
        """A Step Functions metric of the reaper (AWS/States, by StateMachineArn)."""
        return cloudwatch.Metric(namespace="AWS/States", metric_name=metric_name,
                                 dimensions_map={"StateMachineArn": self.state_machine_arn}, statistic="Sum", **props)

    def metric_started(self, **props: object) -> cloudwatch.Metric:
        return self.metric("ExecutionsStarted", **props)

    def metric_failed(self, **props: object) -> cloudwatch.Metric:
        return self.metric("ExecutionsFailed", **props)

    def metric_timed_out(self, **props: object) -> cloudwatch.Metric:
        return self.metric("ExecutionsTimedOut", **props)
