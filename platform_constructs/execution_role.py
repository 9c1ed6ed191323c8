"""The SageMaker execution role, least privilege: what a training job's platform agent and container use.

Why each statement exists (SageMaker developer guide, "CreateTrainingJob API: execution role permissions" and
"Give SageMaker training jobs access to resources in your VPC"): read training data, write output and
checkpoints, pull the image (ours and the DLC it builds from), create/delete the ENIs of the job in our VPC,
write logs and metrics, use the KMS key. Wildcards that remain are the ones AWS requires; each is acknowledged
on this role with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from platform_constructs.nag import acknowledge_required_wildcards

TRAINING_LOG_GROUP = "/aws/sagemaker/TrainingJobs"
METRIC_NAMESPACES = "/aws/sagemaker/*"

# The wildcards AWS requires, by statement: acknowledged for cdk-nag AwsSolutions-IAM5, finding by finding.
REQUIRED_WILDCARDS = {
    "ReadTrainingData": "Training jobs read any object of the data bucket (channels name key prefixes chosen per "
                        "workload); the wildcard is limited to objects of this one bucket.",
    "WriteOutput": "SageMaker writes model artifacts under job names generated per run; limited to objects of "
                   "the output bucket (and its prefix).",
    "SyncCheckpoints": "SageMaker syncs checkpoint files named by the training script under per-run prefixes; "
                       "limited to objects of the checkpoint bucket (and its prefix).",
    "EcrLogin": "ecr:GetAuthorizationToken has no resource-level permissions: AWS requires Resource '*'.",
    "CreateJobInterfaces": "SageMaker creates the job's network interfaces, whose IDs do not exist before the job; "
                           "limited to this account and region, and to the training subnet and security group.",
    "ManageJobInterfaces": "Network interface IDs are created per job; limited by the ec2:Vpc condition to "
                           "interfaces in the training VPC.",
    "DescribeJobNetwork": "EC2 Describe* calls support no resource-level permissions: AWS requires Resource '*'.",
    "WriteTrainingLogs": "CloudWatch log streams are named per training job at run time; limited to the "
                         "/aws/sagemaker/TrainingJobs log group.",
    "PutTrainingMetrics": "cloudwatch:PutMetricData has no resource-level permissions: AWS requires Resource '*'; "
                          "limited by the cloudwatch:namespace condition to SageMaker namespaces.",
}


class SageMakerExecutionRole(Construct):
    """The role SageMaker training jobs run as. Exposes `role`, `role_arn` and `grant_pass_role`."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        data_bucket: s3.IBucket,
        output_bucket: s3.IBucket,
        checkpoint_bucket: s3.IBucket,
        encryption_key: kms.IKey,
        repositories: Sequence[ecr.IRepository],
        base_image_repository_arns: Sequence[str] = (),
        vpc: ec2.IVpc,
        subnets: Sequence[ec2.ISubnet],
        security_groups: Sequence[ec2.ISecurityGroup],
        output_prefix: str = "",
        checkpoint_prefix: str = "",
    ) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.role = iam.Role(
            self, "Role",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com", conditions={
                # Confused-deputy protection: only SageMaker acting for this account's training jobs.
                "StringEquals": {"aws:SourceAccount": stack.account},
                "ArnLike": {"aws:SourceArn": stack.format_arn(service="sagemaker", resource="training-job",
                                                              resource_name="*")},
            }),
            description="SageMaker training jobs of the training platform (least privilege)",
            max_session_duration=cdk.Duration.hours(12),
        )
        self.role_arn = self.role.role_arn

        def objects(bucket: s3.IBucket, prefix: str) -> str:
            return bucket.arn_for_objects(f"{prefix}*")

        statements = [
            iam.PolicyStatement(sid="ListTrainingBuckets", actions=["s3:ListBucket", "s3:GetBucketLocation"],
                                resources=[data_bucket.bucket_arn, output_bucket.bucket_arn,
                                           checkpoint_bucket.bucket_arn]),
            iam.PolicyStatement(sid="ReadTrainingData", actions=["s3:GetObject"],
                                resources=[objects(data_bucket, "")]),
            iam.PolicyStatement(sid="WriteOutput", actions=["s3:PutObject", "s3:AbortMultipartUpload"],
                                resources=[objects(output_bucket, output_prefix)]),
            iam.PolicyStatement(sid="SyncCheckpoints",
                                actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
                                resources=[objects(checkpoint_bucket, checkpoint_prefix)]),
            iam.PolicyStatement(sid="UseDataKey",
                                actions=["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"],
                                resources=[encryption_key.key_arn]),
            iam.PolicyStatement(sid="EncryptJobVolumes", actions=["kms:CreateGrant"], resources=[encryption_key.key_arn],
                                conditions={"Bool": {"kms:GrantIsForAWSResource": "true"}}),
            iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
            iam.PolicyStatement(
                sid="PullTrainingImages",
                actions=["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
                resources=[*(r.repository_arn for r in repositories), *base_image_repository_arns],
            ),
            iam.PolicyStatement(
                sid="CreateJobInterfaces", actions=["ec2:CreateNetworkInterface"],
                resources=[
                    stack.format_arn(service="ec2", resource="network-interface", resource_name="*"),
                    *(stack.format_arn(service="ec2", resource="subnet", resource_name=s.subnet_id) for s in subnets),
                    *(stack.format_arn(service="ec2", resource="security-group", resource_name=g.security_group_id)
                      for g in security_groups),
                ],
            ),
            iam.PolicyStatement(
                sid="ManageJobInterfaces",
                actions=["ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface",
                         "ec2:DeleteNetworkInterfacePermission"],
                resources=[stack.format_arn(service="ec2", resource="network-interface", resource_name="*")],
                conditions={"ArnEquals": {"ec2:Vpc": stack.format_arn(service="ec2", resource="vpc",
                                                                      resource_name=vpc.vpc_id)}},
            ),
            iam.PolicyStatement(
                sid="DescribeJobNetwork",
                actions=["ec2:DescribeNetworkInterfaces", "ec2:DescribeVpcs", "ec2:DescribeDhcpOptions",
                         "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups"],
                resources=["*"],
            ),
            iam.PolicyStatement(
                sid="WriteTrainingLogs",
                actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                resources=[
                    stack.format_arn(service="logs", resource="log-group", resource_name=TRAINING_LOG_GROUP,
                                     arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME),
                    stack.format_arn(service="logs", resource="log-group",
                                     resource_name=f"{TRAINING_LOG_GROUP}:log-stream:*",
                                     arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME),
                ],
            ),
            iam.PolicyStatement(sid="PutTrainingMetrics", actions=["cloudwatch:PutMetricData"], resources=["*"],
                                conditions={"StringLike": {"cloudwatch:namespace": METRIC_NAMESPACES}}),
        ]
        self.policy = iam.Policy(self, "Policy", statements=statements, roles=[self.role])
        acknowledge_required_wildcards(self.policy, REQUIRED_WILDCARDS)

    def grant_pass_role(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let `grantee` (the Step Functions role) pass this role to SageMaker, and only to SageMaker."""
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=["iam:PassRole"], resource_arns=[self.role.role_arn],
            conditions={"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
        )
