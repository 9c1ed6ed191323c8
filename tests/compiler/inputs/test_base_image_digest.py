"""A project image's base may be pinned by digest: the build pulls `<DLC URI>@sha256:...`, and a malformed digest
is refused naming the field. The digest form is the OCI image spec's (descriptor.md: sha256 and 64 lowercase hex);
the DLC URI is the one the SDK resolves (763104351884 publishes the Deep Learning Containers in us-east-1)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from compiler.errors import SpecError
from compiler.inputs.image_builds import IMAGES_KEY, image_builds
from compiler.inputs.project import Project
from tests.project import ROOT

DIGEST = "sha256:" + "0123456789abcdef" * 4


def project_with_base(root: Path, **base_changes: object) -> Project:
    settings = json.loads((ROOT / "cdk.json").read_text())
    images = copy.deepcopy(settings["context"][IMAGES_KEY])
    images["gpt-trainer"]["base_image"].update(base_changes)
    settings["context"][IMAGES_KEY] = images
    (root / "cdk.json").write_text(json.dumps(settings))
    shutil.copy(ROOT / "cdk.context.json", root / "cdk.context.json")
    (root / "training").mkdir()
    (root / "training" / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    return Project(root)


def test_a_digest_pins_the_base_image(tmp_path: Path) -> None:
    uri = image_builds(project_with_base(tmp_path, digest=DIGEST), ["us-east-1"])["gpt-trainer"].base_image.uri("us-east-1")
    assert uri.startswith("763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.8.0-gpu-py312")
    assert uri.endswith("@" + DIGEST)


def test_without_a_digest_the_base_is_the_tag(tmp_path: Path) -> None:
    uri = image_builds(project_with_base(tmp_path), ["us-east-1"])["gpt-trainer"].base_image.uri("us-east-1")
    assert "@" not in uri and uri.startswith("763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:")


@pytest.mark.parametrize("digest", [DIGEST[:-1], DIGEST + "0", DIGEST.upper(), "sha512:" + "0" * 128, "0" * 64])
def test_a_malformed_digest_is_refused_naming_the_field(tmp_path: Path, digest: str) -> None:
    with pytest.raises(SpecError) as caught:
        image_builds(project_with_base(tmp_path, digest=digest), ["us-east-1"])
    fields = [p.field for p in caught.value.problems]
    assert fields == [f"context.{IMAGES_KEY}.gpt-trainer.base_image.digest"], fields
    assert "docker buildx imagetools inspect" in str(caught.value)
