"""The storage stack of one environment: the buckets and the FSx for Lustre file system."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from constructs import Construct

from compiler.inputs.environments import Environment
from platform_constructs.function_logs import provider_functions_log_to_own_groups
from platform_constructs.lustre import TrainingFileSystem
from platform_constructs.network import TrainingNetwork
from platform_constructs.retention import retention
from platform_constructs.storage import TrainingStorage


class StorageStack(cdk.Stack):
    """Everything that holds data: retained on stack deletion in production environments."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Environment, network: TrainingNetwork,
                 removal_policy: cdk.RemovalPolicy, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description=f"Training platform storage ({settings.name})", **kwargs)
        self.storage = TrainingStorage(self, "Storage", removal_policy=removal_policy,
                                       checkpoint_expiration_days=settings.checkpoint_expiration_days)
        key = self.storage.key
        self.file_system: TrainingFileSystem | None = None
        if settings.fsx is not None:
            assert network.file_system_security_group is not None
            self.file_system = TrainingFileSystem(
                self, "Lustre", settings=settings.fsx, vpc=network.vpc, subnet=network.training_subnet,
                security_group=network.file_system_security_group, training_subnets=network.training_subnets, kms_key=key,
                data_bucket=self.storage.data_bucket, removal_policy=removal_policy, datasets=settings.datasets,
            )
        # Emptying dev's buckets on delete: the CDK's provider function, logged with the key and retention.
        provider_functions_log_to_own_groups(self, key=key, retention=retention(settings.log_retention_days),
                                             removal_policy=removal_policy)
