"""What every training job of an environment needs, whatever its workload: the parts of its role AWS cannot scope
to one workload, and the log group SageMaker writes to.

Why each statement exists (SageMaker developer guide, "CreateTrainingJob API: execution role permissions" and "Give
SageMaker training jobs access to resources in your VPC"): log in to ECR, create and clean up the job's network
interfaces in the training subnet, describe the network, list log streams, write metrics. Statements with a
wildcard AWS requires each sit in a managed policy of their own, so each cdk-nag acknowledgment covers exactly that
statement. Writing log streams is not here: each workload's role may write only its own jobs' streams
(`platform_constructs/workload.py`), which the stall watchdog reads as the job's own word on its progress.

The log group `/aws/sagemaker/TrainingJobs` (one per account and region, named by SageMaker) is SageMaker's, not the
stack's: SageMaker creates it on an account's first training job, so CloudFormation must never own it (a stack that
did would fail in any account that has trained before, and delete every team's logs when it went). `ServiceLogGroup`
creates it when missing and applies the environment's key and retention, and leaves it in place on delete; the roles
may write their jobs' streams but not create groups.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from compiler.inputs.environments import TRAINING_LOG_GROUP
from platform_constructs.nag import acknowledge_required_wildcards
from platform_constructs.retention import days_of
from platform_constructs.service_log_group import ServiceLogGroup

METRIC_NAMESPACES = "/aws/sagemaker/*"

REASONS = {
    "EcrLogin": "ecr:GetAuthorizationToken has no resource-level permissions: AWS requires Resource '*'; pulling "
                "an image also needs the repository's own permissions, which each workload's role holds for its image "
                "only.",
    "DescribeJobNetwork": "EC2 Describe* calls support no resource-level permissions: AWS requires Resource '*'; "
                          "they read network descriptions only.",
    "PutTrainingMetrics": "cloudwatch:PutMetricData has no resource-level permissions: AWS requires Resource '*'; the "
                          "cloudwatch:namespace condition limits it to SageMaker's /aws/sagemaker/ namespaces.",
    "CreateJobInterfaces": "SageMaker creates the job's network interfaces, whose IDs do not exist before the job; "
                           "creating one also needs permission on its subnet and security group: this statement grants "
                           "the training subnet only, each workload's execution role its own job security group.",
    "ManageJobInterfaces": "Network interface IDs are created per job; the ec2:Vpc condition limits these actions to "
                           "interfaces in the training VPC.",
    "ListTrainingLogs": "logs:DescribeLogStreams authorizes against the log group only (Service Authorization "
                        "Reference, CloudWatch Logs): the /aws/sagemaker/TrainingJobs group in both of the forms IAM "
                        "names a group by, nothing wider; writing is each workload's own (its jobs' streams).",
}


def training_log_group_arns(stack: cdk.Stack) -> list[str]:
    """/aws/sagemaker/TrainingJobs as IAM names a log group: `log-group:NAME` and, for most actions, `log-group:NAME:*`
    (CloudWatch Logs user guide, "Overview of managing access permissions")."""
    return [stack.format_arn(service="logs", resource="log-group", resource_name=name,
                             arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME)
            for name in (TRAINING_LOG_GROUP, f"{TRAINING_LOG_GROUP}:*")]


class TrainingJobsAccess(Construct):
    """The shared managed policies of every execution role in the environment, and the training log group.

    Exposes `policies` (every workload's execution role takes them), `log_group` (by name: the stack does
    not own it) and `log_group_settings` (depend on it for anything that needs the group to exist). `removal_policy`
    applies to the settings function's own log group; SageMaker's group is never deleted.
    """

    def __init__(self, scope: Construct, construct_id: str, *, vpc: ec2.IVpc, subnets: Sequence[ec2.ISubnet],
                 security_groups: Sequence[ec2.ISecurityGroup], key: kms.IKey, retention: logs.RetentionDays,
                 removal_policy: cdk.RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.log_group_settings = ServiceLogGroup(self, "TrainingLogs", log_group_name=TRAINING_LOG_GROUP,
                                                  retention_days=days_of(retention), encryption_key=key,
                                                  handler_log_retention=retention, removal_policy=removal_policy)
        self.log_group: logs.ILogGroup = self.log_group_settings.log_group
        interface = stack.format_arn(service="ec2", resource="network-interface", resource_name="*")
        statements = {
            "EcrLogin": iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
            "DescribeJobNetwork": iam.PolicyStatement(
                sid="DescribeJobNetwork", resources=["*"],
                actions=["ec2:DescribeNetworkInterfaces", "ec2:DescribeVpcs", "ec2:DescribeDhcpOptions",
                         "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups"]),
            "PutTrainingMetrics": iam.PolicyStatement(
                sid="PutTrainingMetrics", actions=["cloudwatch:PutMetricData"], resources=["*"],
                conditions={"StringLike": {"cloudwatch:namespace": METRIC_NAMESPACES}}),
            "CreateJobInterfaces": iam.PolicyStatement(
                sid="CreateJobInterfaces", actions=["ec2:CreateNetworkInterface"],
                resources=[interface,
                           *(stack.format_arn(service="ec2", resource="subnet", resource_name=s.subnet_id) for s in subnets),
                           *(stack.format_arn(service="ec2", resource="security-group", resource_name=g.security_group_id)
                             for g in security_groups)]),
            "ManageJobInterfaces": iam.PolicyStatement(
                sid="ManageJobInterfaces", resources=[interface],
                actions=["ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface",
                         "ec2:DeleteNetworkInterfacePermission"],
                conditions={"ArnEquals": {"ec2:Vpc": stack.format_arn(service="ec2", resource="vpc",
                                                                      resource_name=vpc.vpc_id)}}),
            "ListTrainingLogs": iam.PolicyStatement(
                sid="ListTrainingLogs", actions=["logs:DescribeLogStreams"], resources=training_log_group_arns(stack)),
        }
        self.policies: list[iam.ManagedPolicy] = []
        for sid, statement in statements.items():
            policy = iam.ManagedPolicy(self, sid, statements=[statement],
                                       description=f"Training jobs ({sid}): shared by every workload's execution role")
            acknowledge_required_wildcards(policy, {sid: REASONS[sid]})
            self.policies.append(policy)
