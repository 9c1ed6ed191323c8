"""Training image URIs: an AWS framework image resolved by the SDK for the environment's region,
an explicit URI, or an image this project builds into its own ECR repository (a deploy-time placeholder).

Only framework images need the SageMaker SDK, and it is imported here, lazily, so `validate` stays fast.
"""

from __future__ import annotations

import logging
import os
import re
from functools import cache

from compiler import placeholders
from compiler.spec import Workload


@cache
def _framework_image(framework: str, region: str, version: str, py_version: str, instance_type: str,
                     distribution_key: str, base_framework_version: str | None) -> str:
    import json

    os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    for noisy in ("sagemaker", "sagemaker.config", "botocore.credentials"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    from sagemaker import image_uris

    distribution = json.loads(distribution_key)
    return image_uris.get_training_image_uri(
        region=region,
        framework=framework,
        framework_version=version,
        py_version=py_version,
        instance_type=instance_type,
        distribution=distribution or None,
        **({"pytorch_version": base_framework_version.removeprefix("pytorch")}
           if framework == "huggingface" and base_framework_version and base_framework_version.startswith("pytorch")
           else {}),
        **({"tensorflow_version": base_framework_version.removeprefix("tensorflow")}
           if framework == "huggingface" and base_framework_version and base_framework_version.startswith("tensorflow")
           else {}),
    )


def image_uri(workload: Workload, region: str) -> str:
    """The TrainingImage for this workload in this region (a placeholder for project-built images)."""
    image = workload.image
    if image.kind == "uri":
        assert image.uri is not None
        return image.uri
    if image.kind == "repository":
        assert image.repository is not None
        if image.tag:
            return placeholders.ref(placeholders.repository_key(image.repository)) + ":" + image.tag
        return placeholders.ref(placeholders.image_uri_key(image.repository))
    import json

    if workload.framework == "huggingface":
        base = ("pytorch" + workload.pytorch_version) if workload.pytorch_version else (
            "tensorflow" + str(workload.tensorflow_version))
        version = str(workload.transformers_version)
    else:
        base, version = None, str(workload.framework_version)
    try:
        return _framework_image(
            workload.framework, region, version, str(workload.py_version), workload.instance_type,
            json.dumps(workload.distribution, sort_keys=True), base,
        )
    except ValueError as exc:  # the SDK has no such image (e.g. a GPU PyTorch version on Trainium)
        from compiler.errors import Problem, SpecError

        raise SpecError(Problem(
            str(workload.path), "framework_version",
            f"the SageMaker SDK has no {workload.framework} {version} ({workload.py_version}) training image for "
            f"{workload.instance_type} in {region}: {exc} Pick a version it lists, or give image_uri.",
        )) from None


_ECR_URI = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?P<cn>\.cn)?/(?P<repo>[^:@]+)[:@].+$"
)


def ecr_repository_arn(uri: str) -> str | None:
    """The ECR repository ARN an image URI pulls from (None for placeholders and non-ECR registries).

    The execution role may pull only from repositories that some workload uses: these ARNs scope it.
    """
    match = _ECR_URI.match(uri)
    if match is None:
        return None
    partition = "aws-cn" if match["cn"] else "aws"
    return f"arn:{partition}:ecr:{match['region']}:{match['account']}:repository/{match['repo']}"


def pulled_repositories(workloads: list[Workload], region: str) -> list[str]:
    """Every external ECR repository the workloads' images come from in a region, sorted, once each."""
    arns = {ecr_repository_arn(image_uri(w, region)) for w in workloads if w.image.kind != "repository"}
    return sorted(a for a in arns if a)
