"""What already exists that a stack would create: fixed-name resources left by an earlier deploy (CloudFormation
cannot create a named resource that exists), and SageMaker's own log group, which the platform leaves to the account."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from compiler.inputs.environments import TRAINING_LOG_GROUP
from trainctl.preflight.checks import templates
from trainctl.preflight.checks.base import FAIL, PASS, Context, Result

NOT_FOUND = {"ResourceNotFoundException", "ResourceNotFound", "StateMachineDoesNotExist", "NotFound", "404",
             "NoSuchBucket", "RepositoryNotFoundException", "NoSuchEntity", "NotFoundException"}


def _log_group(ctx: Context, name: str) -> str | None:
    groups = ctx.aws.client("logs").describe_log_groups(logGroupNamePrefix=name).get("logGroups", [])
    return name if any(g.get("logGroupName") == name for g in groups) else None


def _state_machine(ctx: Context, name: str) -> str | None:
    arn = f"arn:{ctx.env.partition}:states:{ctx.env.region}:{ctx.env.account}:stateMachine:{name}"
    ctx.aws.client("stepfunctions").describe_state_machine(stateMachineArn=arn)
    return arn


def _topic(ctx: Context, name: str) -> str | None:
    arn = f"arn:{ctx.env.partition}:sns:{ctx.env.region}:{ctx.env.account}:{name}"
    ctx.aws.client("sns").get_topic_attributes(TopicArn=arn)
    return arn


def _dashboard(ctx: Context, name: str) -> str | None:
    ctx.aws.client("cloudwatch").get_dashboard(DashboardName=name)
    return name


def _alarm(ctx: Context, name: str) -> str | None:
    alarms = ctx.aws.client("cloudwatch").describe_alarms(AlarmNames=[name]).get("MetricAlarms", [])
    return name if alarms else None


def _bucket(ctx: Context, name: str) -> str | None:
    ctx.aws.client("s3").head_bucket(Bucket=name)
    return name


def _repository(ctx: Context, name: str) -> str | None:
    ctx.aws.client("ecr").describe_repositories(repositoryNames=[name])
    return name


def _role(ctx: Context, name: str) -> str | None:
    ctx.aws.client("iam").get_role(RoleName=name)
    return name


def _schedule(ctx: Context, name: str) -> str | None:
    """EventBridge Scheduler's GetSchedule in the default group (the platform's schedules name no group)."""
    ctx.aws.client("scheduler").get_schedule(Name=name)
    return name


def _budget(ctx: Context, name: str) -> str | None:
    """AWS Budgets' DescribeBudget: budget names are unique per account (NotFoundException when free)."""
    ctx.aws.client("budgets").describe_budget(AccountId=ctx.env.account, BudgetName=name)
    return name


# How to find each kind by its name: the physical ID CloudFormation knows it by, or None when it does not exist.
FINDERS: dict[str, Callable[[Context, str], str | None]] = {
    "AWS::Logs::LogGroup": _log_group, "AWS::StepFunctions::StateMachine": _state_machine,
    "AWS::SNS::Topic": _topic, "AWS::CloudWatch::Dashboard": _dashboard, "AWS::CloudWatch::Alarm": _alarm,
    "AWS::S3::Bucket": _bucket, "AWS::ECR::Repository": _repository, "AWS::IAM::Role": _role,
    "AWS::Scheduler::Schedule": _schedule, "AWS::Budgets::Budget": _budget,
}
# The command that deletes a leftover of each kind (after saving what it holds).
DELETE = {
    "AWS::Logs::LogGroup": "aws logs delete-log-group --log-group-name {name}",
    "AWS::StepFunctions::StateMachine": "aws stepfunctions delete-state-machine --state-machine-arn {id}",
    "AWS::SNS::Topic": "aws sns delete-topic --topic-arn {id}",
    "AWS::CloudWatch::Dashboard": "aws cloudwatch delete-dashboards --dashboard-names {name}",
    "AWS::CloudWatch::Alarm": "aws cloudwatch delete-alarms --alarm-names {name}",
    "AWS::S3::Bucket": "aws s3 rb s3://{name}",
    "AWS::ECR::Repository": "aws ecr delete-repository --repository-name {name}",
    "AWS::IAM::Role": "aws iam delete-role --role-name {name}",
    "AWS::Scheduler::Schedule": "aws scheduler delete-schedule --name {name}",
    "AWS::Budgets::Budget": "aws budgets delete-budget --account-id {account} --budget-name {name}",
}


def find(ctx: Context, kind: str, name: str) -> str | None:
    """The physical ID of an existing resource of this kind and name, None when there is none."""
    try:
        return FINDERS[kind](ctx, name)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in NOT_FOUND:
            return None
        raise


def owner(ctx: Context, physical_id: str) -> str | None:
    """The stack that manages a resource, None when no stack does (CloudFormation's DescribeStackResources)."""
    try:
        found = ctx.aws.client("cloudformation").describe_stack_resources(PhysicalResourceId=physical_id)
    except ClientError as error:
        if "does not exist" in str(error):
            return None
        raise
    resources: list[dict[str, Any]] = found.get("StackResources", [])
    return resources[0].get("StackName") if resources else None


def _conflict(ctx: Context, named: templates.Named, physical_id: str, stack: str | None) -> str:
    if stack is not None:
        return (f"{named.name} ({named.kind}) belongs to stack {stack}, not {named.stack}: delete or rename it there "
                "before deploying")
    command = DELETE[named.kind].format(name=named.name, id=physical_id, account=ctx.env.account)
    return (f"{named.name} ({named.kind}) exists outside any stack (left by an earlier deploy?): save what you need, "
            f"then `{command}`, or adopt it into {named.stack} with `npx cdk import`")


def existing_resources(ctx: Context) -> list[Result]:
    """Each fixed name of the environment's templates: free, or already managed by the stack that names it."""
    name = "existing-resources"
    try:
        named = templates.fixed_names(ctx.stacks)
    except templates.NoAssembly as error:
        return [Result(name, FAIL, f"{error}, so preflight can read the names the stacks fix")]
    conflicts, managed = [], 0
    for item in named:
        physical_id = find(ctx, item.kind, item.name)
        if physical_id is None:
            continue
        stack = owner(ctx, physical_id)
        if stack == item.stack:
            managed += 1
        else:
            conflicts.append(_conflict(ctx, item, physical_id, stack))
    if conflicts:
        return [Result(name, FAIL, c) for c in conflicts]
    return [Result(name, PASS, f"{len(named)} fixed names, {managed} already managed by their stack, none taken "
                   "otherwise (buckets, repositories, keys and the file system get generated names, so a retained one "
                   "of an earlier deploy does not conflict)")]


def _group_settings(group: dict[str, Any]) -> str:
    retention = group.get("retentionInDays")
    days = f"{retention}-day retention" if retention else "no retention (never expires)"
    key = "a KMS key" if group.get("kmsKeyId") else "no KMS key"
    return f"{days}, {key}"


def _environment_key(ctx: Context, key_arn: str) -> str | None:
    """The stack of this environment that holds the group's key, None when none does (CloudFormation knows a key by
    its id, the ARN's last part)."""
    stack = owner(ctx, key_arn.rsplit("/", 1)[-1])
    if stack is None:
        return None
    return stack if stack in {s.stack_name for s in ctx.stacks} else None


def sagemaker_log_group(ctx: Context) -> list[Result]:
    """SageMaker's own log group, every team's of the account and region: the platform sets nothing on it
    (docs/teardown.md). It fails only while the group still carries a key of this environment's stacks (associated by
    an Access stack from before issue 34), which the environment's destroy would take from every team's logs."""
    name = "sagemaker-log-group"
    groups = ctx.aws.client("logs").describe_log_groups(logGroupNamePrefix=TRAINING_LOG_GROUP).get("logGroups", [])
    group = next((g for g in groups if g.get("logGroupName") == TRAINING_LOG_GROUP), None)
    if group is None:
        return [Result(name, PASS, f"{TRAINING_LOG_GROUP} does not exist yet: SageMaker creates it at the account's "
                       "first training job; the platform sets nothing on it")]
    stack = owner(ctx, TRAINING_LOG_GROUP)
    if stack is not None:
        return [Result(name, PASS, f"{TRAINING_LOG_GROUP} is owned by stack {stack} (deployed before the Access stack "
                       "stopped owning it): with removal_policy destroy the next deploy deletes it, with its logs; "
                       "SageMaker creates it again at the next training job (README \"Deploy\")")]
    key = group.get("kmsKeyId")
    if key:
        try:
            key_stack = _environment_key(ctx, key)
        except templates.NoAssembly as error:
            return [Result(name, FAIL, f"{error}, so preflight knows whether the group's key is {ctx.env.name}'s")]
        if key_stack is not None:
            return [Result(name, FAIL, f"{TRAINING_LOG_GROUP}, every team's training logs of the account, is encrypted "
                           f"with {ctx.env.name}'s key of stack {key_stack} (set before issue 34), which a destroy of "
                           f"{ctx.env.name} would take away: `aws logs disassociate-kms-key --log-group-name "
                           f"{TRAINING_LOG_GROUP}`, and keep the key until the events it encrypted expire "
                           "(docs/teardown.md)")]
    return [Result(name, PASS, f"{TRAINING_LOG_GROUP} exists ({_group_settings(group)}): the account's settings, which "
                   "the platform leaves as they are")]


def _stack_problem(ctx: Context, name: str, status: str) -> str | None:
    """What a stack's state means for the next deploy (None: the deploy can update it)."""
    where = f"--stack-name {name} --region {ctx.env.region}"
    if status == "ROLLBACK_COMPLETE":
        return (f"{name} is ROLLBACK_COMPLETE (its first deploy failed) and can only be deleted: "
                f"`aws cloudformation delete-stack {where}`, then deploy again")
    if status.endswith("_IN_PROGRESS"):
        return f"{name} is {status}: wait until it ends (CloudFormation console, stack events), then deploy"
    if status == "UPDATE_ROLLBACK_FAILED":
        return (f"{name} is UPDATE_ROLLBACK_FAILED: fix what its events name, then "
                f"`aws cloudformation continue-update-rollback {where}`")
    if status.endswith("_FAILED"):
        return f"{name} is {status}: read its events in the CloudFormation console and repair or delete it"
    return None


def environment_stacks(ctx: Context) -> list[Result]:
    """The environment's stacks that already exist are in a state a deploy can update (a failed first deploy
    leaves ROLLBACK_COMPLETE, which only a delete clears)."""
    name = "environment-stacks"
    try:
        wanted = [s.stack_name for s in ctx.stacks]
    except templates.NoAssembly as error:
        return [Result(name, FAIL, f"{error}, so preflight knows the environment's stacks")]
    statuses: dict[str, str] = {}
    for page in ctx.aws.client("cloudformation").get_paginator("describe_stacks").paginate():
        statuses |= {s["StackName"]: s.get("StackStatus", "") for s in page.get("Stacks", [])
                     if s.get("StackName") in wanted}
    problems = [p for stack in wanted if stack in statuses and (p := _stack_problem(ctx, stack, statuses[stack]))]
    if problems:
        return [Result(name, FAIL, p) for p in problems]
    return [Result(name, PASS, f"{len(statuses)} of {len(wanted)} stacks deployed and updatable, "
                   f"{len(wanted) - len(statuses)} new")]
