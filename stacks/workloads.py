"""Workload stacks: one Step Functions state machine per workload, spread over stable shards.

Layout per environment (stage `dev`, `prod`, ...):

- `Runs` (one small stack): the KMS key, the SNS topic that receives a message for every run (with the
  environment's e-mail subscribers), the encrypted log group all state machines log to, and the managed
  policy with the permissions every state machine role shares (pass the execution role to SageMaker,
  the `.sync` EventBridge rule, publish, logs delivery, X-Ray).
- `Workloads00` .. `Workloads<shards-1>` (stateless): a workload goes to shard sha256(name) % shards, so adding
  or removing a workload never moves another one (a move would collide on the state machine's fixed name).
  Only shards that hold a workload become stacks. Per workload: one role (its own job-name prefix only) and
  one `CfnStateMachine` with the pure-Python definition (training/core/state_machine.py) and
  DefinitionSubstitutions for every deploy-time value. Source tarballs are deduplicated per stack.

Why L1 constructs for the per-workload resources: FACTS.md section 5 measured the L2 state machine at ~25 ms
more per workload, and the definition is built (and tested) without the CDK anyway.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3_assets as s3_assets
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct, IValidation

from platform_constructs.nag import acknowledge
from compiler import state_machine as sm
from compiler.errors import Problem, SpecError
from compiler.sourcedir import build_sourcedir
from compiler.spec import RUN_ID_LENGTH, Workload

DEFAULT_SHARDS = 64
# CloudFormation: 500 resources and 1 MB per template (uploaded through S3). Stay well below both.
MAX_STACK_RESOURCES = 400
MAX_TEMPLATE_BYTES = 800_000
PER_WORKLOAD_OVERHEAD_BYTES = 4_000
SYNC_RULE = "StepFunctionsGetEventsForSageMakerTrainingJobsRule"


def shard_of(workload: str, shards: int) -> int:
    """Stable shard of a workload name: depends on nothing but the name and the shard count."""
    return int.from_bytes(hashlib.sha256(workload.encode()).digest()[:8], "big") % shards


def source_file_name(asset: s3_assets.Asset) -> str:
    """The tarball object's name, which a network-isolated job finds under /opt/ml/input/data/code/.

    The default stack synthesizer names file assets `<hash>.<ext>` at a literal key; a synthesizer that makes
    the key a deploy-time token would break that path, so it stops synth instead.
    """
    key = asset.s3_object_key
    if cdk.Token.is_unresolved(key):
        raise SpecError(Problem("stacks/workloads.py", "SourceDirFileName",
                                "the source tarball's S3 key is only known at deploy time; use the default stack "
                                "synthesizer (literal asset keys)"))
    return key.rsplit("/", 1)[-1]


def job_resource_patterns(base_job_name: str, relaunches: int) -> list[str]:
    """training-job ARN suffixes that match exactly this workload's job names, `<base>-<12 hex>-<attempt>`.

    `?` matches one character, so a longer base name (another workload) never matches. SageMaker writes
    job ARNs in lowercase, hence the lowercase base.
    """
    base = base_job_name.lower()
    run_id = "?" * RUN_ID_LENGTH
    return [f"training-job/{base}-{run_id}-{'?' * digits}" for digits in range(1, len(str(relaunches)) + 1)]


class RunsStack(cdk.Stack):
    """Per environment: notifications topic, run logs, and the policy all training state machines share."""

    def __init__(self, scope: Construct, construct_id: str, *, platform: Any, **kwargs: Any) -> None:
        env = platform.env
        super().__init__(scope, construct_id, description=f"Training runs: notifications and logs ({env.name})",
                         **kwargs)
        removal = cdk.RemovalPolicy.RETAIN if env.removal_policy == "retain" else cdk.RemovalPolicy.DESTROY
        self.key = kms.Key(self, "RunsKey", description=f"Training run notifications and logs ({env.name})",
                           enable_key_rotation=True, removal_policy=removal)
        logs_principal = iam.ServicePrincipal(f"logs.{self.region}.amazonaws.com")
        self.key.add_to_resource_policy(iam.PolicyStatement(
            actions=["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
            principals=[logs_principal], resources=["*"],
            conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn":
                                    f"arn:{self.partition}:logs:{self.region}:{self.account}:log-group:*"}},
        ))
        self.topic = sns.Topic(self, "RunNotifications", topic_name=f"{env.name}-training-runs",
                               display_name=f"Training runs ({env.name})", master_key=self.key, enforce_ssl=True)
        for address in env.notification_emails:
            self.topic.add_subscription(subscriptions.EmailSubscription(address))
        # /aws/vendedlogs/ keeps CloudWatch from growing one resource policy per state machine (a 5 KB limit).
        self.log_group = logs.LogGroup(
            self, "RunLogs", log_group_name=f"/aws/vendedlogs/states/{env.name}-training",
            encryption_key=self.key, retention=logs.RetentionDays.THREE_MONTHS if env.production
            else logs.RetentionDays.ONE_MONTH, removal_policy=removal,
        )
        self.shared_policy = iam.ManagedPolicy(
            self, "StateMachineShared",
            description="What every training state machine may do besides its own training jobs",
            statements=self._shared_statements(platform),
        )
        policy = self.shared_policy.node.default_child
        acknowledge(policy, "IAM5", "CloudWatch Logs delivery and X-Ray trace APIs accept no resource ARN "
                    "(Step Functions logging and tracing docs)", finding="Resource::*")
        acknowledge(policy, "IAM5", "GenerateDataKey* covers the two data-key calls SNS makes to encrypt a message, "
                    "on this topic key only", finding="Action::kms:GenerateDataKey*")

    def _shared_statements(self, platform: Any) -> list[iam.PolicyStatement]:
        rule = f"arn:{self.partition}:events:{self.region}:{self.account}:rule/{SYNC_RULE}"
        return [
            iam.PolicyStatement(
                actions=["iam:PassRole"], resources=[platform.execution_role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
            ),
            iam.PolicyStatement(actions=["events:PutTargets", "events:PutRule", "events:DescribeRule"],
                                resources=[rule]),
            iam.PolicyStatement(actions=["sns:Publish"], resources=[self.topic.topic_arn]),
            iam.PolicyStatement(actions=["kms:GenerateDataKey*", "kms:Decrypt"], resources=[self.key.key_arn]),
            iam.PolicyStatement(
                actions=["logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery",
                         "logs:DeleteLogDelivery", "logs:ListLogDeliveries", "logs:PutResourcePolicy",
                         "logs:DescribeResourcePolicies", "logs:DescribeLogGroups"],
                resources=["*"],
            ),
            iam.PolicyStatement(
                actions=["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
                         "xray:GetSamplingTargets"],
                resources=["*"],
            ),
        ]


class WorkloadsStack(cdk.Stack):
    """One shard of an environment's workloads: a role and a state machine each."""

    def __init__(self, scope: Construct, construct_id: str, *, platform: Any, runs: RunsStack,
                 workloads: Sequence[Workload], specs: dict[str, sm.MachineSpec],
                 sourcedir: Callable[[Path], Path] = build_sourcedir, **kwargs: Any) -> None:
        env = platform.env
        super().__init__(scope, construct_id, description=f"Training workloads ({env.name}): {len(workloads)} "
                         "state machines, one shard of add_workload_stacks", **kwargs)
        self.state_machines: dict[str, sfn.CfnStateMachine] = {}
        self.definition_bytes = 0
        base = platform.substitutions()
        base[sm.NOTIFICATION_TOPIC_ARN] = runs.topic.topic_arn
        assets: dict[Path, s3_assets.Asset] = {}
        self.node.add_validation(_SizeGuard(self))
        for workload in sorted(workloads, key=lambda w: w.name):
            spec = specs[workload.name]
            tarball = Path(sourcedir(workload.source_dir))
            if tarball not in assets:
                asset = s3_assets.Asset(self, f"Source{len(assets)}", path=str(tarball))
                platform.grant_read_source(asset, asset)
                assets[tarball] = asset
            values = dict(base)
            values["SourceDirS3Uri"] = assets[tarball].s3_object_url
            values["SourceDirFileName"] = source_file_name(assets[tarball])
            self._add(workload, spec, values, runs)

    def _add(self, workload: Workload, spec: sm.MachineSpec, values: dict[str, str], runs: RunsStack) -> None:
        text = sm.definition_string(sm.build_definition(spec))
        needed = sm.deploy_time_names(text)
        missing = sorted(needed - set(values))
        if missing:
            raise SpecError(Problem(spec.source, "inputs/image", "needs " + ", ".join(missing) + f", which environment "
                            f"'{spec.environment}' does not provide (an FSx channel without a file system, or an "
                            "image repository this project does not build?)"))
        # As it will sit in the template: a JSON-escaped string, plus the role, substitutions and layout.
        self.definition_bytes += len(json.dumps(text)) + PER_WORKLOAD_OVERHEAD_BYTES
        scope = Construct(self, workload.name)
        prefix = f"arn:{self.partition}:sagemaker:{self.region}:{self.account}:"
        role = iam.CfnRole(
            scope, "Role",
            assume_role_policy_document={"Version": "2012-10-17", "Statement": [{
                "Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": "states.amazonaws.com"},
                "Condition": {"StringEquals": {"aws:SourceAccount": self.account}},
            }]},
            description=f"Runs training jobs of {workload.name} only",
            managed_policy_arns=[runs.shared_policy.managed_policy_arn],
            policies=[iam.CfnRole.PolicyProperty(policy_name="OwnTrainingJobs", policy_document={
                "Version": "2012-10-17",
                "Statement": [{
                    "Effect": "Allow",
                    "Action": ["sagemaker:CreateTrainingJob", "sagemaker:DescribeTrainingJob",
                               "sagemaker:StopTrainingJob", "sagemaker:AddTags", "sagemaker:ListTags"],
                    "Resource": [prefix + p for p in job_resource_patterns(spec.base_job_name,
                                                                            spec.capacity_relaunches)],
                }],
            })],
        )
        machine = sfn.CfnStateMachine(
            scope, "StateMachine",
            state_machine_name=sm.state_machine_name(spec.environment, workload.name),
            state_machine_type="STANDARD",
            role_arn=role.attr_arn,
            definition_string=text,
            definition_substitutions={k: values[k] for k in sorted(needed)},
            logging_configuration=sfn.CfnStateMachine.LoggingConfigurationProperty(
                level="ALL", include_execution_data=True,
                destinations=[sfn.CfnStateMachine.LogDestinationProperty(
                    cloud_watch_logs_log_group=sfn.CfnStateMachine.CloudWatchLogsLogGroupProperty(
                        log_group_arn=runs.log_group.log_group_arn))],
            ),
            tracing_configuration=sfn.CfnStateMachine.TracingConfigurationProperty(enabled=True),
        )
        self.state_machines[workload.name] = machine


@jsii.implements(IValidation)
class _SizeGuard:
    """Fails synth when a shard nears CloudFormation's template limits, saying what to change."""

    def __init__(self, stack: WorkloadsStack):
        self.stack = stack

    def validate(self) -> list[str]:
        stack = self.stack
        resources = len([c for c in stack.node.find_all() if isinstance(c, cdk.CfnResource)])
        problems = []
        if resources > MAX_STACK_RESOURCES:
            problems.append(f"{stack.stack_name} has {resources} resources (limit {MAX_STACK_RESOURCES} of "
                            "CloudFormation's 500): raise `shards` in add_workload_stacks")
        if stack.definition_bytes > MAX_TEMPLATE_BYTES:
            problems.append(f"{stack.stack_name} would be about {stack.definition_bytes} bytes "
                            f"(limit {MAX_TEMPLATE_BYTES} of CloudFormation's 1 MB): raise `shards` in "
                            "add_workload_stacks")
        return problems


def add_workload_stacks(stage: Construct, platform: Any, workloads: Sequence[Workload], *,
                        shards: int = DEFAULT_SHARDS, sourcedir: Callable[[Path], Path] = build_sourcedir,
                        training_image: str | None = None) -> list[cdk.Stack]:
    """The Runs stack and the workload shards of one environment; returns them, Runs first.

    Every workload is compiled for the environment first, so one synth reports every problem at once.
    `training_image` replaces the SDK's image lookup (benchmarks and tests of many generated workloads).
    """
    env = platform.env
    specs: dict[str, sm.MachineSpec] = {}
    problems: list[Problem] = []
    for workload in workloads:
        try:
            specs[workload.name] = sm.spec_for(workload, env, training_image=training_image)
        except SpecError as error:
            problems.extend(error.problems)
    if problems:
        raise SpecError(problems)
    runs = RunsStack(stage, "Runs", platform=platform, termination_protection=env.production)
    stacks: list[cdk.Stack] = [runs]
    groups: dict[int, list[Workload]] = {}
    for workload in workloads:
        groups.setdefault(shard_of(workload.name, shards), []).append(workload)
    for index in sorted(groups):
        stack = WorkloadsStack(stage, f"Workloads{index:02d}", platform=platform, runs=runs,
                               workloads=groups[index], specs=specs, sourcedir=sourcedir)
        stacks.append(stack)
    return stacks

