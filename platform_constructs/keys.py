"""The environment's customer-managed KMS key: buckets, FSx, ECR images, log groups, SageMaker job volumes.

Why one key per environment: the execution roles, FSx, ECR and CloudWatch Logs all need grants on it, and one rotated
key keeps the audit trail in one place.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct


def allow_cloudwatch_logs(key: kms.Key) -> None:
    """Let CloudWatch Logs encrypt with the key, for log groups of this account and region only (the encryption
    context names the log group)."""
    stack = cdk.Stack.of(key)
    key.add_to_resource_policy(iam.PolicyStatement(
        sid="CloudWatchLogsOfThisAccount",
        actions=["kms:Encrypt", "kms:Decrypt", "kms:ReEncryptFrom", "kms:ReEncryptTo", "kms:GenerateDataKey",
                 "kms:GenerateDataKeyWithoutPlaintext", "kms:DescribeKey"],
        principals=[iam.ServicePrincipal(f"logs.{stack.region}.amazonaws.com")], resources=["*"],
        conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn":
                                f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:*"}},
    ))


def environment_key(scope: Construct, construct_id: str, *, removal_policy: cdk.RemovalPolicy,
                    description: str) -> kms.Key:
    """A rotated KMS key that CloudWatch Logs may use for this account's log groups."""
    destroy = removal_policy == cdk.RemovalPolicy.DESTROY
    key = kms.Key(scope, construct_id, enable_key_rotation=True, removal_policy=removal_policy,
                  pending_window=cdk.Duration.days(7) if destroy else None, description=description)
    allow_cloudwatch_logs(key)
    return key
