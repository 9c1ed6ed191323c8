"""Image URIs and the repositories the execution role must be allowed to pull from."""

from __future__ import annotations

import pytest

from compiler.compilation.images import ecr_repository_arn, image_uri, pulled_repositories


@pytest.mark.parametrize("uri,arn", [
    ("763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3.0-gpu-py311",
     "arn:aws:ecr:us-west-2:763104351884:repository/pytorch-training"),
    ("727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/pytorch-training:2.3.0-gpu-py311",
     "arn:aws-cn:ecr:cn-north-1:727897471807:repository/pytorch-training"),
    ("111111111111.dkr.ecr.eu-west-1.amazonaws.com/team/trainer@sha256:abc",
     "arn:aws:ecr:eu-west-1:111111111111:repository/team/trainer"),
    ("${ImageUri_gpt_trainer}", None),
    ("docker.io/library/python:3.11", None),
])
def test_ecr_repository_arn(uri, arn):
    assert ecr_repository_arn(uri) == arn


def test_pulled_repositories_follow_the_resolved_images(make):
    torch = make()
    hf = make(framework="huggingface", framework_version=..., py_version="py312", transformers_version="4.56.2",
              pytorch_version="2.8.0", distribution={})
    ours = make(framework_version=..., py_version=..., image={"repository": "gpt-trainer"})
    arns = pulled_repositories([image_uri(w, "eu-west-1") for w in (torch, hf, ours, torch)])
    assert arns == sorted({ecr_repository_arn(image_uri(w, "eu-west-1")) for w in (torch, hf)})
    assert len(arns) == 2 and all(":eu-west-1:" in a for a in arns)
