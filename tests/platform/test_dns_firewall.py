"""The training VPC's DNS firewall in the synthesized templates: associated with the training VPC, the allowlist before
the catch-all, BLOCK with NXDOMAIN in production and ALERT in dev (the defaults), the environment's region's names.

Route 53 Resolver developer guide, "DNS Firewall rule settings": rules are evaluated from the lowest priority number;
"rule group priority": the association's priority orders the VPC's rule groups.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest

from compiler.inputs.dns_firewall import DnsFirewallSettings
from tests.platform.conftest import Synth

pytestmark = pytest.mark.synth
ENVS = ("dev", "prod")


def of_type(synth: Synth, env: str, kind: str) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in synth.template(env, "Network")["Resources"].items() if r["Type"] == kind}


def one(resources: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    assert len(resources) == 1, list(resources)
    ((logical_id, resource),) = resources.items()
    return logical_id, resource["Properties"]


@pytest.mark.parametrize("env", ENVS)
def test_the_rule_group_is_associated_with_the_training_vpc(synth: Synth, env: str) -> None:
    group_id, _ = one(of_type(synth, env, "AWS::Route53Resolver::FirewallRuleGroup"))
    _, association = one(of_type(synth, env, "AWS::Route53Resolver::FirewallRuleGroupAssociation"))
    vpc_id, _ = one(of_type(synth, env, "AWS::EC2::VPC"))
    assert association["VpcId"] == {"Ref": vpc_id}
    assert association["FirewallRuleGroupId"] == {"Fn::GetAtt": [group_id, "Id"]}
    assert 100 <= association["Priority"] <= 9900


@pytest.mark.parametrize(("env", "action"), [("dev", "ALERT"), ("prod", "BLOCK")])
def test_allowed_names_first_then_everything_else_blocked_or_alerted(synth: Synth, env: str, action: str) -> None:
    lists = {k: p["Properties"]["Domains"] for k, p in
             of_type(synth, env, "AWS::Route53Resolver::FirewallDomainList").items()}
    _, group = one(of_type(synth, env, "AWS::Route53Resolver::FirewallRuleGroup"))
    rules = sorted(group["FirewallRules"], key=lambda r: r["Priority"])
    assert [r["Action"] for r in rules] == ["ALLOW", action]
    allow, catch_all = rules
    assert lists[catch_all["FirewallDomainListId"]["Fn::GetAtt"][0]] == ["*"]
    assert "*" not in lists[allow["FirewallDomainListId"]["Fn::GetAtt"][0]]
    assert allow["FirewallDomainRedirectionAction"] == "TRUST_REDIRECTION_DOMAIN"
    assert catch_all.get("BlockResponse") == ("NXDOMAIN" if action == "BLOCK" else None)


@pytest.mark.parametrize("env", ENVS)
def test_the_allowlist_names_the_environments_region(synth: Synth, env: str) -> None:
    region = synth.stages[env].settings.region
    allowed = next(p["Properties"]["Domains"] for p in of_type(synth, env, "AWS::Route53Resolver::FirewallDomainList")
               .values() if p["Properties"]["Domains"] != ["*"])
    for name in ("s3.{r}.amazonaws.com", "*.s3.{r}.amazonaws.com", "api.ecr.{r}.amazonaws.com",
                 "*.dkr.ecr.{r}.amazonaws.com", "logs.{r}.amazonaws.com", "monitoring.{r}.amazonaws.com",
                 "sts.{r}.amazonaws.com", "api.sagemaker.{r}.amazonaws.com", "*.fsx.{r}.amazonaws.com"):
        assert name.format(r=region) in allowed
    assert not any(".amazonaws.com" in n and region not in n and n not in (
        "s3.amazonaws.com", "*.s3.amazonaws.com", "sts.amazonaws.com") for n in allowed)


def test_queries_are_logged_where_the_firewall_alerts(synth: Synth) -> None:
    assert of_type(synth, "prod", "AWS::Route53Resolver::ResolverQueryLoggingConfig") == {}
    _, config = one(of_type(synth, "dev", "AWS::Route53Resolver::ResolverQueryLoggingConfig"))
    _, association = one(of_type(synth, "dev", "AWS::Route53Resolver::ResolverQueryLoggingConfigAssociation"))
    vpc_id, _ = one(of_type(synth, "dev", "AWS::EC2::VPC"))
    assert association["ResourceId"] == {"Ref": vpc_id}
    groups = of_type(synth, "dev", "AWS::Logs::LogGroup")
    ((group_id, group),) = [(k, g["Properties"]) for k, g in groups.items()
                            if g["Properties"].get("LogGroupName") == "/aws/vendedlogs/route53resolver/training-dev-queries"]
    assert "KmsKeyId" in group and group["RetentionInDays"] == 30
    settings = synth.stages["dev"].settings
    # The group's own ARN (Resolver's DestinationArn), not its Arn attribute, which ends in ":*".
    assert config["DestinationArn"] == {"Fn::Join": ["", [
        f"arn:aws:logs:{settings.region}:{settings.account}:log-group:", {"Ref": group_id}]]}


def test_query_logging_writes_to_a_keyed_retained_group_of_the_vpc() -> None:
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_logs as logs
    from aws_cdk.assertions import Template

    from platform_constructs.dns_firewall import TrainingDnsFirewall

    stack = cdk.Stack(cdk.App(), "N", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    vpc = ec2.Vpc(stack, "Vpc", max_azs=1)
    TrainingDnsFirewall(stack, "Fw", vpc=vpc, region="eu-west-1", name="training-x",
                        settings=DnsFirewallSettings(mode="alert", query_logging=True),
                        log_key=kms.Key(stack, "K", enable_key_rotation=True),
                        log_retention=logs.RetentionDays.ONE_MONTH, removal_policy=cdk.RemovalPolicy.DESTROY)
    template = Template.from_stack(stack).to_json()
    (group_id,) = [k for k, r in template["Resources"].items() if r["Type"] == "AWS::Logs::LogGroup"]
    group = template["Resources"][group_id]["Properties"]
    assert "KmsKeyId" in group and group["RetentionInDays"] == 30
    assert group["LogGroupName"] == "/aws/vendedlogs/route53resolver/training-x-queries"
    (config,) = [r["Properties"] for r in template["Resources"].values()
                 if r["Type"] == "AWS::Route53Resolver::ResolverQueryLoggingConfig"]
    assert ":log-group:" in str(config["DestinationArn"]) and ":*" not in str(config["DestinationArn"])
    (association,) = [r["Properties"] for r in template["Resources"].values()
                      if r["Type"] == "AWS::Route53Resolver::ResolverQueryLoggingConfigAssociation"]
    assert association["ResourceId"] == {"Ref": next(k for k, r in template["Resources"].items()
                                                 if r["Type"] == "AWS::EC2::VPC")}
