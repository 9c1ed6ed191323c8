"""The training network: one pinned Availability Zone, EFA-ready security group, Lustre rules, endpoints.

Why one AZ: EFA and NCCL traffic between training nodes, and Lustre traffic to the file system, must not cross
zones (latency and cross-AZ charges), and GPU capacity is reserved per AZ *ID*, so the zone can be pinned by ID.
Why endpoints: jobs run without public internet; S3 goes through a gateway endpoint (free), the other AWS APIs
a job calls through interface endpoints in the same single zone. A NAT gateway only where an environment asks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import aws_cdk as cdk
import jsii
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_logs as logs
from constructs import Construct

from platform_constructs import guards
from compiler.catalog import CATALOG, InstanceType, ips_per_instance

# Until workloads say otherwise: four p5.48xlarge nodes, twice (a retry starts before the old ENIs are released).
DEFAULT_TRAINING_IPS = 2 * 4 * ips_per_instance(CATALOG["ml.p5.48xlarge"])
AWS_RESERVED_IPS = 5  # per subnet: network, router, DNS, future use, broadcast
FILE_SYSTEM_RESERVED_IPS = 32  # conservative allowance for the FSx for Lustre file servers' interfaces
LARGEST_TRAINING_SUBNET_MASK = 24  # never smaller than a /24: cheap, and leaves room for growth
_SELECTION_FIELDS = ("availability_zones", "one_per_az", "subnet_filters", "subnet_group_name", "subnets", "subnet_type")

# What a training job calls besides S3: image pulls, logs, metrics, credentials, the SageMaker API.
DEFAULT_INTERFACE_ENDPOINTS: dict[str, ec2.InterfaceVpcEndpointAwsService] = {
    "EcrApi": ec2.InterfaceVpcEndpointAwsService.ECR,
    "EcrDocker": ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER,
    "Logs": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
    "Monitoring": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,
    "Sts": ec2.InterfaceVpcEndpointAwsService.STS,
    "SageMakerApi": ec2.InterfaceVpcEndpointAwsService.SAGEMAKER_API,
}


def training_subnet_mask(required_private_ips: int, interface_endpoints: int, file_system: bool) -> int:
    """The CIDR mask of a training subnet that holds the jobs' IPs plus endpoints, FSx and AWS's reserved five."""
    if required_private_ips < 1:
        raise ValueError(f"required_private_ips must be at least 1, not {required_private_ips}")
    needed = required_private_ips + AWS_RESERVED_IPS + interface_endpoints
    needed += FILE_SYSTEM_RESERVED_IPS if file_system else 0
    host_bits = math.ceil(math.log2(needed))
    return min(LARGEST_TRAINING_SUBNET_MASK, 32 - host_bits)


@jsii.implements(ec2.IConnectable)
class TrainingNetwork(Construct):
    """A VPC (or your VPC) prepared for multi-node SageMaker training in one Availability Zone.

    Exposes `vpc`, `training_subnets` (the job network), `security_group` (EFA-ready, for jobs),
    `file_system_security_group` (for FSx, when `lustre`), `endpoints` and `connections`.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        availability_zone: str | None = None,
        availability_zone_id: str | None = None,
        vpc_cidr: str = "10.0.0.0/16",
        required_private_ips: int = DEFAULT_TRAINING_IPS,
        nat_gateway: bool = False,
        s3_gateway_endpoint: bool = True,
        interface_endpoints: dict[str, ec2.InterfaceVpcEndpointAwsService] | None = None,
        lustre: bool = True,
        flow_log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR,
        removal_policy: cdk.RemovalPolicy = cdk.RemovalPolicy.RETAIN,
        vpc: ec2.IVpc | None = None,
        training_subnets: ec2.SubnetSelection | None = None,
        security_group: ec2.ISecurityGroup | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        endpoints = DEFAULT_INTERFACE_ENDPOINTS if interface_endpoints is None else interface_endpoints
        self.availability_zone_id = availability_zone_id
        if vpc is None:
            vpc = self._create_vpc(
                availability_zone, availability_zone_id, vpc_cidr, nat_gateway,
                training_subnet_mask(required_private_ips, len(endpoints), lustre),
            )
        self.vpc = vpc
        default_type = ec2.SubnetType.PRIVATE_WITH_EGRESS if nat_gateway else ec2.SubnetType.PRIVATE_ISOLATED
        selection = training_subnets or ec2.SubnetSelection(subnet_type=default_type)
        self.training_subnets: list[ec2.ISubnet] = list(vpc.select_subnets(
            **{k: getattr(selection, k) for k in _SELECTION_FIELDS if getattr(selection, k) is not None}
        ).subnets)
        if not self.training_subnets:
            raise ValueError(f"{self.node.path}: training_subnets selects no subnet of the VPC; select one subnet")
        job_subnets = ec2.SubnetSelection(subnets=self.training_subnets)

        # Jobs: all traffic to and from the group itself (EFA), HTTPS out (endpoints, S3 gateway, NAT if any).
        self.security_group = security_group or ec2.SecurityGroup(
            self, "TrainingSecurityGroup", vpc=vpc, allow_all_outbound=False,
            description="SageMaker training jobs: EFA all-traffic self rules, HTTPS out, Lustre to the file system",
        )
        self.security_group.add_ingress_rule(self.security_group, ec2.Port.all_traffic(), "EFA: from the job's nodes")
        self.security_group.add_egress_rule(self.security_group, ec2.Port.all_traffic(), "EFA: to the job's nodes")
        self.security_group.add_egress_rule(
            ec2.Peer.any_ipv4(), ec2.Port.tcp(443),
            "HTTPS to AWS APIs; routes allow only the VPC endpoints (and a NAT gateway where enabled)",
        )
        self.connections = ec2.Connections(security_groups=[self.security_group])

        self.file_system_security_group: ec2.ISecurityGroup | None = None
        if lustre:
            self.file_system_security_group = self._lustre_rules(vpc)

        self.endpoints: dict[str, ec2.IVpcEndpoint] = {}
        if s3_gateway_endpoint:
            self.endpoints["S3"] = vpc.add_gateway_endpoint(
                "S3Endpoint", service=ec2.GatewayVpcEndpointAwsService.S3, subnets=[job_subnets],
            )
        if endpoints:
            endpoint_group = ec2.SecurityGroup(
                self, "EndpointSecurityGroup", vpc=vpc, allow_all_outbound=False,
                description="Interface endpoints of the training network: HTTPS from training jobs only",
            )
            endpoint_group.add_ingress_rule(self.security_group, ec2.Port.tcp(443), "HTTPS from training jobs")
            for name, service in endpoints.items():
                self.endpoints[name] = vpc.add_interface_endpoint(
                    f"{name}Endpoint", service=service, subnets=job_subnets, private_dns_enabled=True,
                    security_groups=[endpoint_group], open=False,
                )

        log_group = logs.LogGroup(self, "FlowLogs", retention=flow_log_retention, removal_policy=removal_policy)
        self.flow_log = ec2.FlowLog(
            self, "FlowLog", resource_type=ec2.FlowLogResourceType.from_vpc(vpc),
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(log_group), traffic_type=ec2.FlowLogTrafficType.ALL,
        )

        guards.add_guard(self, lambda: guards.single_zone_problems({"training subnets": self.training_subnets}))
        guards.add_guard(self, lambda: guards.efa_self_rule_problems(self.security_group))
        guards.add_guard(self, lambda: guards.s3_route_problems(self.training_subnets))
        if self.file_system_security_group is not None:
            fs_group = self.file_system_security_group
            guards.add_guard(self, lambda: guards.lustre_port_problems(self.security_group, fs_group))

    @property
    def training_subnet(self) -> ec2.ISubnet:
        """The subnet jobs and the file system use (the first, and normally only, training subnet)."""
        return self.training_subnets[0]

    def _create_vpc(
        self, name: str | None, zone_id: str | None, cidr: str, nat_gateway: bool, mask: int,
    ) -> ec2.Vpc:
        stack = cdk.Stack.of(self)
        known = [z for z in stack.availability_zones if not cdk.Token.is_unresolved(z) and not z.startswith("dummy")]
        if name is not None and known and name not in known:
            raise ValueError(
                f"{self.node.path}: Availability Zone {name} is not one of {stack.region}'s zones for account "
                f"{stack.account} ({', '.join(known)}). Fix availability_zone in cdk.json, or refresh the cached "
                f"lookup 'availability-zones:account={stack.account}:region={stack.region}' in cdk.context.json."
            )
        label = name or (known[0] if known else zone_id) or "pinned-zone"
        subnets = [ec2.SubnetConfiguration(
            name="Training",
            subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS if nat_gateway else ec2.SubnetType.PRIVATE_ISOLATED,
            cidr_mask=mask,
        )]
        if nat_gateway:
            subnets.insert(0, ec2.SubnetConfiguration(name="Egress", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=28))
        vpc = ec2.Vpc(
            self, "Vpc", ip_addresses=ec2.IpAddresses.cidr(cidr), availability_zones=[label],
            nat_gateways=1 if nat_gateway else 0, subnet_configuration=subnets,
            restrict_default_security_group=True,
        )
        if zone_id is not None:
            # Capacity is per AZ ID; names map to different zones in different accounts. The ID wins.
            for subnet in [*vpc.public_subnets, *vpc.private_subnets, *vpc.isolated_subnets]:
                cfn = subnet.node.default_child
                assert isinstance(cfn, ec2.CfnSubnet)
                cfn.availability_zone = None
                cfn.availability_zone_id = zone_id
        return vpc

    def _lustre_rules(self, vpc: ec2.IVpc) -> ec2.SecurityGroup:
        """The file system's group, and TCP 988 + 1018-1023 between it and the jobs, both ways."""
        fs_group = ec2.SecurityGroup(
            self, "FileSystemSecurityGroup", vpc=vpc, allow_all_outbound=False,
            description="FSx for Lustre: Lustre ports with training jobs and between file servers",
        )
        for port, what in ((ec2.Port.tcp(988), "Lustre"), (ec2.Port.tcp_range(1018, 1023), "Lustre")):
            self.security_group.add_egress_rule(fs_group, port, f"{what} to the file system")
            self.security_group.add_ingress_rule(fs_group, port, f"{what} from the file system")
            fs_group.add_ingress_rule(self.security_group, port, f"{what} from training jobs")
            fs_group.add_egress_rule(self.security_group, port, f"{what} to training jobs")
            fs_group.add_ingress_rule(fs_group, port, f"{what} between file servers")
            fs_group.add_egress_rule(fs_group, port, f"{what} between file servers")
        fs_group.add_egress_rule(
            ec2.Peer.any_ipv4(), ec2.Port.tcp(443), "HTTPS to S3 for the data repository association (gateway route)",
        )
        return fs_group



def required_private_ips(jobs: Iterable[tuple[InstanceType, int]], headroom: int = 2) -> int:
    """Private IPs the training subnet must hold: the largest job (EFA instances take >= 5 each) x headroom.

    Headroom, because a retried or queued job can start before the previous job's interfaces are released.
    """
    largest = max((ips_per_instance(instance) * count for instance, count in jobs), default=0)
    return largest * headroom if largest else DEFAULT_TRAINING_IPS
