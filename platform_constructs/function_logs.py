"""The CDK's custom-resource provider functions log to a group of their own, with the environment's key and retention.

Why: a Lambda function without `LoggingConfig.LogGroup` writes to `/aws/lambda/<function name>`, which Lambda
creates on first write with no key and no retention (kept forever), through the `AWSLambdaBasicExecutionRole`
managed policy the CDK gives its providers (`logs:CreateLogGroup` on every group of the account). The CDK's
built-in providers (restricting the VPC's default security group, emptying dev's buckets on delete) are raw
resources whose props cannot say otherwise, so this pass, run by the stack that holds them, gives each one a log
group, points the function at it and swaps the managed policy for one that writes streams to that group only.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from platform_constructs.providers import providers


def role_and_logs(scope: Construct, *, description: str, key: kms.IKey | None, retention: logs.RetentionDays,
                  removal_policy: cdk.RemovalPolicy) -> tuple[iam.Role, logs.LogGroup, iam.PolicyStatement]:
    """For a function of our own: its role ("Role", assumable by Lambda for this account only), its log group
    ("Logs", with the key and retention), and the statement that lets the role write there and nowhere else (it
    creates no group, so Lambda never makes an unkeyed /aws/lambda/<name>). The caller puts the statement in a
    policy of the role, beside what else the function needs."""
    role = iam.Role(scope, "Role", description=description, assumed_by=iam.ServicePrincipal(
        "lambda.amazonaws.com", conditions={"StringEquals": {"aws:SourceAccount": cdk.Stack.of(scope).account}}))
    group = logs.LogGroup(scope, "Logs", encryption_key=key, retention=retention, removal_policy=removal_policy)
    # The group's ARN attribute ends in ":*": its streams, which Lambda names at run time.
    write = iam.PolicyStatement(sid="WriteLogs", actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                                resources=[group.log_group_arn])
    return role, group, write


def provider_functions_log_to_own_groups(stack: cdk.Stack, *, key: kms.IKey, retention: logs.RetentionDays,
                                         removal_policy: cdk.RemovalPolicy) -> list[logs.LogGroup]:
    """Give every CDK custom-resource provider function of `stack` its own encrypted, retained log group; returns
    the groups. Run it after the constructs that add providers (they are singletons among the stack's children)."""
    groups = []
    for provider in providers(stack):
        handler = provider.node.try_find_child("Handler")
        role = provider.node.try_find_child("Role")
        if not (_raw(handler, "AWS::Lambda::Function") and _raw(role, "AWS::IAM::Role")) \
                or provider.node.try_find_child("Logs") is not None:
            continue
        assert isinstance(handler, cdk.CfnResource) and isinstance(role, cdk.CfnResource)
        group = logs.LogGroup(provider, "Logs", encryption_key=key, retention=retention,
                              removal_policy=removal_policy)
        handler.add_property_override("LoggingConfig.LogGroup", group.log_group_name)
        role.add_property_deletion_override("ManagedPolicyArns")
        # The group's ARN attribute ends in ":*": its streams, which Lambda names at run time.
        policy = iam.CfnPolicy(provider, "WriteLogs", roles=[role.ref], policy_name="WriteOwnLogs",
                               policy_document={"Version": "2012-10-17", "Statement": [{
                                   "Sid": "WriteLogs", "Effect": "Allow",
                                   "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                                   "Resource": group.log_group_arn}]})
        handler.node.add_dependency(policy)
        groups.append(group)
    return groups


def _raw(construct: object, resource_type: str) -> bool:
    return isinstance(construct, cdk.CfnResource) and construct.cfn_resource_type == resource_type
