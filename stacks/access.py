"""The access stack of one environment: the SageMaker execution role."""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_ecr as ecr
from constructs import Construct

from platform_constructs.base_image import BaseImage
from platform_constructs.execution_role import SageMakerExecutionRole
from platform_constructs.network import TrainingNetwork
from platform_constructs.storage import TrainingStorage
from compiler.environments import Environment


class AccessStack(cdk.Stack):
    """IAM apart from the data: the role can change (and be reviewed) without touching stateful stacks."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Environment, network: TrainingNetwork,
                 storage: TrainingStorage, repositories: Sequence[ecr.IRepository], base_image: BaseImage,
                 pulled_repository_arns: Sequence[str] = (), **kwargs) -> None:
        super().__init__(scope, construct_id, description=f"Training platform access ({settings.name})", **kwargs)
        groups = [network.security_group]
        self.execution_role = SageMakerExecutionRole(
            self, "SageMakerExecution", data_bucket=storage.data_bucket, output_bucket=storage.output_bucket,
            checkpoint_bucket=storage.checkpoint_bucket, encryption_key=storage.key, repositories=repositories,
            base_image_repository_arns=sorted({base_image.repository_arn(self.partition), *pulled_repository_arns}),
            vpc=network.vpc,
            subnets=network.training_subnets, security_groups=groups,
        )
