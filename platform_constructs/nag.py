"""cdk-nag 3 acknowledgments, always on one resource and always with a reason.

cdk-nag 3 reads acknowledgments from `cdk.Validations.of(scope)` (FACTS.md section 5). Keeping the call in
one helper makes every acknowledgment greppable and guarantees the rule id is spelled the way nag matches it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_iam as iam
from constructs import IConstruct, IValidation

PACK = "AwsSolutions"


def rule_id(rule: str, finding: str | None = None) -> str:
    """The id nag reports for a rule, e.g. ``AwsSolutions::AwsSolutions-IAM5[Resource::*]``."""
    suffix = f"[{finding}]" if finding else ""
    return f"{PACK}::{PACK}-{rule}{suffix}"


def acknowledge(scope: IConstruct, rule: str, reason: str, finding: str | None = None) -> None:
    """Acknowledge one AwsSolutions rule (or one finding of it) on one resource, with a specific reason."""
    acknowledge_findings(scope, rule, [(finding, reason)])


def acknowledge_findings(scope: IConstruct, rule: str, reasons: Sequence[tuple[str | None, str]]) -> None:
    """Acknowledge findings of one rule on one resource, each (finding, reason), in one call into the CDK."""
    for _, reason in reasons:
        if len(reason.strip()) < 20:
            raise ValueError(f"acknowledging {rule} on {scope.node.path} needs a specific reason, not {reason!r}")
    if reasons:
        cdk.Validations.of(scope).acknowledge(*(cdk.Acknowledgment(id=rule_id(rule, finding), reason=reason)
                                                for finding, reason in reasons))


def flatten_cfn_reference(node: Any) -> str:
    """cdk-nag's `flattenCfnReference` (utils/flatten-cfn-reference.ts): how a resource appears in a finding id."""
    if node is None:
        return ""
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict):
        if node.get("Fn::Join"):
            delimiter, items = node["Fn::Join"]
            return delimiter.join(flatten_cfn_reference(i) for i in items)
        if node.get("Fn::Sub"):
            return flatten_cfn_reference(node["Fn::Sub"])
        if node.get("Fn::GetAtt"):
            resource, attribute = node["Fn::GetAtt"]
            return f"<{flatten_cfn_reference(resource)}.{flatten_cfn_reference(attribute)}>"
        if node.get("Fn::ImportValue"):
            return flatten_cfn_reference(node["Fn::ImportValue"])
        if node.get("Ref"):
            return f"<{flatten_cfn_reference(node['Ref'])}>"
    return json.dumps(node, separators=(",", ":"))


def wildcard_findings(statement: dict[str, Any]) -> list[str]:
    """The AwsSolutions-IAM5 finding ids one resolved Allow statement produces (IAMNoWildcardPermissions.ts)."""
    if statement.get("Effect") != "Allow":
        return []

    def as_list(value: Any) -> list[Any]:
        return value if isinstance(value, list) else [value]

    found = [f"Action::{a}" for a in as_list(statement.get("Action")) if isinstance(a, str) and "*" in a]
    for resource in as_list(statement.get("Resource")):
        flat = flatten_cfn_reference(resource)
        if "*" in flat:
            found.append(f"Resource::{flat}")
    return found


def acknowledge_required_wildcards(policy: iam.Policy | iam.ManagedPolicy, reasons_by_sid: Mapping[str, str]) -> None:
    """Acknowledge AwsSolutions-IAM5 for the wildcards of the named statements only, each finding by its id.

    cdk-nag reports a finding per (resource, finding id), so an acknowledgment covers every statement of the policy
    that produces the same id. To make each acknowledgment cover exactly one statement, synth fails when another
    statement of the same policy produces an acknowledged id (split the policy instead), and when a named statement
    has no wildcard (the reason would be untrue). The ids hold resolved references (cross-stack imports included),
    known only once the app is prepared, so this runs as a validation before the cdk-nag plugin.
    """
    cfn = policy.node.default_child
    assert isinstance(cfn, iam.CfnPolicy | iam.CfnManagedPolicy)

    def record() -> list[str]:
        document = cdk.Stack.of(cfn).resolve(cfn.policy_document) or {}
        statements = document.get("Statement", [])
        errors = []
        acknowledged: list[tuple[str | None, str]] = []
        owners: dict[str, str] = {}
        for statement in statements:
            for finding in wildcard_findings(statement):
                owners.setdefault(finding, statement.get("Sid", "(no sid)"))
        for statement in statements:
            sid = statement.get("Sid", "")
            reason = reasons_by_sid.get(sid)
            if reason is None:
                continue
            findings = wildcard_findings(statement)
            if not findings:
                errors.append(f"{cfn.node.path}: statement {sid} has no wildcard to acknowledge; remove its reason")
            for finding in findings:
                if owners[finding] != sid or sum(finding in wildcard_findings(s) for s in statements) > 1:
                    errors.append(f"{cfn.node.path}: the acknowledgment of {finding} for {sid} would also cover another "
                                  "statement of the same policy; move one of them to a policy of its own")
                    continue
                acknowledged.append((finding, reason))
        acknowledge_findings(cfn, "IAM5", acknowledged)
        return errors

    cfn.node.add_validation(_Record(record))


@jsii.implements(IValidation)
class _Record:
    def __init__(self, fn: Callable[[], list[str]]) -> None:
        self._fn = fn

    def validate(self) -> list[str]:
        return self._fn()
