"""A redeploy (or the rollback of a failed update) re-copies the build onto its existing tag: the repository lets the
copy's tags, and only those, be overwritten, and the copy always writes the asset's own content-addressed tag.

Why (cdklabs/cdk-ecr-deployment#207): the copy fails on an IMMUTABLE repository when the tag exists. ECR's
IMMUTABLE_WITH_EXCLUSION makes tags matching a WILDCARD filter mutable (ECR user guide, "Preventing image tags from
being overwritten in Amazon ECR"); the filter and tag grammar below are the ECR API reference's.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_kms as kms

from platform_constructs.registry import TrainingImageRepository
from tests.platform.conftest import Synth

pytestmark = pytest.mark.synth
ENVS = ("dev", "prod")
# ECR API reference: an image tag is 1-128 characters; ImageTagMutabilityExclusionFilter.filter is [0-9a-zA-Z._*-]{1,128}.
TAG = re.compile(r"[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}")
FILTER = re.compile(r"[0-9a-zA-Z._*-]{1,128}")


def copy_tags(template: dict[str, Any], prop: str) -> list[str]:
    """The tag after the last ':' of each copy's SrcImage or DestImage (the tag is always a literal at the end)."""
    tags = []
    for resource in template["Resources"].values():
        if resource["Type"] == "Custom::CDKECRDeployment":
            parts = resource["Properties"][prop]["Fn::Join"][1]
            last = parts[-1] if isinstance(parts[-1], str) else parts[-1]["Fn::Sub"]
            tags.append(last.rsplit(":", 1)[-1])
    return tags


@pytest.mark.parametrize("env", ENVS)
def test_only_the_copy_tags_may_be_overwritten_and_the_copy_writes_one(synth: Synth, env: str) -> None:
    template = synth.template(env, "Registry")
    (repository,) = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::ECR::Repository"]
    assert repository["ImageTagMutability"] == "IMMUTABLE_WITH_EXCLUSION"
    (exclusion,) = repository["ImageTagMutabilityExclusionFilters"]
    assert exclusion["ImageTagMutabilityExclusionFilterType"] == "WILDCARD"
    pattern = exclusion["ImageTagMutabilityExclusionFilterValue"]
    assert FILTER.fullmatch(pattern)
    for tag in ("latest", "v1.2.0", "2.8.0-gpu-py312", "release-build-1"):  # what people push stays immutable
        assert not fnmatchcase(tag, pattern), tag

    (source,) = copy_tags(template, "SrcImage")
    (destination,) = copy_tags(template, "DestImage")
    assert re.fullmatch(r"[0-9a-f]{64}", source)  # the asset's content hash, immutable in the bootstrap repository
    assert destination == f"build-{source}" and TAG.fullmatch(destination)
    assert fnmatchcase(destination, pattern)  # a re-copy onto the existing tag is allowed


@pytest.mark.parametrize("env", ENVS)
def test_the_immutability_exception_is_acknowledged_on_the_repository_only(synth: Synth, env: str) -> None:
    skipped = {k: [e["id"] for e in r.get("Metadata", {}).get("checkov", {}).get("skip", [])]
               for k, r in synth.template(env, "Registry")["Resources"].items()}
    assert [k for k, ids in skipped.items() if "CKV_AWS_51" in ids] == [
        k for k, r in synth.template(env, "Registry")["Resources"].items() if r["Type"] == "AWS::ECR::Repository"]


def test_workloads_run_the_copied_build_tag(synth: Synth) -> None:
    image = synth.stages["dev"].registry_stack.images["gpt-trainer"]
    assert image.image_tag == f"build-{image.asset.asset_hash}"
    assert str(image.image_uri).endswith(f":build-{image.asset.asset_hash}")


@pytest.mark.parametrize("prefix", ["", "build*", "bad/prefix", "x" * 64])
def test_a_build_tag_prefix_ecr_cannot_filter_stops_synth(tmp_path: Path, prefix: str) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    stack = cdk.Stack(cdk.App(), "Images", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    with pytest.raises(ValueError, match="build_tag_prefix"):
        TrainingImageRepository(stack, "Image", encryption_key=key, build_context=tmp_path, build_tag_prefix=prefix)
