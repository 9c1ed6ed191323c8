"""A workload's training image: an AWS framework image or a built-in algorithm resolved for the environment's region,
an explicit URI, or an image this project builds into one of its own ECR repositories (a deploy-time placeholder).

Framework and algorithm images are resolved from the pinned SDK's image catalog without importing the SDK
(`compiler.sdk.framework_images`), so synth and `validate` stay fast.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

from compiler.facts import placeholders
from compiler.inputs.model import SCRIPT_MODE_TABULAR, AlgorithmImage, ProjectImage, UriImage, Workload
from compiler.sdk import sdk_rules
from compiler.sdk.framework_images import cluster_image_instance_type, retrieve, training_image_uri

_ECR_URI = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?P<cn>\.cn)?/(?P<repo>[^:@]+)"
    r"(?::(?P<tag>[^@]+))?(?:@.+)?$"
)


def framework_image(workload: Workload, region: str) -> str:
    """The AWS Deep Learning Container the SDK's estimator would pick; raises ImageNotFound when it has none."""
    e = workload.estimator
    compute = workload.compute
    if e.framework in SCRIPT_MODE_TABULAR:
        # The XGBoost and SKLearn estimators call `image_uris.retrieve(name, region, version=framework_version,
        # py_version=py_version, instance_type=instance_type, ...)` themselves, the instance type as given (None for
        # instance groups).
        return retrieve(e.framework, region, e.framework_version, e.py_version, compute.instance_type)
    return training_image_uri(
        region=region, framework=e.framework, framework_version=e.framework_version, py_version=e.py_version,
        instance_type=compute.instance_type if compute.instance_type is not None
        else cluster_image_instance_type(g.instance_type for g in compute.groups),
        distribution=dict(workload.distribution) or None, tensorflow_version=e.tensorflow_version,
        pytorch_version=e.pytorch_version,
    )


def algorithm_image(image: AlgorithmImage, workload: Workload, region: str) -> str:
    """A built-in algorithm's image in a region: `image_uris.retrieve(algorithm, region, version, instance_type=...)`,
    the guide's call with the job's instance type, which picks the processor where the catalog lists processors (and
    refuses a GPU type for a CPU-only image, as XGBoost 0.90-1 to 1.0-1 are). Raises ImageNotFound."""
    return retrieve(image.algorithm, region, image.version, None, workload.compute.instance_type)


def image_uri(workload: Workload, region: str) -> str:
    """The TrainingImage for this workload in this region (a placeholder for project-built images)."""
    image = workload.image
    if isinstance(image, UriImage):
        return image.uri
    if isinstance(image, ProjectImage):
        if image.tag:
            return placeholders.ref(placeholders.repository_key(image.repository)) + ":" + image.tag
        return placeholders.ref(placeholders.image_uri_key(image.repository))
    if isinstance(image, AlgorithmImage):
        return algorithm_image(image, workload, region)
    return framework_image(workload, region)


def ecr_parts(uri: str) -> dict[str, str] | None:
    """Account, region, partition, repository and tag ("" when the URI names none) of an ECR image URI (None for
    other registries)."""
    match = _ECR_URI.match(uri)
    if match is None:
        return None
    return {"account": match["account"], "region": match["region"], "repository": match["repo"],
            "tag": match["tag"] or "", "partition": "aws-cn" if match["cn"] else "aws"}


# OCI image spec, descriptor.md: a sha256 digest is `sha256:` and 64 lowercase hex digits. `repo:tag@digest` pulls the
# digest (the tag is ignored), so a trailing digest pins the image whatever precedes it.
_DIGEST_SUFFIX = re.compile(r"@sha256:[a-f0-9]{64}$")


def pinned_by_digest(uri: str) -> bool:
    """Whether an image URI names one image for good (a digest), rather than a tag its owner can move."""
    return bool(_DIGEST_SUFFIX.search(uri))


@cache
def aws_image_accounts(region: str) -> frozenset[str]:
    """The AWS accounts that publish the images of the pinned SDK's catalog in a region (Deep Learning Containers,
    SMP, built-in algorithms): `registries` in every `sagemaker/image_uri_config/*.json`."""
    accounts: set[str] = set()
    for path in sorted((sdk_rules.sdk_root() / "image_uri_config").glob("*.json")):
        accounts.update(_registries(json.loads(path.read_text()), region))
    return frozenset(accounts)


def _registries(config: Any, region: str) -> Iterator[str]:
    if isinstance(config, dict):
        registries = config.get("registries")
        if isinstance(registries, dict) and isinstance(registries.get(region), str):
            yield registries[region]
        for value in config.values():
            yield from _registries(value, region)
    elif isinstance(config, list):
        for value in config:
            yield from _registries(value, region)


def ecr_repository_arn(uri: str) -> str | None:
    """The ECR repository ARN an image URI pulls from (None for placeholders and non-ECR registries)."""
    parts = ecr_parts(uri)
    if parts is None:
        return None
    return f"arn:{parts['partition']}:ecr:{parts['region']}:{parts['account']}:repository/{parts['repository']}"


def pulled_repositories(images: Iterable[str]) -> list[str]:
    """Every external ECR repository these training images come from (the pipeline's resolved images; a project
    image's placeholder names none), sorted, once each."""
    arns = {ecr_repository_arn(uri) for uri in images}
    return sorted(a for a in arns if a)
