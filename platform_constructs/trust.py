"""Trust policies that name the account: a state machine's role, and the CDK's own custom-resource roles.

`state_machine_principal` is Step Functions acting for one state machine of this account (the workloads' and the
job reaper's roles).

The CDK's built-in custom-resource providers (restricting the VPC's default security group, emptying buckets on
delete) create their Lambda role as a raw resource whose trust admits `lambda.amazonaws.com` with no condition; a
construct cannot pass one. `provider_roles_trust_this_account` adds the condition the project's own roles carry
(confused-deputy protection: only Lambda functions of this account may assume the role).
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam

from platform_constructs.providers import providers


def provider_roles_trust_this_account(stack: cdk.Stack) -> None:
    """Add `aws:SourceAccount` to the trust of every CDK custom-resource provider role of the stack.

    The providers are singletons among the stack's own children (`Custom::<Name>CustomResourceProvider`), so this
    reads the stack's children only: an aspect would visit every construct of the app.
    """
    for provider in providers(stack):
        role = provider.node.try_find_child("Role")
        if isinstance(role, cdk.CfnResource) and role.cfn_resource_type == "AWS::IAM::Role":
            # The providers' trust is one statement: lambda.amazonaws.com may sts:AssumeRole.
            role.add_property_override("AssumeRolePolicyDocument.Statement.0.Condition",
                                       {"StringEquals": {"aws:SourceAccount": stack.account}})


def state_machine_principal(stack: cdk.Stack, state_machine_arn: str) -> iam.ServicePrincipal:
    """Step Functions, only when it runs this state machine of this account (confused-deputy protection)."""
    return iam.ServicePrincipal("states.amazonaws.com", conditions={
        "StringEquals": {"aws:SourceAccount": stack.account},
        "ArnEquals": {"aws:SourceArn": state_machine_arn},
    })
