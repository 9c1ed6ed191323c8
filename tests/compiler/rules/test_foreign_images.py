"""An image_uri of another account is accepted only pinned by a sha256 digest; this account's and AWS's images by tag.

The test environments: dev is account 111111111111 in us-east-1, prod 222222222222 in us-west-2 (tests/project.py).
763104351884 publishes the AWS Deep Learning Containers in us-east-1 (AWS DLC documentation, "Available images").
"""

from __future__ import annotations

import pytest

from compiler.compilation.images import aws_image_accounts, pinned_by_digest
from compiler.inputs.reader import Findings
from compiler.rules import check_in_environment

FOREIGN = "999999999999.dkr.ecr.us-east-1.amazonaws.com/team/trainer"
DIGEST = "sha256:" + "0123456789abcdef" * 4  # 64 lowercase hex digits


def image_problems(make, envs, uri: str, env: str = "dev") -> list[str]:
    findings = Findings("demo.yaml")
    check_in_environment(make(image_uri=uri), envs[env], findings)
    return [p.message for p in findings.problems if p.field == "image_uri"]


@pytest.mark.parametrize(("uri", "reference"), [
    (FOREIGN + ":latest", "latest"),
    (FOREIGN + ":1.0", "1.0"),
    (FOREIGN, "latest"),  # no tag pulls latest
])
def test_a_foreign_image_by_tag_is_refused(make, envs, uri, reference) -> None:
    [message] = image_problems(make, envs, uri)
    assert f"named by {reference!r}" in message
    assert f"{FOREIGN}@sha256:<64 hex digits>" in message
    assert "docker buildx imagetools inspect" in message and "aws ecr describe-images --registry-id 999999999999" in message


@pytest.mark.parametrize("uri", [
    FOREIGN + "@" + DIGEST[:-1],  # 63 hex digits
    FOREIGN + "@" + DIGEST + "0",  # 65
    FOREIGN + "@" + DIGEST.upper().replace("SHA256", "sha256"),  # upper case: not the OCI form
    FOREIGN + "@sha512:" + "0" * 128,
])
def test_a_digest_that_is_not_sha256_and_64_hex_is_refused_as_the_spec_is_read(rejects, uri) -> None:
    rejects("image_uri", "must be an image URI", image_uri=uri)


@pytest.mark.parametrize("uri", [
    FOREIGN + "@" + DIGEST,
    FOREIGN + ":1.0@" + DIGEST,  # a tag and a digest: the digest is pulled
])
def test_a_foreign_image_pinned_by_digest_passes(make, envs, uri) -> None:
    assert image_problems(make, envs, uri) == []


def test_this_accounts_image_by_tag_passes(make, envs) -> None:
    assert image_problems(make, envs, "111111111111.dkr.ecr.us-east-1.amazonaws.com/trainer:latest") == []


def test_the_same_image_is_foreign_in_another_environments_account(make, envs) -> None:
    uri = "111111111111.dkr.ecr.us-west-2.amazonaws.com/trainer:latest"
    [message] = image_problems(make, envs, uri, env="prod")
    assert "account 111111111111 is not environment 'prod''s (222222222222)" in message


def test_an_aws_deep_learning_container_by_tag_passes(make, envs) -> None:
    uri = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker"
    assert image_problems(make, envs, uri) == []


def test_a_framework_image_the_compiler_resolves_is_left_alone(make, envs) -> None:
    findings = Findings("demo.yaml")
    check_in_environment(make(), envs["dev"], findings)
    assert [p for p in findings.problems if p.field == "image_uri"] == []


def test_the_aws_accounts_come_from_the_sdks_catalog() -> None:
    # DLCs (763104351884), SMP (658645717510), the legacy framework images (520713654638) in us-east-1
    assert {"763104351884", "658645717510", "520713654638"} <= aws_image_accounts("us-east-1")
    assert "999999999999" not in aws_image_accounts("us-east-1")


@pytest.mark.parametrize(("uri", "pinned"), [
    ("r@" + DIGEST, True), ("r:t@" + DIGEST, True), ("r@" + DIGEST[:-1], False), ("r:" + DIGEST[7:], False),
])
def test_pinned_by_digest(uri, pinned) -> None:
    assert pinned_by_digest(uri) is pinned
