"""checkov acknowledgments: one check on one resource, with the reason, in the template where checkov reads it.

checkov skips a check on a CloudFormation resource whose `Metadata.checkov.skip` lists it (and reports it as
skipped, with the comment). Every such reason is also listed in docs/security.md with the rule id.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_

from platform_constructs.providers import providers

_KEY = "checkov"


def acknowledge_check(resource: cdk.CfnResource, check_id: str, reason: str) -> None:
    """Skip checkov's `check_id` on this one resource, saying why."""
    if len(reason.strip()) < 20:
        raise ValueError(f"acknowledging {check_id} on {resource.node.path} needs a specific reason, not {reason!r}")
    metadata: dict[str, Any] = resource.get_metadata(_KEY) or {"skip": []}
    if any(entry["id"] == check_id for entry in metadata["skip"]):
        return
    metadata["skip"] = [*metadata["skip"], {"id": check_id, "comment": reason}]
    resource.add_metadata(_KEY, metadata)


# The Lambda functions the CDK (its providers) and cdk-ecr-deployment bring for custom
# resources: CloudFormation invokes them during a deploy, once per resource change, and reads their answer.
CUSTOM_RESOURCE_FUNCTION_REASONS = {
    "CKV_AWS_115": "A custom-resource handler CloudFormation invokes once per resource change; a reserved concurrency "
                   "would take from the account's unreserved pool, which new accounts keep at its minimum of 10, and "
                   "fail the deploy.",
    "CKV_AWS_116": "A custom-resource handler: CloudFormation invokes it and waits for its answer, and a failure fails "
                   "the stack operation, where it is seen; a dead-letter queue would keep events no one replays.",
    "CKV_AWS_117": "A custom-resource handler that calls AWS APIs and answers CloudFormation's pre-signed S3 URL; the "
                   "training network has no internet route and holds nothing the handler uses.",
}


def acknowledge_custom_resource_functions(stack: cdk.Stack) -> None:
    """Acknowledge the checks above on the stack's custom-resource handler functions, and on no other function.

    The handlers are singletons among the stack's own children: the CDK's providers
    (`Custom::<Name>CustomResourceProvider`, whose `Handler` is the function) and cdk-ecr-deployment's function
    (`Custom::CDKECRDeployment<uuid>`). The app has no AwsCustomResource: nothing it deploys acts on what its stacks
    do not hold (docs/teardown.md).
    """
    handlers = [provider.node.try_find_child("Handler") for provider in providers(stack)]
    handlers += [child.node.default_child for child in stack.node.children
                 if isinstance(child, lambda_.Function) and child.node.id.startswith("Custom::CDKECRDeployment")]
    for handler in handlers:
        if isinstance(handler, cdk.CfnResource) and handler.cfn_resource_type == "AWS::Lambda::Function":
            for check_id, reason in CUSTOM_RESOURCE_FUNCTION_REASONS.items():
                acknowledge_check(handler, check_id, reason)
