"""Every VPC endpoint has a policy, and no statement reaches past the environment's perimeter.

The perimeter, written here independently of the code that builds the policies: a statement admits only this
account's principals; it names this account's resources, or one of the few outside resources a job needs (the
regional ECR layer bucket, the external data buckets cdk.json allows, read only, and the repositories of the images
the environment's workloads run, as their synthesized metadata states). A statement that widens fails here.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2

from platform_constructs.network import TrainingNetwork
from tests.platform.conftest import Synth
from tests.project import ENVIRONMENTS

ENVS = ("dev", "prod")
READ_ONLY_S3 = {"s3:GetObject", "s3:ListBucket", "s3:GetBucketLocation"}
NO_RESOURCE_TYPE = {"ecr:GetAuthorizationToken", "sts:GetCallerIdentity", "cloudwatch:PutMetricData"}
_ECR_IMAGE = re.compile(r"^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com/([^:@]+)")


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def perimeter_problems(statement: dict[str, Any], *, account: str, region: str, external_buckets: set[str],
                       images: set[str]) -> list[str]:
    """Why `statement` reaches past the perimeter (empty when it does not)."""
    problems = []
    actions = set(as_list(statement["Action"]))
    conditions = statement.get("Condition", {}).get("StringEquals", {})
    if statement["Effect"] != "Allow":
        return []  # a Deny only narrows
    if conditions.get("aws:PrincipalAccount") != account:
        problems.append("admits principals of other accounts (no aws:PrincipalAccount condition)")
    if "*" in actions:
        problems.append("allows every action of every service")
    for resource in as_list(statement["Resource"]):
        if resource == "*":
            if conditions.get("aws:ResourceAccount") != account and not actions <= NO_RESOURCE_TYPE:
                problems.append(f"allows {sorted(actions - NO_RESOURCE_TYPE)} on any account's resources")
            continue
        parts = resource.split(":", 5)
        if parts[2] == "s3":
            bucket = parts[5].split("/", 1)[0]
            if bucket == f"prod-{region}-starport-layer-bucket" and actions == {"s3:GetObject"}:
                continue
            if bucket in external_buckets and actions <= READ_ONLY_S3:
                continue
            problems.append(f"allows {sorted(actions)} on bucket {bucket}, which is not this account's")
        elif parts[4] != account:
            if parts[2] == "ecr" and resource in images and actions <= {
                    "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"}:
                continue
            problems.append(f"allows {sorted(actions)} on {resource}, outside account {account}")
    return problems


def workload_images(synthesized_app: Any, env: str) -> set[str]:
    """The ECR repository ARNs of the images the environment's workloads run (from their template metadata)."""
    arns = set()
    for template in synthesized_app.templates[env].values():
        for resource in template.get("Resources", {}).values():
            summary = resource.get("Metadata", {}).get("training-platform:workload")
            match = _ECR_IMAGE.match(summary["image"]) if summary else None
            if match:
                arns.add(f"arn:aws:ecr:{match[2]}:{match[1]}:repository/{match[3]}")
    return arns


def resolved(value: Any) -> Any:
    """`value` with the partition references of a stack without a known partition written as `aws`."""
    if isinstance(value, dict) and set(value) == {"Fn::Join"}:
        separator, parts = value["Fn::Join"]
        return separator.join("aws" if part == {"Ref": "AWS::Partition"} else resolved(part) for part in parts)
    if isinstance(value, dict):
        return {key: resolved(item) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item) for item in value]
    return value


def endpoint_statements(template: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {logical_id: resolved(resource["Properties"].get("PolicyDocument", {}).get("Statement", []))
            for logical_id, resource in template["Resources"].items() if resource["Type"] == "AWS::EC2::VPCEndpoint"}


@pytest.mark.parametrize("env", ENVS)
def test_every_endpoint_has_a_policy_within_the_perimeter(synth: Synth, synthesized_app: Any, env: str) -> None:
    settings = ENVIRONMENTS[env]
    images = workload_images(synthesized_app, env)
    assert images, "the shipped workloads run AWS framework images: the ECR policy must name their repositories"
    endpoints = endpoint_statements(synth.template(env, "Network"))
    assert len(endpoints) == 8  # S3's gateway; ECR API and Docker, Logs, metrics, STS, SageMaker, Secrets Manager
    for logical_id, statements in endpoints.items():
        assert statements, f"{logical_id} has no policy: it admits anything in the subnet to any account"
        for statement in statements:
            assert perimeter_problems(statement, account=settings.account, region=settings.region,
                                      external_buckets=set(settings.external_data_buckets), images=images) == []


@pytest.mark.parametrize("env", ENVS)
def test_image_pulls_reach_the_workloads_images_and_the_layer_bucket(synth: Synth, synthesized_app: Any,
                                                                    env: str) -> None:
    settings = ENVIRONMENTS[env]
    endpoints = endpoint_statements(synth.template(env, "Network"))
    s3 = next(s for key, s in endpoints.items() if "S3Endpoint" in key)
    assert {"Sid": "EcrImageLayers", "Effect": "Allow", "Action": "s3:GetObject", "Principal": {"AWS": "*"},
            "Resource": f"arn:aws:s3:::prod-{settings.region}-starport-layer-bucket/*",
            "Condition": {"StringEquals": {"aws:PrincipalAccount": settings.account}}} in s3
    for key in ("EcrApiEndpoint", "EcrDockerEndpoint"):
        pulls = next(s for k, s in endpoints.items() if key in k)
        resources = {r for statement in pulls for r in as_list(statement["Resource"])}
        assert workload_images(synthesized_app, env) | {
            f"arn:aws:ecr:{settings.region}:{settings.account}:repository/*"} <= resources


@pytest.mark.parametrize("env", ENVS)
def test_the_secrets_manager_endpoint_reads_this_accounts_secrets_in_this_region_only(synth: Synth, env: str) -> None:
    settings = ENVIRONMENTS[env]
    endpoints = endpoint_statements(synth.template(env, "Network"))
    secrets = next(s for k, s in endpoints.items() if "SecretsManagerEndpoint" in k)
    assert secrets == [{"Sid": "ReadAccountSecrets", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
                        "Principal": {"AWS": "*"},
                        "Resource": f"arn:aws:secretsmanager:{settings.region}:{settings.account}:secret:*",
                        "Condition": {"StringEquals": {"aws:PrincipalAccount": settings.account}}}]


# The checker itself: each kind of widening of a real statement is caught.
WIDENINGS = {
    "any principal": lambda s: s["Condition"]["StringEquals"].pop("aws:PrincipalAccount"),
    "any bucket": lambda s: s.update(Resource="*") if s["Sid"] == "EcrImageLayers" else None,
    "another account's logs": lambda s: s.update(Resource="arn:aws:logs:us-west-2:999999999999:log-group:*"),
    "every action": lambda s: s.update(Action="*"),
}


@pytest.mark.parametrize("widening", sorted(WIDENINGS))
def test_the_perimeter_check_catches_a_widened_statement(synth: Synth, widening: str) -> None:
    settings = ENVIRONMENTS["prod"]
    statements = [s for s in endpoint_statements(synth.template("prod", "Network")).values() for s in s]
    target = next(s for s in statements if s["Sid"] in ("EcrImageLayers", "AccountLogGroups"))
    if widening == "another account's logs":
        target = next(s for s in statements if s["Sid"] == "AccountLogGroups")
    widened = copy.deepcopy(target)
    WIDENINGS[widening](widened)
    assert widened != target
    assert perimeter_problems(widened, account=settings.account, region=settings.region, external_buckets=set(),
                              images=set())


def network_policies(**props: Any) -> dict[str, list[dict[str, Any]]]:
    app = cdk.App()
    stack = cdk.Stack(app, "Net", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    TrainingNetwork(stack, "Network", availability_zone="eu-west-1a", lustre=False, **props)
    return endpoint_statements(app.synth().get_stack_by_name("Net").template)


def test_external_data_buckets_are_read_only_through_the_endpoint() -> None:
    policies = network_policies(external_data_buckets=["public-datasets"])
    s3 = next(s for key, s in policies.items() if "S3Endpoint" in key)
    (external,) = [s for s in s3 if s["Sid"] == "ExternalDataReadOnly"]
    assert set(external["Action"]) == READ_ONLY_S3
    assert external["Resource"] == ["arn:aws:s3:::public-datasets", "arn:aws:s3:::public-datasets/*"]
    for statement in s3:
        assert perimeter_problems(statement, account="123456789012", region="eu-west-1",
                                  external_buckets={"public-datasets"}, images=set()) == []
    writable = {**external, "Action": [*external["Action"], "s3:PutObject"]}
    assert perimeter_problems(writable, account="123456789012", region="eu-west-1",
                              external_buckets={"public-datasets"}, images=set())


def test_endpoint_policies_can_be_turned_off_for_a_network_that_has_its_own() -> None:
    policies = network_policies(endpoint_policies=False)
    assert policies and all(statements == [] for statements in policies.values())


def test_an_interface_endpoint_without_a_known_policy_stops_synth() -> None:
    with pytest.raises(ValueError, match=r"no endpoint policy for service 'kms'.*endpoint_policies=False"):
        network_policies(interface_endpoints={"Kms": ec2.InterfaceVpcEndpointAwsService.KMS})
