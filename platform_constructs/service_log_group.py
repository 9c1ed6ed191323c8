"""A log group an AWS service creates for itself (SageMaker's `/aws/sagemaker/TrainingJobs`), kept to our retention
and key without CloudFormation ever owning it.

Why not `logs.LogGroup`: SageMaker creates its group on the first training job in an account and region, so a stack
that creates it fails ("already exists") in any account that has trained before, and a stack that owns it deletes
every team's logs when it goes (see platform_constructs/service_names.py). Instead three `AwsCustomResource` calls
run on create and update: `CreateLogGroup` (ResourceAlreadyExistsException ignored), `PutRetentionPolicy` and, with a
key, `AssociateKmsKey` (which replaces any earlier association, CloudWatch Logs API reference). On delete they do
nothing: the group, its logs and settings stay. The key's policy must let `logs.<region>.amazonaws.com` use it with
`kms:EncryptionContext:aws:logs:arn` naming this group (CloudWatch Logs user guide, "Encrypt log data in CloudWatch
Logs using AWS Key Management Service"); `platform_constructs.keys.allow_cloudwatch_logs` does that.

The calls run in the CDK's singleton function, one per stack, with the role of the first resource that created it:
so the role and the function's own log group are one per stack (`_Caller.of`), and each group adds its own policy
(one statement, the group's two ARN forms) to that role.
"""

from __future__ import annotations

import re

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import custom_resources as cr
from constructs import Construct

from compiler.inputs.environments import LOG_RETENTION_DAYS
from platform_constructs.function_logs import role_and_logs
from platform_constructs.nag import acknowledge_required_wildcards

# CloudWatch Logs API reference, CreateLogGroup: logGroupName is 1-512 characters of this set.
_LOG_GROUP_NAME = re.compile(r"[\.\-_/#A-Za-z0-9]{1,512}")
ACTIONS = ("logs:CreateLogGroup", "logs:PutRetentionPolicy", "logs:AssociateKmsKey")
ALREADY_EXISTS = "ResourceAlreadyExistsException"


class ServiceLogGroup(Construct):
    """Create-if-missing, retention and key for a log group a service owns; never deleted by the stack.

    Exposes `log_group` (an `ILogGroup` by name, for metric filters and grants) and `settings`, the custom resources
    that must come first: anything that needs the group to exist should `node.add_dependency(this)`.
    """

    def __init__(self, scope: Construct, construct_id: str, *, log_group_name: str, retention_days: int = 365,
                 encryption_key: kms.IKey | None = None,
                 handler_log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR,
                 removal_policy: cdk.RemovalPolicy = cdk.RemovalPolicy.RETAIN) -> None:
        super().__init__(scope, construct_id)
        if not _LOG_GROUP_NAME.fullmatch(log_group_name):
            raise ValueError(f"{self.node.path}: {log_group_name!r} is not a CloudWatch Logs log group name "
                             "(1-512 characters of letters, digits and . - _ / #)")
        if retention_days not in LOG_RETENTION_DAYS:
            raise ValueError(f"{self.node.path}: retention_days {retention_days} is not one CloudWatch Logs accepts "
                             f"({', '.join(map(str, LOG_RETENTION_DAYS))}); PutRetentionPolicy has no 'never expire'")
        stack = cdk.Stack.of(self)
        self.log_group_name = log_group_name
        self.log_group_arn = stack.format_arn(service="logs", resource="log-group", resource_name=log_group_name,
                                              arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME)
        self.log_group = logs.LogGroup.from_log_group_name(self, "Group", log_group_name)
        caller = _Caller.of(self, encryption_key=encryption_key, log_retention=handler_log_retention,
                            removal_policy=removal_policy)
        # CloudWatch Logs user guide, "Overview of managing access permissions to your CloudWatch Logs resources": IAM
        # policies name a log group as ...:log-group:NAME or, for most actions, ...:log-group:NAME:* .
        self.policy = iam.Policy(self, "Policy", roles=[caller.role], statements=[iam.PolicyStatement(
            sid="ServiceLogGroupSettings", actions=list(ACTIONS),
            resources=[self.log_group_arn, f"{self.log_group_arn}:*"])])
        acknowledge_required_wildcards(self.policy, {"ServiceLogGroupSettings": (
            f"The trailing ':*' is the ARN form CloudWatch Logs authorizes log-group actions against; it names the one "
            f"group {log_group_name} (and its streams), not other groups.")})

        create = self._call("Create", caller, "createLogGroup", {"logGroupName": log_group_name},
                            ignore=ALREADY_EXISTS)
        self.settings: list[cr.AwsCustomResource] = [create]
        self.settings.append(self._call("Retention", caller, "putRetentionPolicy",
                                        {"logGroupName": log_group_name, "retentionInDays": retention_days}))
        if encryption_key is not None:
            self.settings.append(self._call("Key", caller, "associateKmsKey",
                                            {"logGroupName": log_group_name, "kmsKeyId": encryption_key.key_arn}))
        for setting in self.settings[1:]:
            setting.node.add_dependency(create)

    def _call(self, construct_id: str, caller: _Caller, action: str, parameters: dict[str, object],
              ignore: str | None = None) -> cr.AwsCustomResource:
        """One SDK call on create and update (onCreate defaults to onUpdate); no onDelete: deleting does nothing."""
        call = cr.AwsSdkCall(service="CloudWatchLogs", action=action, parameters=parameters,
                             physical_resource_id=cr.PhysicalResourceId.of(f"{self.log_group_name}:{construct_id}"),
                             ignore_error_codes_matching=ignore)
        resource = cr.AwsCustomResource(self, construct_id, on_update=call, role=caller.role,
                                        log_group=caller.log_group, install_latest_aws_sdk=False,
                                        removal_policy=cdk.RemovalPolicy.DESTROY)
        resource.node.add_dependency(self.policy)
        return resource


class _Caller(Construct):
    """The role and log group of the stack's one AwsCustomResource function (a singleton that runs with the role
    of the first AwsCustomResource of the stack)."""

    ID = "ServiceLogGroupCaller"

    @classmethod
    def of(cls, scope: Construct, *, encryption_key: kms.IKey | None, log_retention: logs.RetentionDays,
           removal_policy: cdk.RemovalPolicy) -> _Caller:
        stack = cdk.Stack.of(scope)
        existing = stack.node.try_find_child(cls.ID)
        if isinstance(existing, _Caller):
            return existing
        return cls(stack, cls.ID, encryption_key=encryption_key, log_retention=log_retention,
                   removal_policy=removal_policy)

    def __init__(self, scope: Construct, construct_id: str, *, encryption_key: kms.IKey | None,
                 log_retention: logs.RetentionDays, removal_policy: cdk.RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self.role, self.log_group, write = role_and_logs(
            self, description="Applies retention and key to log groups AWS services create for themselves",
            key=encryption_key, retention=log_retention, removal_policy=removal_policy)
        iam.Policy(self, "WriteLogs", roles=[self.role], statements=[write])
