"""Synth-time guards: checks on what the templates will actually contain, run as construct validations.

Multi-node training fails late and expensively when the network is subtly wrong (jobs hang at NCCL init
without EFA self-rules, mounts time out without the Lustre ports, a job in another AZ than the file system
pays cross-AZ latency and charges, a job without a route to S3 cannot fetch its code). These guards read the
resolved L1 resources of the stack, so they catch a broken configuration however it came about: a prop, an
imported immutable security group, a hand-edited escape hatch. Each message says what to change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_ec2 as ec2
from constructs import IConstruct, IValidation

from platform_constructs import stack_resources

LUSTRE_PORTS: tuple[tuple[int, int], ...] = ((988, 988), (1018, 1023))


@jsii.implements(IValidation)
class Guard:
    """A construct validation backed by a Python function returning error messages (empty: all good)."""

    def __init__(self, check: Callable[[], list[str]]) -> None:
        self._check = check

    def validate(self) -> list[str]:
        return self._check()


def add_guard(scope: IConstruct, check: Callable[[], list[str]]) -> None:
    """Run `check` when the app is synthesized; any message it returns fails `cdk synth`."""
    scope.node.add_validation(Guard(check))


# ----------------------------------------------------------------------------------------------- zones


def zone_of(subnet: ec2.ISubnet) -> str:
    """The zone a subnet is created in, as `id:<az-id>` or `name:<az-name>` (the template's value wins)."""
    cfn = subnet.node.default_child
    if isinstance(cfn, ec2.CfnSubnet):
        if cfn.availability_zone_id:
            return f"id:{cfn.availability_zone_id}"
        if cfn.availability_zone:
            return f"name:{cfn.availability_zone}"
    return f"name:{subnet.availability_zone}"


def single_zone_problems(groups: dict[str, Sequence[ec2.ISubnet]]) -> list[str]:
    """Every group of subnets (training subnets, file system, job network) must share ONE zone."""
    zones: dict[str, set[str]] = {what: {zone_of(s) for s in subnets} for what, subnets in groups.items()}
    everything = set().union(*zones.values()) if zones else set()
    if len(everything) <= 1:
        return []
    listing = "; ".join(f"{what}: {', '.join(sorted(z)) or 'none'}" for what, z in zones.items())
    return [
        "Multi-node training needs the training subnets, the file system and the job network in ONE "
        f"Availability Zone, found {len(everything)} ({listing}). Pin one zone: give the network a single "
        "availability_zone / availability_zone_id, select subnets of that zone only, and put the file system "
        "in the training subnet."
    ]


# ----------------------------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class Rule:
    """One security-group rule as the template will hold it, with peers as resolved values."""

    direction: str  # "ingress" | "egress"
    group: str  # json of the resolved GroupId
    peer: str  # json of the resolved peer group id, or the CIDR
    protocol: str
    from_port: int | None
    to_port: int | None

    def covers(self, port: int) -> bool:
        if self.protocol == "-1":
            return True
        if self.protocol not in ("tcp", "6"):
            return False
        return self.from_port is not None and self.to_port is not None and self.from_port <= port <= self.to_port


def _key(stack: cdk.Stack, value: Any) -> str:
    return json.dumps(stack.resolve(value), sort_keys=True)


_RULE_TYPES = ("AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress", "AWS::EC2::SecurityGroup")
_PEERS = {"ingress": ("sourceSecurityGroupId", "cidrIp", "sourcePrefixListId"),
          "egress": ("destinationSecurityGroupId", "cidrIp", "destinationPrefixListId")}


def rules_in(stack: cdk.Stack) -> list[Rule]:
    """Every security-group rule of a stack: standalone ingress/egress resources and inline rules.

    Read once per stack and kept on it: guards run when the construct tree is complete (validation), and each
    look at a construct is a call into the CDK's JavaScript.
    """
    cached: list[Rule] | None = getattr(stack, "_training_guard_rules", None)
    if cached is None:
        cached = _read_rules(stack)
        stack._training_guard_rules = cached
    return cached


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _read_rules(stack: cdk.Stack) -> list[Rule]:
    found: list[Rule] = []
    resources = stack_resources.of(stack)
    for _, node in resources.of_type(*_RULE_TYPES):
        if isinstance(node, (ec2.CfnSecurityGroupIngress, ec2.CfnSecurityGroupEgress)):
            direction = "ingress" if isinstance(node, ec2.CfnSecurityGroupIngress) else "egress"
            props = resources.properties(node)
            peer = next((props[k] for k in _PEERS[direction] if props.get(k)), None)
            found.append(Rule(direction, _json(props.get("groupId")), _json(peer), str(props.get("ipProtocol")),
                              props.get("fromPort"), props.get("toPort")))
        elif isinstance(node, ec2.CfnSecurityGroup):
            group = _key(stack, node.attr_group_id)
            props = resources.properties(node)
            for direction, prop in (("ingress", "securityGroupIngress"), ("egress", "securityGroupEgress")):
                for raw in props.get(prop) or []:
                    peer = next((raw[k] for k in _PEERS[direction] if raw.get(k) is not None), None)
                    found.append(Rule(direction, group, _json(peer), str(raw.get("ipProtocol")),
                                      raw.get("fromPort"), raw.get("toPort")))
    return found


def _allows(rules: Iterable[Rule], direction: str, group: str, peer: str, port: int | None) -> bool:
    for rule in rules:
        if rule.direction != direction or rule.group != group or rule.peer != peer:
            continue
        if port is None and rule.protocol == "-1":
            return True
        if port is not None and rule.covers(port):
            return True
    return False


def efa_self_rule_problems(security_group: ec2.ISecurityGroup) -> list[str]:
    """EFA needs ALL traffic allowed from AND to the group itself (FACTS.md section 2)."""
    stack = cdk.Stack.of(security_group)
    me = _key(stack, security_group.security_group_id)
    rules = rules_in(stack)
    missing = [d for d in ("ingress", "egress") if not _allows(rules, d, me, me, None)]
    if not missing:
        return []
    return [
        f"The training security group {security_group.node.path} lacks the EFA self-rule(s) for "
        f"{' and '.join(missing)}: EFA needs all traffic (protocol -1) allowed from and to the group itself, or "
        "NCCL hangs at start-up. Let the network construct create the group, or pass a mutable group "
        "(SecurityGroup.from_security_group_id(..., mutable=True)) so the rules can be added."
    ]


def lustre_rule_problems(job_group: ec2.ISecurityGroup | None, file_system_group: ec2.ISecurityGroup) -> list[str]:
    """Jobs and the file system reach each other on TCP 988 and 1018-1023, both ways, and so do the file servers.

    The rules between a job group and the file system's group live in the job group's stack (remote rules), those
    between file servers in the file system group's own stack: each is looked for where it lives.
    """
    fs_stack = cdk.Stack.of(file_system_group)
    fs_self = _key(fs_stack, file_system_group.security_group_id)
    needed = [(fs_stack, "ingress", fs_self, fs_self, "file system <- file system (ingress of the file-system group "
               "from itself)")]
    if job_group is not None:
        stack = cdk.Stack.of(job_group)
        job, fs = _key(stack, job_group.security_group_id), _key(stack, file_system_group.security_group_id)
        needed = [(stack, "egress", job, fs, "jobs -> file system (egress of the job group)"),
                  (stack, "ingress", fs, job, "file system <- jobs (ingress of the file-system group)"),
                  (stack, "ingress", job, fs, "jobs <- file system (ingress of the job group)"),
                  (stack, "egress", fs, job, "file system -> jobs (egress of the file-system group)"), *needed]
    problems = []
    for stack, direction, group, peer, label in needed:
        rules = rules_in(stack)
        missing = [p for low, high in LUSTRE_PORTS for p in range(low, high + 1)
                   if not _allows(rules, direction, group, peer, p)]
        if missing:
            problems.append(
                f"Lustre port(s) {_ranges(missing)} not allowed for {label}: FSx for Lustre needs TCP 988 and "
                "1018-1023 between jobs and the file system, both ways. Add the rules (the network construct's "
                "job_security_group does this) or use security groups CDK can modify."
            )
    return problems


def _ranges(ports: list[int]) -> str:
    spans: list[str] = []
    start = prev = ports[0]
    for port in [*ports[1:], None]:
        if port is not None and port == prev + 1:
            prev = port
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        if port is not None:
            start = prev = port
    return ", ".join(spans)


# ----------------------------------------------------------------------------------------------- routes

_S3_SERVICE = re.compile(r'\.s3"')


def s3_route_problems(subnets: Sequence[ec2.ISubnet]) -> list[str]:
    """Every job subnet's route table needs the S3 gateway endpoint or a default route through NAT."""
    problems = []
    for subnet in subnets:
        stack = cdk.Stack.of(subnet)
        table = _key(stack, subnet.route_table.route_table_id)
        if not _has_s3_route(stack, table):
            problems.append(
                f"The job subnet {subnet.node.path} has no route to S3 (no S3 gateway endpoint on its route table "
                "and no default route through a NAT gateway): jobs could not download code, data or images. Keep "
                "s3_gateway_endpoint=True on the network, or enable a NAT gateway for the environment."
            )
    return problems


def _has_s3_route(stack: cdk.Stack, table: str) -> bool:
    resources = stack_resources.of(stack)
    for _, node in resources.of_type("AWS::EC2::VPCEndpoint", "AWS::EC2::Route"):
        if isinstance(node, ec2.CfnVPCEndpoint):
            props = resources.properties(node)
            if (props.get("vpcEndpointType") or "Gateway") == "Gateway" and _S3_SERVICE.search(
                    json.dumps(props.get("serviceName"))) and table in [_json(t) for t in props.get("routeTableIds") or []]:
                return True
        elif isinstance(node, ec2.CfnRoute):
            props = resources.properties(node)
            if (props.get("destinationCidrBlock") == "0.0.0.0/0" and _json(props.get("routeTableId")) == table
                    and (props.get("natGatewayId") or props.get("gatewayId"))):
                return True
    return False
