"""A stack's own L1 resources by CloudFormation type, read in one walk, for the synth-time guards.

Every look at a construct is a call into the CDK's JavaScript, and the guards (security-group rules, rule
descriptions, service-created names, S3 routes, the resource count) each read the same resources of the same stack.
`of(stack)` walks the stack once, when the first guard runs (guards run when the construct tree is complete), and
keeps the result on the stack: the type of an L1 comes from its class (one read per class, not per resource), and
`properties` resolves a resource's properties in one call instead of one per property.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import aws_cdk as cdk

_TYPE_OF_CLASS: dict[type, str | None] = {}  # an L1 class's CloudFormation type; None: read it per resource
_ATTRIBUTE = "_training_stack_resources"


def _type_of(node: cdk.CfnResource) -> str:
    cls = type(node)
    if cls not in _TYPE_OF_CLASS:  # generated L1 classes state their type; a raw CfnResource holds its own
        _TYPE_OF_CLASS[cls] = getattr(cls, "CFN_RESOURCE_TYPE_NAME", None)
    return _TYPE_OF_CLASS[cls] or node.cfn_resource_type


class StackResources:
    """The L1 resources under one stack, by CloudFormation type, with their resolved properties on demand."""

    def __init__(self, stack: cdk.Stack) -> None:
        self.stack = stack
        self.by_type: dict[str, list[cdk.CfnResource]] = {}
        self._nested = False  # whether a nested stack is under this one (it owns the resources under it)
        for node in stack.node.find_all():
            if isinstance(node, cdk.CfnResource):
                self.by_type.setdefault(_type_of(node), []).append(node)
            elif isinstance(node, cdk.Stack) and node is not stack:
                self._nested = True
        self._properties: dict[int, dict[str, Any]] = {}  # by id() of a resource held in by_type

    @property
    def count(self) -> int:
        """How many L1 resources are under the stack (CloudFormation's per-template limit counts these)."""
        return sum(len(nodes) for nodes in self.by_type.values())

    def of_type(self, *types: str) -> Iterable[tuple[str, cdk.CfnResource]]:
        """(type, resource) of the stack's own resources of these types, in construct order per type (a nested
        stack's resources are its own)."""
        for kind in types:
            for node in self.by_type.get(kind, []):
                if not self._nested or cdk.Stack.of(node) is self.stack:
                    yield kind, node

    def properties(self, node: cdk.CfnResource) -> dict[str, Any]:
        """The resource's L1 properties resolved in this stack (the CDK's camelCase keys; unset ones absent)."""
        key = id(node)
        if key not in self._properties:
            self._properties[key] = self.stack.resolve(node._cfn_properties) or {}
        return self._properties[key]


def of(stack: cdk.Stack) -> StackResources:
    """The stack's resources, read once and kept on the stack (call it only once the construct tree is complete)."""
    found: StackResources | None = getattr(stack, _ATTRIBUTE, None)
    if found is None:
        found = StackResources(stack)
        setattr(stack, _ATTRIBUTE, found)
    return found
