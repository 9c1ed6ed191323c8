"""The training network: one pinned Availability Zone, EFA-ready job security groups, Lustre rules, endpoints.

Why one AZ: EFA and NCCL traffic between training nodes, and Lustre traffic to the file system, must not cross
zones (latency and cross-AZ charges), and GPU capacity is reserved per AZ *ID*, so the zone can be pinned by ID.
Why endpoints: jobs run without public internet; S3 goes through a gateway endpoint (free), the other AWS APIs
a job calls through interface endpoints in the same single zone. A NAT gateway only where an environment asks.
Every endpoint has a policy (`compiler.facts.endpoint_policies`): this account's principals on this account's resources,
plus the AWS-owned ones a job needs.
Why one job security group per workload: EFA needs a group that allows all traffic to and from itself, so every
node in that group reaches every other one on every port (MPI's sshd, torchrun's store). A group per workload
holds only that workload's nodes; the file system's and the endpoints' groups admit each workload's group. The
group and those rules live in the workload's stack (`job_security_group(scope, ...)`), so adding or removing a
workload never changes the network stack nor an export another stack still imports.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from compiler.compilation.network import INTERFACE_ENDPOINT_SERVICES
from compiler.facts import endpoint_policies
from compiler.inputs.environments import DEFAULT_TRAINING_SUBNET_MASK
from platform_constructs import guards
from platform_constructs.keys import environment_key
from platform_constructs.removal import RETAIN

_SELECTION_FIELDS = ("availability_zones", "one_per_az", "subnet_filters", "subnet_group_name", "subnets", "subnet_type")

# What a training job calls besides S3 (image pulls, logs, metrics, credentials, the SageMaker API, secrets). The service list
# is the compiler's (`compiler.compilation.network`), which budgets the subnet's addresses for them; the construct ids here are
# stable names (a changed id would replace the endpoint).
_ENDPOINT_IDS = {"ecr.api": "EcrApi", "ecr.dkr": "EcrDocker", "logs": "Logs", "monitoring": "Monitoring", "sts": "Sts",
                 "sagemaker.api": "SageMakerApi", "secretsmanager": "SecretsManager"}
DEFAULT_INTERFACE_ENDPOINTS: dict[str, ec2.InterfaceVpcEndpointAwsService] = {
    _ENDPOINT_IDS[service]: ec2.InterfaceVpcEndpointAwsService(service) for service in INTERFACE_ENDPOINT_SERVICES
}
# Amazon VPC User Guide, "Amazon VPC quotas": inbound or outbound rules per security group, 60 by default (adjustable).
RULES_PER_GROUP = 60
# FSx for Lustre User Guide, "File system access control with Amazon VPC": TCP 988 and 1018-1023.
LUSTRE_PORTS = tuple(ec2.Port.tcp(low) if low == high else ec2.Port.tcp_range(low, high)
                     for low, high in guards.LUSTRE_PORTS)  # the guards' ports, as rules
# Value objects every job group's rules share (made once: each is a call into the CDK's JavaScript).
ALL_TRAFFIC, HTTPS, ANYWHERE_IPV4 = ec2.Port.all_traffic(), ec2.Port.tcp(443), ec2.Peer.any_ipv4()


class TrainingNetwork(Construct):
    """A VPC (or your VPC) prepared for multi-node SageMaker training in one Availability Zone.

    Exposes `vpc`, `training_subnets` (the job network), `file_system_security_group` (for FSx, when `lustre`),
    `endpoint_security_group` (when there are interface endpoints), `endpoints`, and `job_security_group()`, which
    makes one workload's EFA-ready group.

    With `endpoint_policies` (the default), each endpoint admits only this account's principals on this account's
    resources; `external_data_buckets` (read only) and `pulled_repositories` (ECR repository ARNs of other
    accounts, such as AWS's Deep Learning Containers) are the exceptions a workload may need.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        availability_zone: str | None = None,
        availability_zone_id: str | None = None,
        vpc_cidr: str = "10.0.0.0/16",
        training_subnet_mask: int = DEFAULT_TRAINING_SUBNET_MASK,
        nat_gateway: bool = False,
        s3_gateway_endpoint: bool = True,
        interface_endpoints: dict[str, ec2.InterfaceVpcEndpointAwsService] | None = None,
        lustre: bool = True,
        endpoint_policies: bool = True,
        external_data_buckets: Sequence[str] = (),
        pulled_repositories: Sequence[str] = (),
        flow_log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR,
        flow_log_key: kms.IKey | None = None,
        removal_policy: cdk.RemovalPolicy = RETAIN,
        vpc: ec2.IVpc | None = None,
        training_subnets: ec2.SubnetSelection | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        # Rules per direction on the network's groups (the file system's own: between file servers, and FSx's).
        self._rule_counts = {"endpoints": 0, "file system": 3}
        endpoints = DEFAULT_INTERFACE_ENDPOINTS if interface_endpoints is None else interface_endpoints
        self.availability_zone_id = availability_zone_id
        if vpc is None:
            vpc = self._create_vpc(availability_zone, availability_zone_id, vpc_cidr, nat_gateway, training_subnet_mask)
        self.vpc = vpc
        default_type = ec2.SubnetType.PRIVATE_WITH_EGRESS if nat_gateway else ec2.SubnetType.PRIVATE_ISOLATED
        selection = training_subnets or ec2.SubnetSelection(subnet_type=default_type)
        self.training_subnets: list[ec2.ISubnet] = list(vpc.select_subnets(
            **{k: getattr(selection, k) for k in _SELECTION_FIELDS if getattr(selection, k) is not None}
        ).subnets)
        if not self.training_subnets:
            raise ValueError(f"{self.node.path}: training_subnets selects no subnet of the VPC; select one subnet")
        job_subnets = ec2.SubnetSelection(subnets=self.training_subnets)

        self.file_system_security_group: ec2.ISecurityGroup | None = None
        if lustre:
            self.file_system_security_group = self._lustre_rules(vpc)

        self.endpoints: dict[str, ec2.IVpcEndpoint] = {}
        self._services: dict[str, str] = {}
        if s3_gateway_endpoint:
            self.endpoints["S3"] = vpc.add_gateway_endpoint(
                "S3Endpoint", service=ec2.GatewayVpcEndpointAwsService.S3, subnets=[job_subnets],
            )
        self.endpoint_security_group: ec2.ISecurityGroup | None = None
        if endpoints:
            endpoint_group = ec2.SecurityGroup(
                self, "EndpointSecurityGroup", vpc=vpc, allow_all_outbound=False,
                description="Interface endpoints of the training network: HTTPS from training jobs only",
            )
            self.endpoint_security_group = endpoint_group
            for name, service in endpoints.items():
                self._services[name] = service.short_name
                self.endpoints[name] = vpc.add_interface_endpoint(
                    f"{name}Endpoint", service=service, subnets=job_subnets, private_dns_enabled=True,
                    security_groups=[endpoint_group], open=False,
                )
        if endpoint_policies:
            self._add_endpoint_policies(external_data_buckets, pulled_repositories)

        # The environment's data key lives in the Storage stack, which depends on this one: the flow logs get a key of
        # this stack (one more key, rather than a dependency cycle or moving the data key and what it encrypts).
        self.flow_log_key = flow_log_key or environment_key(
            self, "FlowLogsKey", removal_policy=removal_policy, description="Training platform: VPC flow logs")
        self.flow_log_group = logs.LogGroup(self, "FlowLogs", retention=flow_log_retention,
                                            encryption_key=self.flow_log_key, removal_policy=removal_policy)
        stack = cdk.Stack.of(self)
        # The flow-logs service may write for this account's flow logs only (confused-deputy protection).
        flow_role = iam.Role(self, "FlowLogRole", description="VPC flow logs of the training network",
                             assumed_by=iam.ServicePrincipal("vpc-flow-logs.amazonaws.com", conditions={
                                 "StringEquals": {"aws:SourceAccount": stack.account},
                                 "ArnLike": {"aws:SourceArn": stack.format_arn(service="ec2", resource="vpc-flow-log",
                                                                               resource_name="*")}}))
        self.flow_log = ec2.FlowLog(
            self, "FlowLog", resource_type=ec2.FlowLogResourceType.from_vpc(vpc),
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(self.flow_log_group, flow_role),
            traffic_type=ec2.FlowLogTrafficType.ALL,
        )

        guards.add_guard(self, lambda: guards.single_zone_problems({"training subnets": self.training_subnets}))
        guards.add_guard(self, lambda: guards.s3_route_problems(self.training_subnets))

    def job_security_group(self, scope: Construct, construct_id: str, *, workload: str, lustre: bool = True,
                           security_group: ec2.ISecurityGroup | None = None) -> ec2.ISecurityGroup:
        """One workload's job group, in `scope` (the workload's construct): all traffic to and from itself (EFA),
        HTTPS out, and with `lustre` (a workload that reads FSx) Lustre both ways with the file system; the
        endpoints' group, and the file system's for `lustre`, admit it.

        Rules on the network's groups are written in the job group's stack (CDK's remote rules), which depends on
        the network stack, never the reverse. A group may hold 60 rules per direction by default (VPC quotas,
        adjustable), and each workload adds one to the endpoints' group and two per direction to the file
        system's. `security_group` brings a group of yours (mutable) instead.
        """
        group = security_group or ec2.SecurityGroup(
            scope, construct_id, vpc=self.vpc, allow_all_outbound=False,
            description=f"Training jobs of workload {workload}: EFA all-traffic self rules, HTTPS out, Lustre if it "
                        "reads FSx",
        )
        # Rule descriptions take a-z, A-Z, 0-9, spaces and ._-:/()#,@[]+=&;{}!$* (EC2 API reference, IpRange): no quotes.
        group.add_ingress_rule(group, ALL_TRAFFIC, "EFA: from the nodes of the job")
        group.add_egress_rule(group, ALL_TRAFFIC, "EFA: to the nodes of the job")
        group.add_egress_rule(
            ANYWHERE_IPV4, HTTPS,
            "HTTPS to AWS APIs; routes allow only the VPC endpoints (and a NAT gateway where enabled)",
        )
        if self.endpoint_security_group is not None:
            self.endpoint_security_group.add_ingress_rule(group, HTTPS, f"HTTPS from jobs of {workload}",
                                                          remote_rule=True)
            self._count_rule("endpoints", 1)
        fs_group = self.file_system_security_group
        if fs_group is not None and lustre:
            for port in LUSTRE_PORTS:
                group.add_egress_rule(fs_group, port, "Lustre to the file system")
                group.add_ingress_rule(fs_group, port, "Lustre from the file system")
                fs_group.add_ingress_rule(group, port, f"Lustre from jobs of {workload}", remote_rule=True)
                fs_group.add_egress_rule(group, port, f"Lustre to jobs of {workload}", remote_rule=True)
            self._count_rule("file system", len(LUSTRE_PORTS))
            guards.add_guard(scope, lambda: guards.lustre_rule_problems(group, fs_group))
        guards.add_guard(scope, lambda: guards.efa_self_rule_problems(group))
        return group

    def _count_rule(self, group: str, rules: int) -> None:
        """Warn once a network group passes the default rules-per-group quota: the deploy fails there unless the
        account's quota was raised."""
        counts = self._rule_counts
        before = counts[group]
        counts[group] = before + rules
        if before <= RULES_PER_GROUP < counts[group]:
            cdk.Annotations.of(self).add_warning_v2(
                f"training-platform:rules-{group.replace(' ', '-')}",
                f"the {group} security group now admits more than {RULES_PER_GROUP} rules per direction (one per "
                "workload for the endpoints, two per FSx reader for the file system), the default quota 'Inbound or "
                "outbound rules per security group' (Amazon VPC quotas): raise it for the account before deploying, "
                "or split the workloads across environments")

    def _add_endpoint_policies(self, external_buckets: Sequence[str], repositories: Sequence[str]) -> None:
        stack = cdk.Stack.of(self)
        where = {"partition": stack.partition, "region": stack.region, "account": stack.account}
        for name, endpoint in self.endpoints.items():
            if isinstance(endpoint, ec2.GatewayVpcEndpoint):
                statements = endpoint_policies.s3_gateway(**where, external_buckets=external_buckets)
            else:
                service = self._services[name]
                try:
                    statements = endpoint_policies.interface(service, **where, pulled_repositories=repositories)
                except ValueError as error:
                    raise ValueError(f"{self.node.path}: {error}, or pass endpoint_policies=False") from None
            for statement in statements:
                endpoint.add_to_policy(iam.PolicyStatement.from_json(statement))

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
        """The file system's group: TCP 988 + 1018-1023 between file servers (each job group adds its own rules)."""
        fs_group = ec2.SecurityGroup(
            self, "FileSystemSecurityGroup", vpc=vpc, allow_all_outbound=False,
            description="FSx for Lustre: Lustre ports with training jobs and between file servers",
        )
        for port in LUSTRE_PORTS:
            fs_group.add_ingress_rule(fs_group, port, "Lustre between file servers")
            fs_group.add_egress_rule(fs_group, port, "Lustre between file servers")
        fs_group.add_egress_rule(
            ANYWHERE_IPV4, HTTPS, "HTTPS to S3 for the data repository association (gateway route)",
        )
        return fs_group
