"""The registry stack of one environment: one ECR repository per image this project builds, and its build."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_kms as kms
from constructs import Construct

from compiler.inputs.environments import Environment
from compiler.inputs.image_builds import ImageBuild
from platform_constructs.registry import TrainingImageRepository
from platform_constructs.retention import retention


def construct_id(repository: str) -> str:
    """A stable construct id for a repository name (gpt-trainer -> GptTrainer)."""
    return "".join(part.capitalize() for part in repository.replace("/", "-").replace(".", "-").replace("_", "-")
                   .split("-"))


class RegistryStack(cdk.Stack):
    """The images of cdk.json's `training-platform:images`, each built from its folder at `cdk deploy`."""

    def __init__(self, scope: Construct, construct_id_: str, *, settings: Environment, key: kms.IKey,
                 images: Mapping[str, ImageBuild], removal_policy: cdk.RemovalPolicy, **kwargs: Any) -> None:
        super().__init__(scope, construct_id_, description=f"Training platform images ({settings.name})", **kwargs)
        self.images: dict[str, TrainingImageRepository] = {
            name: TrainingImageRepository(
                self, construct_id(name), encryption_key=key, build_context=build.build_context,
                dockerfile=build.dockerfile, build_args={"BASE_IMAGE": build.base_image.uri(settings.region)},
                removal_policy=removal_policy, log_retention=retention(settings.log_retention_days),
                exclude=build.excludes,
            )
            for name, build in sorted(images.items())
        }
