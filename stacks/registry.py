"""The registry stack of one environment: the project's ECR repositories and their deploy-time image builds."""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_kms as kms
from constructs import Construct

from platform_constructs.base_image import BaseImage
from platform_constructs.registry import TrainingImageRepository
from compiler.environments import Environment

TRAINING_DIR = Path(__file__).resolve().parents[1] / "training"
GPT_TRAINER = "gpt-trainer"
DOCKERFILE = "Dockerfile"  # in the build context, training/


class RegistryStack(cdk.Stack):
    """One repository per training image (today: gpt-trainer, built from training/docker/Dockerfile)."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Environment, encryption_key: kms.IKey,
                 base_image: BaseImage, build_context: Path | None, removal_policy: cdk.RemovalPolicy,
                 **kwargs) -> None:
        super().__init__(scope, construct_id, description=f"Training platform images ({settings.name})", **kwargs)
        self.images: dict[str, TrainingImageRepository] = {
            GPT_TRAINER: TrainingImageRepository(
                self, "GptTrainer", encryption_key=encryption_key, build_context=build_context,
                dockerfile=DOCKERFILE, build_args={"BASE_IMAGE": base_image.uri}, removal_policy=removal_policy,
            ),
        }


def default_build_context() -> Path | None:
    """training/ when the training image's Dockerfile exists there, else None (repositories without images)."""
    return TRAINING_DIR if (TRAINING_DIR / DOCKERFILE).is_file() else None
