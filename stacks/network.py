"""The network stack of one environment: the training VPC pinned to the environment's Availability Zone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aws_cdk as cdk
from constructs import Construct

from compiler.inputs.environments import Environment
from platform_constructs.dns_firewall import TrainingDnsFirewall
from platform_constructs.function_logs import provider_functions_log_to_own_groups
from platform_constructs.network import TrainingNetwork
from platform_constructs.retention import retention


class NetworkStack(cdk.Stack):
    """VPC, training subnet (sized by cdk.json), the Lustre and endpoint security groups (each workload stack adds its
    own EFA-ready job group and the rules that admit it), VPC endpoints, flow logs."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Environment,
                 removal_policy: cdk.RemovalPolicy, pulled_repositories: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description=f"Training platform network ({settings.name})", **kwargs)
        self.network = TrainingNetwork(
            self, "Network",
            availability_zone=settings.availability_zone, availability_zone_id=settings.availability_zone_id,
            vpc_cidr=settings.vpc_cidr, training_subnet_mask=settings.training_subnet_mask,
            nat_gateway=settings.nat_gateway, lustre=settings.has_fsx,
            external_data_buckets=settings.external_data_buckets,
            # The repositories of other accounts the workloads pull, from the plan (a spec change updates the policy
            # in place).
            pulled_repositories=list(pulled_repositories),
            flow_log_retention=retention(settings.log_retention_days),
            removal_policy=removal_policy,
        )
        # DNS firewall (docs/security.md): the names jobs need, then BLOCK (production) or ALERT (elsewhere) by default.
        firewall = settings.dns_firewall
        self.dns_firewall: TrainingDnsFirewall | None = None
        if firewall.mode != "off":
            self.dns_firewall = TrainingDnsFirewall(
                self, "DnsFirewall", vpc=self.network.vpc, region=settings.region, name=f"training-{settings.name}",
                settings=firewall, log_key=self.network.flow_log_key,
                log_retention=retention(settings.log_retention_days), removal_policy=removal_policy)
        # Restricting the default security group: the CDK's provider function, logged with the flow logs' key (the
        # environment key's Storage stack depends on this one).
        provider_functions_log_to_own_groups(self, key=self.network.flow_log_key,
                                             retention=retention(settings.log_retention_days),
                                             removal_policy=removal_policy)
