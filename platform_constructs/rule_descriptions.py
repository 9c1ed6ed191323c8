"""Security group and rule descriptions EC2 accepts, read from botocore's EC2 model, and the guard that holds every
stack to them.

EC2 refuses a description with a character outside a fixed set ("Invalid rule description", and the stack rolls
back); CloudFormation's schema and cfn-lint do not check it, so an apostrophe ("the job's nodes") synthesized, passed
every linter here and could never deploy. The sets differ by what a rule references: a rule naming an address range
may use `&`, one naming another security group (`UserIdGroupPair`) or a prefix list may not. The model's own
documentation of each shape states the constraint (`Up to 255 characters ... Allowed characters are a-z, A-Z, 0-9,
spaces, and ...`); this module reads it from there, so the rule and its source cannot drift apart.
`guard_rule_descriptions` (run on every stack by `stacks.app.build_app`) stops `cdk synth`, naming the resource,
the character and the fix; the tests run `template_problems` on every written template.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import botocore.session

from platform_constructs import stack_resources
from platform_constructs.guards import add_guard

_CONSTRAINT = re.compile(r"Up to (\d+) characters in length\.? (?:Allowed|Valid) characters(?: are|:) a-z, A-Z, 0-9, "
                         r"spaces, and (\S+)")


@dataclass(frozen=True)
class Allowed:
    """What one EC2 description field accepts, as its botocore shape documents it."""

    where: str  # the botocore shape (and member) the constraint is read from
    max_length: int
    punctuation: str  # besides letters, digits and spaces

    def first_refused(self, text: str) -> str | None:
        """The first character EC2 would refuse in `text`, or None."""
        for char in text:
            if not (char.isascii() and (char.isalnum() or char == " " or char in self.punctuation)):
                return char
        return None


def _read(where: str, documentation: str) -> Allowed:
    text = html.unescape(re.sub(r"<[^>]+>", "", documentation))
    match = _CONSTRAINT.search(text)
    if match is None:
        raise RuntimeError(f"botocore's EC2 model no longer states the description constraint of {where}: read "
                           f"its documentation again and update platform_constructs/rule_descriptions.py:\n{text}")
    return Allowed(where, int(match.group(1)), match.group(2))


@functools.cache
def allowed() -> dict[str, Allowed]:
    """The constraints by kind: `group` (a security group's own description), `cidr` (a rule naming an IPv4 or IPv6
    range), `reference` (a rule naming a security group or a prefix list)."""
    model = botocore.session.get_session().get_service_model("ec2")

    def member(shape: str) -> str:
        return model.shape_for(shape).members["Description"].documentation

    group = model.operation_model("CreateSecurityGroup").input_shape.members["Description"].documentation
    return {"group": _read("CreateSecurityGroup.Description", group),
            "cidr": _read("IpRange.Description", member("IpRange")),
            "reference": _read("UserIdGroupPair.Description", member("UserIdGroupPair"))}


_RULE_TYPES = ("AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress")


def _rule_kind(rule: Mapping[str, Any]) -> str:
    """Which constraint a rule's description falls under, by what the rule names (CloudFormation property names)."""
    if any(key in rule for key in ("CidrIp", "CidrIpv6")):
        return "cidr"
    return "reference"  # SourceSecurityGroupId/-Name, DestinationSecurityGroupId, *PrefixListId


def _descriptions(resource_type: str, props: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(field, kind, text) of every literal description of one resource."""
    found: list[tuple[str, str, str]] = []
    if resource_type == "AWS::EC2::SecurityGroup":
        if isinstance(props.get("GroupDescription"), str):
            found.append(("GroupDescription", "group", props["GroupDescription"]))
        for key in ("SecurityGroupIngress", "SecurityGroupEgress"):
            rules = props.get(key)
            for index, rule in enumerate(rules if isinstance(rules, list) else []):
                if isinstance(rule, Mapping) and isinstance(rule.get("Description"), str):
                    found.append((f"{key}[{index}].Description", _rule_kind(rule), rule["Description"]))
    elif resource_type in _RULE_TYPES and isinstance(props.get("Description"), str):
        found.append(("Description", _rule_kind(props), props["Description"]))
    return found


def description_problems(where: str, resource_type: str, props: Mapping[str, Any]) -> list[str]:
    problems = []
    for field, kind, text in _descriptions(resource_type, props):
        rule = allowed()[kind]
        refused = rule.first_refused(text)
        if refused is None and len(text) <= rule.max_length:
            continue
        why = (f"{refused!r} is not among the characters EC2 accepts there" if refused is not None
               else f"it is {len(text)} characters long, more than {rule.max_length}")
        problems.append(f"{where}: {resource_type} {field} {text!r}: {why} (EC2 API reference, {rule.where}: letters, "
                        f"digits, spaces and {rule.punctuation}; at most {rule.max_length}). EC2 refuses the rule and "
                        "the stack rolls back. Fix: reword the description")
    return problems


def template_problems(template: Mapping[str, Any]) -> list[str]:
    """Every security group or rule of a synthesized template whose description EC2 would refuse."""
    problems: list[str] = []
    for logical_id, resource in template.get("Resources", {}).items():
        problems += description_problems(logical_id, resource.get("Type", ""), resource.get("Properties") or {})
    return problems


_TYPES = ("AWS::EC2::SecurityGroup", *_RULE_TYPES)


def stack_problems(stack: cdk.Stack) -> list[str]:
    """The same for the L1 resources of a stack, named by construct path."""
    problems: list[str] = []
    resources = stack_resources.of(stack)
    for resource_type, node in resources.of_type(*_TYPES):
        props = {key[:1].upper() + key[1:]: value for key, value in resources.properties(node).items()}
        for key in ("SecurityGroupIngress", "SecurityGroupEgress"):  # nested rules: camelCase keys too
            if isinstance(props.get(key), list):
                props[key] = [{k[:1].upper() + k[1:]: v for k, v in rule.items()} if isinstance(rule, Mapping)
                              else rule for rule in props[key]]
        if description_problems("", resource_type, props):  # the path (a call into JavaScript) only for a fault
            problems += description_problems(node.node.path, resource_type, props)
    return problems


def guard_rule_descriptions(stack: cdk.Stack) -> None:
    """Fail `cdk synth` when a security group or rule of the stack has a description EC2 refuses."""
    add_guard(stack, lambda: stack_problems(stack))
