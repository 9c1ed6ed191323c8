"""The VPC endpoints' policies: the training network's perimeter, as plain policy statements.

An endpoint without a policy lets anything in the subnet call the service on any account's resources. These allow
only principals of this account (`aws:PrincipalAccount`, present on every signed request) on this account's
resources, plus the few AWS-owned resources a job needs: the regional bucket that holds ECR image layers, the
repositories of the images the environment's workloads pull (AWS Deep Learning Containers, or another account's
images named by URI), and the external data buckets cdk.json allows (read only). IAM policies still decide what each
role may do; the endpoint policy bounds what any of them can reach from inside the network.

Resource-level ARNs, not `aws:ResourceAccount`, wherever the service has them: a condition key a service does not
send would silently deny every call. S3 supports `aws:ResourceAccount`, which covers every bucket of the account.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

Statement = dict[str, Any]

IMAGE_PULL_ACTIONS = ("ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer")
EXTERNAL_READ_ACTIONS = ("s3:GetBucketLocation", "s3:GetObject", "s3:ListBucket")


def ecr_layer_bucket(partition: str, region: str) -> str:
    """The AWS-owned bucket ECR serves image layers from; image pulls through a gateway endpoint read it."""
    return f"arn:{partition}:s3:::prod-{region}-starport-layer-bucket/*"


def _allow(sid: str, account: str, actions: Iterable[str], resources: Sequence[str],
           conditions: dict[str, dict[str, str]] | None = None) -> Statement:
    condition: dict[str, dict[str, str]] = {"StringEquals": {"aws:PrincipalAccount": account}}
    for operator, values in (conditions or {}).items():
        condition.setdefault(operator, {}).update(values)
    return {"Sid": sid, "Effect": "Allow", "Principal": {"AWS": "*"}, "Action": sorted(actions),
            "Resource": list(resources), "Condition": condition}


def s3_gateway(*, partition: str, region: str, account: str, external_buckets: Sequence[str] = ()) -> list[Statement]:
    statements = [
        _allow("AccountBuckets", account, ["s3:*"], ["*"], {"StringEquals": {"aws:ResourceAccount": account}}),
        _allow("EcrImageLayers", account, ["s3:GetObject"], [ecr_layer_bucket(partition, region)]),
    ]
    if external_buckets:
        resources = [arn for bucket in sorted(external_buckets)
                     for arn in (f"arn:{partition}:s3:::{bucket}", f"arn:{partition}:s3:::{bucket}/*")]
        statements.append(_allow("ExternalDataReadOnly", account, EXTERNAL_READ_ACTIONS, resources))
    return statements


def interface(service: str, *, partition: str, region: str, account: str,
              pulled_repositories: Sequence[str] = ()) -> list[Statement]:
    """The policy of the interface endpoint for `service` (one of compiler.compilation.network.INTERFACE_ENDPOINT_SERVICES)."""
    def arn(service: str, resource: str) -> str:  # not str.format: the partition may be a CDK token "${Token[..]}"
        return f"arn:{partition}:{service}:{region}:{account}:{resource}"

    if service in ("ecr.api", "ecr.dkr"):
        repositories = [arn("ecr", "repository/*"), *sorted(set(pulled_repositories))]
        return [_allow("Authorize", account, ["ecr:GetAuthorizationToken"], ["*"]),
                _allow("PullImages", account, IMAGE_PULL_ACTIONS, repositories)]
    if service == "logs":
        return [_allow("AccountLogGroups", account, ["logs:*"], [arn("logs", "log-group:*")])]
    if service == "monitoring":
        return [_allow("PutMetrics", account, ["cloudwatch:PutMetricData"], ["*"])]
    if service == "sts":
        return [_allow("Identity", account, ["sts:GetCallerIdentity"], ["*"]),
                _allow("AccountRoles", account, ["sts:AssumeRole", "sts:TagSession"],
                       [f"arn:{partition}:iam::{account}:role/*"])]
    if service == "sagemaker.api":
        return [_allow("AccountResources", account, ["sagemaker:*"], [arn("sagemaker", "*")])]
    if service == "secretsmanager":
        # Reading this account's secrets in this region only: a job reads the secrets its spec names (its role
        # holds exactly those ARNs); nothing through the endpoint writes, lists or reads another account's.
        return [_allow("ReadAccountSecrets", account, ["secretsmanager:GetSecretValue"],
                       [arn("secretsmanager", "secret:*")])]
    raise ValueError(f"no endpoint policy for service {service!r}; add one to compiler/facts/endpoint_policies.py")
