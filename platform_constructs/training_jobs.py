"""What every training job of an environment needs, whatever its workload: the parts of its role AWS cannot scope
to one workload.

Why each statement exists (SageMaker developer guide, "CreateTrainingJob API: execution role permissions" and "Give
SageMaker training jobs access to resources in your VPC"): log in to ECR, create and clean up the job's network
interfaces in the training subnet, describe the network, list log streams, write metrics. Statements with a
wildcard AWS requires each sit in a managed policy of their own, so each cdk-nag acknowledgment covers exactly that
statement. Writing log streams is not here: each workload's role may write only its own jobs' streams
(`platform_constructs/workload.py`), which the stall watchdog reads as the job's own word on its progress.

The log group `/aws/sagemaker/TrainingJobs` (one per account and region, named by SageMaker) is SageMaker's, and
every team's of the account: SageMaker creates it on the account's first training job and writes every job's logs
there, other teams' included. The platform neither owns it nor sets anything on it, no key and no retention
(docs/teardown.md, "SageMaker's log group"): a key of an environment would leave every team's logs unreadable once
that environment's destroy deleted it (CloudWatch Logs API reference, AssociateKmsKey and DisassociateKmsKey), and
a retention of one environment would shorten every team's logs. The roles may list and write their jobs' streams,
never create or configure the group.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from constructs import Construct

from compiler.inputs.environments import TRAINING_LOG_GROUP
from platform_constructs.nag import acknowledge_required_wildcards

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
    """The shared managed policies of every execution role in the environment (`policies`: every workload's
    execution role takes them). Nothing here touches SageMaker's log group but these statements."""

    def __init__(self, scope: Construct, construct_id: str, *, vpc: ec2.IVpc, subnets: Sequence[ec2.ISubnet],
                 security_groups: Sequence[ec2.ISecurityGroup]) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
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
