"""The CDK's custom-resource providers among a stack's own children, which several passes adjust (their roles' trust,
their functions' logs and checkov acknowledgments).

The CDK creates each provider once per stack, as a child of the stack named `Custom::<Name>CustomResourceProvider`
(`CustomResourceProviderBase`). Candidates are picked by their class first: reading a construct's id is a call into
the CDK's JavaScript, and a workload shard holds hundreds of children and no provider.
"""

from __future__ import annotations

import aws_cdk as cdk

PROVIDER_SUFFIX = "CustomResourceProvider"


def providers(stack: cdk.Stack) -> list[cdk.CustomResourceProviderBase]:
    """The stack's provider singletons, in construct order."""
    return [child for child in stack.node.children
            if isinstance(child, cdk.CustomResourceProviderBase) and child.node.id.endswith(PROVIDER_SUFFIX)]
