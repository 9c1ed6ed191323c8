"""The network stack of one environment: the training VPC pinned to the environment's Availability Zone."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_logs as logs
from constructs import Construct

from platform_constructs.network import TrainingNetwork
from compiler.environments import Environment


class NetworkStack(cdk.Stack):
    """VPC, training subnet, EFA-ready and Lustre security groups, VPC endpoints, flow logs."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Environment, required_private_ips: int,
                 removal_policy: cdk.RemovalPolicy, **kwargs) -> None:
        super().__init__(scope, construct_id, description=f"Training platform network ({settings.name})", **kwargs)
        self.network = TrainingNetwork(
            self, "Network",
            availability_zone=settings.availability_zone, availability_zone_id=settings.availability_zone_id,
            vpc_cidr=settings.vpc_cidr, required_private_ips=required_private_ips,
            nat_gateway=settings.nat_gateway, lustre=settings.has_fsx,
            flow_log_retention=logs.RetentionDays.ONE_YEAR if settings.production else logs.RetentionDays.ONE_MONTH,
            removal_policy=removal_policy,
        )
