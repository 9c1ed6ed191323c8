"""Route 53 Resolver DNS Firewall on the training VPC: the names jobs need are allowed, every other query is
answered NXDOMAIN (mode block) or let through and counted (mode alert).

The names and the settings are the compiler's
(`compiler.facts.dns_firewall`, `compiler.inputs.dns_firewall`); this construct writes two domain lists, one
rule group with two rules (ALLOW at priority 100 before the catch-all `*` at 200: a lower number is evaluated first)
and its association with the VPC. The ALLOW rule trusts the targets of CNAMEs of an allowed name (AWS's service names
redirect to names of their own, e.g. S3's regional aliases), so the allowlist lists the names jobs ask for, not the
chains behind them. Optional query logging writes every query of the VPC to a log group with the given key.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_route53resolver as resolver
from constructs import Construct

from compiler.facts.dns_firewall import allowed_domains
from compiler.inputs.dns_firewall import DnsFirewallSettings

ALLOW_PRIORITY = 100
CATCH_ALL_PRIORITY = 200
ASSOCIATION_PRIORITY = 1000  # among the VPC's rule groups; leaves room before and after


class TrainingDnsFirewall(Construct):
    """Exposes `allowed` and `everything` (domain lists), `rule_group`, `association` and `query_log_group`."""

    def __init__(self, scope: Construct, construct_id: str, *, vpc: ec2.IVpc, region: str, name: str,
                 settings: DnsFirewallSettings, log_key: kms.IKey, log_retention: logs.RetentionDays,
                 removal_policy: cdk.RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        domains = sorted({d for names in allowed_domains(region).values() for d in names} | set(settings.allow))
        self.allowed = resolver.CfnFirewallDomainList(self, "Allowed", name=f"{name}-allowed", domains=domains)
        self.everything = resolver.CfnFirewallDomainList(self, "Everything", name=f"{name}-everything",
                                                          domains=["*"])
        catch_all = resolver.CfnFirewallRuleGroup.FirewallRuleProperty(
            action=settings.action, firewall_domain_list_id=self.everything.attr_id, priority=CATCH_ALL_PRIORITY,
            block_response="NXDOMAIN" if settings.action == "BLOCK" else None)
        self.rule_group = resolver.CfnFirewallRuleGroup(self, "Rules", name=f"{name}-training-jobs", firewall_rules=[
            resolver.CfnFirewallRuleGroup.FirewallRuleProperty(
                action="ALLOW", firewall_domain_list_id=self.allowed.attr_id, priority=ALLOW_PRIORITY,
                firewall_domain_redirection_action="TRUST_REDIRECTION_DOMAIN"),
            catch_all,
        ])
        self.association = resolver.CfnFirewallRuleGroupAssociation(
            self, "Association", name=f"{name}-training-vpc", firewall_rule_group_id=self.rule_group.attr_id,
            vpc_id=vpc.vpc_id, priority=ASSOCIATION_PRIORITY, mutation_protection="DISABLED")
        self.query_log_group: logs.LogGroup | None = None
        if settings.query_logging:
            self._log_queries(vpc, name, log_key, log_retention, removal_policy)

    def _log_queries(self, vpc: ec2.IVpc, name: str, key: kms.IKey, retention: logs.RetentionDays,
                     removal_policy: cdk.RemovalPolicy) -> None:
        # Under /aws/vendedlogs/: CloudWatch Logs' resource policy for log delivery then names the prefix, not each
        # group, and stays under its size limit (CloudWatch Logs user guide, "Enabling logging from AWS services").
        group = logs.LogGroup(self, "QueryLogs", log_group_name=f"/aws/vendedlogs/route53resolver/{name}-queries",
                              encryption_key=key, retention=retention, removal_policy=removal_policy)
        self.query_log_group = group
        # The group's ARN without the ":*" of its Arn attribute: Resolver takes the group itself.
        arn = cdk.Stack.of(self).format_arn(service="logs", resource="log-group", resource_name=group.log_group_name,
                                            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME)
        config = resolver.CfnResolverQueryLoggingConfig(self, "QueryLogging", name=f"{name}-queries",
                                                        destination_arn=arn)
        resolver.CfnResolverQueryLoggingConfigAssociation(self, "QueryLoggingAssociation",
                                                          resolver_query_log_config_id=config.attr_id,
                                                          resource_id=vpc.vpc_id)
