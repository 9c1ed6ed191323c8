"""Each synth-time guard fires on a broken configuration, with a message naming the fix, and not on a good one."""

from __future__ import annotations

import re
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2

from compiler.inputs.environments import FsxSettings
from platform_constructs.lustre import TrainingFileSystem
from platform_constructs.network import TrainingNetwork

pytestmark = pytest.mark.synth
ACCOUNT, REGION = "123456789012", "us-east-1"
ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]
SCRATCH = FsxSettings(deployment_type="SCRATCH_2", storage_capacity_gib=1200)


def tiny_stack() -> tuple[cdk.App, cdk.Stack]:
    app = cdk.App(context={f"availability-zones:account={ACCOUNT}:region={REGION}": ZONES})
    return app, cdk.Stack(app, "Tiny", env=cdk.Environment(account=ACCOUNT, region=REGION))


def synth_errors(app: cdk.App) -> str:
    with pytest.raises(Exception) as caught:
        app.synth()
    return str(caught.value)


def file_system(stack: cdk.Stack, network: TrainingNetwork, **overrides: Any) -> TrainingFileSystem:
    from aws_cdk import aws_kms as kms

    props = {
        "settings": SCRATCH, "vpc": network.vpc, "subnet": network.training_subnet,
        "security_group": network.file_system_security_group, "training_subnets": network.training_subnets,
        "kms_key": kms.Key(stack, "Key", enable_key_rotation=True),
    } | overrides
    return TrainingFileSystem(stack, "Lustre", **props)


def test_a_good_network_and_file_system_pass_every_guard() -> None:
    app, stack = tiny_stack()
    network = TrainingNetwork(stack, "Net", availability_zone="us-east-1a", training_subnet_mask=25)
    file_system(stack, network)
    jobs = cdk.Stack(app, "Jobs", env=cdk.Environment(account=ACCOUNT, region=REGION))  # a workload stack
    network.job_security_group(jobs, "JobGroup", workload="w")
    app.synth()  # raises if any guard fires


def test_guard_training_subnets_in_two_zones() -> None:
    app, stack = tiny_stack()
    vpc = ec2.Vpc(stack, "Shared", max_azs=2, nat_gateways=0, subnet_configuration=[
        ec2.SubnetConfiguration(name="Private", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=24)])
    TrainingNetwork(stack, "Net", vpc=vpc, lustre=False)  # selects the private subnets of both zones
    errors = synth_errors(app)
    assert "ONE Availability Zone, found 2" in errors
    assert "name:us-east-1a" in errors and "name:us-east-1b" in errors
    assert "select subnets of that zone only" in errors


def test_guard_file_system_outside_the_training_zone() -> None:
    app, stack = tiny_stack()
    network = TrainingNetwork(stack, "Net", availability_zone="us-east-1a", training_subnet_mask=25)
    elsewhere = ec2.Subnet(stack, "Elsewhere", vpc_id=network.vpc.vpc_id, availability_zone="us-east-1b",
                           cidr_block="10.0.200.0/24")
    file_system(stack, network, subnet=elsewhere)
    errors = synth_errors(app)
    assert re.search(r"file system: name:us-east-1b", errors)
    assert "put the file system in the training subnet" in errors


def test_guard_efa_self_rules_missing() -> None:
    app, stack = tiny_stack()
    # An imported immutable group silently drops every rule CDK would add: exactly the trap the guard catches.
    frozen = ec2.SecurityGroup.from_security_group_id(stack, "Frozen", "sg-0123456789abcdef0", mutable=False)
    network = TrainingNetwork(stack, "Net", availability_zone="us-east-1a", lustre=False)
    network.job_security_group(stack, "JobGroup", workload="w", security_group=frozen)
    errors = synth_errors(app)
    assert "lacks the EFA self-rule(s) for ingress and egress" in errors
    assert "mutable=True" in errors


def test_guard_lustre_ports_missing() -> None:
    app, stack = tiny_stack()
    network = TrainingNetwork(stack, "Net", availability_zone="us-east-1a", lustre=False)
    job = network.job_security_group(stack, "JobGroup", workload="w")  # no file system group: no Lustre rules
    frozen = ec2.SecurityGroup.from_security_group_id(stack, "FrozenFs", "sg-0fedcba9876543210", mutable=False)
    file_system(stack, network, security_group=frozen, job_security_group=job)
    errors = synth_errors(app)
    assert "Lustre port(s) 988, 1018-1023 not allowed for jobs -> file system" in errors
    assert "file system <- jobs" in errors
    assert "EFA" not in errors  # only the broken part is reported


def test_guard_no_route_to_s3() -> None:
    app, stack = tiny_stack()
    TrainingNetwork(stack, "Net", availability_zone="us-east-1a", s3_gateway_endpoint=False, lustre=False)
    errors = synth_errors(app)
    assert "has no route to S3" in errors
    assert "s3_gateway_endpoint=True" in errors


def test_a_nat_gateway_is_a_route_to_s3_too() -> None:
    app, stack = tiny_stack()
    TrainingNetwork(stack, "Net", availability_zone="us-east-1a", s3_gateway_endpoint=False, nat_gateway=True,
                    lustre=False)
    app.synth()


def test_unknown_zone_for_the_account_names_the_fix() -> None:
    _, stack = tiny_stack()
    with pytest.raises(ValueError, match=r"us-east-1q is not one of us-east-1's zones .*cdk\.context\.json"):
        TrainingNetwork(stack, "Net", availability_zone="us-east-1q")
