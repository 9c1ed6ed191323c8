"""The base image reaches the build as a build argument, so its digest is part of the project image's asset hash:
pinning a new digest makes a new image (a new build-<hash> tag), never the old tag over other content."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_kms as kms

from platform_constructs.registry import TrainingImageRepository
from tests.project import ROOT

pytestmark = pytest.mark.synth
TAGGED = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.8.0-gpu-py312-cu129-ubuntu22.04-sagemaker"


def asset_hash(base_image: str) -> str:
    app = cdk.App()
    stack = cdk.Stack(app, "Registry", env=cdk.Environment(account="123456789012", region="us-east-1"))
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    image = TrainingImageRepository(stack, "Trainer", encryption_key=key, build_context=ROOT / "training",
                                    build_args={"BASE_IMAGE": base_image})
    assert image.asset is not None
    return str(image.asset.asset_hash)


def test_the_base_digest_is_in_the_image_identity() -> None:
    one, other = "sha256:" + "0" * 64, "sha256:" + "0" * 63 + "1"
    hashes = {asset_hash(TAGGED), asset_hash(f"{TAGGED}@{one}"), asset_hash(f"{TAGGED}@{other}")}
    assert len(hashes) == 3
    assert asset_hash(f"{TAGGED}@{one}") == asset_hash(f"{TAGGED}@{one}")  # and stable
