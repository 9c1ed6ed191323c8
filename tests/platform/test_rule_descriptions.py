"""Every security group and rule description is one EC2 accepts: the app's templates are clean, and the synth-time
guard stops `cdk synth` on each kind of planted defect, at the boundaries of each set.

The character sets are literals from the EC2 API reference (IpRange, UserIdGroupPair and CreateSecurityGroup's
Description: "Allowed characters are a-z, A-Z, 0-9, spaces, and ..."), which the guard reads from botocore's model.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2

from platform_constructs.rule_descriptions import allowed, guard_rule_descriptions, template_problems

pytestmark = pytest.mark.synth
ENVS = ("dev", "prod")


def test_the_sets_read_from_botocore_are_the_documented_ones() -> None:
    sets = allowed()
    assert (sets["cidr"].max_length, sets["cidr"].punctuation) == (255, "._-:/()#,@[]+=&;{}!$*")
    assert (sets["reference"].max_length, sets["reference"].punctuation) == (255, "._-:/()#,@[]+=;{}!$*")
    assert (sets["group"].max_length, sets["group"].punctuation) == (255, "._-:/()#,@[]+=&;{}!$*")


@pytest.mark.parametrize("env", ENVS)
def test_every_description_of_the_app_is_one_ec2_accepts(synthesized_app: Any, env: str) -> None:
    described = 0
    for stack, template in synthesized_app.templates[env].items():
        assert template_problems(template) == [], stack
        described += sum(r["Type"].startswith("AWS::EC2::SecurityGroup") for r in template["Resources"].values())
    assert described > 10  # the check saw the groups and rules


def _stack() -> tuple[cdk.App, cdk.Stack, ec2.SecurityGroup, ec2.SecurityGroup]:
    app = cdk.App()
    stack = cdk.Stack(app, "Tiny", env=cdk.Environment(account="123456789012", region="us-east-1"))
    vpc = ec2.Vpc(stack, "Vpc", max_azs=1, nat_gateways=0, subnet_configuration=[
        ec2.SubnetConfiguration(name="p", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)])
    one = ec2.SecurityGroup(stack, "One", vpc=vpc, allow_all_outbound=False, description="one")
    two = ec2.SecurityGroup(stack, "Two", vpc=vpc, allow_all_outbound=False, description="two")
    guard_rule_descriptions(stack)
    return app, stack, one, two


def _synth_problems(app: cdk.App) -> str:
    try:
        app.synth()
    except Exception as caught:  # the CDK raises a jsii error carrying the guard's messages
        return str(caught)
    return ""


def test_an_apostrophe_in_a_rule_naming_a_group_stops_synth() -> None:
    """The rule the shared training group used to carry: it never could have deployed."""
    app, _, one, _ = _stack()
    one.add_ingress_rule(one, ec2.Port.all_traffic(), "EFA: from the job's nodes")
    errors = _synth_problems(app)
    assert "EFA: from the job's nodes" in errors and "\"'\" is not among the characters EC2 accepts" in errors
    assert "UserIdGroupPair.Description" in errors and "Fix: reword the description" in errors


def test_an_ampersand_is_accepted_for_an_address_range_and_refused_for_a_group() -> None:
    app, _, one, two = _stack()
    one.add_egress_rule(ec2.Peer.ipv4("10.0.0.0/16"), ec2.Port.tcp(443), "HTTPS & more")
    assert _synth_problems(app) == ""
    app, _, one, two = _stack()
    one.add_egress_rule(two, ec2.Port.tcp(443), "HTTPS & more")
    assert "'&' is not among the characters EC2 accepts" in _synth_problems(app)


@pytest.mark.parametrize("length, refused", [(255, False), (256, True)])
def test_at_most_255_characters(length: int, refused: bool) -> None:
    app, _, one, two = _stack()
    one.add_ingress_rule(two, ec2.Port.tcp(988), "x" * length)
    assert ("more than 255" in _synth_problems(app)) is refused


@pytest.mark.parametrize("text", ["plain text", "a-z A-Z 0-9 ._-:/()#,@[]+=;{}!$*"])
def test_every_listed_character_passes(text: str) -> None:
    app, _, one, two = _stack()
    one.add_ingress_rule(two, ec2.Port.tcp(988), text)
    assert _synth_problems(app) == ""


@pytest.mark.parametrize("text", ["naïve", "tab\there", 'quote"d', "back`tick", "percent %", "caret ^"])
def test_characters_outside_the_set_are_refused(text: str) -> None:
    app, _, one, two = _stack()
    one.add_ingress_rule(two, ec2.Port.tcp(988), text)
    assert "is not among the characters EC2 accepts" in _synth_problems(app)


def test_a_group_description_is_checked_too() -> None:
    app, stack, _, _ = _stack()
    ec2.CfnSecurityGroup(stack, "Raw", group_description="the platform's group")
    assert "GroupDescription" in _synth_problems(app)
