"""One environment's platform as a CDK Stage, and the typed contract the workload stacks build on.

`cdk deploy 'dev/*'` deploys the stage named `dev`: stacks `dev/Network`, `dev/Storage`,
`dev/Registry`, `dev/Access` (stateful, deployed rarely), then `dev/Runs` and the workload shards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_kms as kms
from constructs import Construct

from compiler.facts import placeholders as ph
from compiler.inputs.environments import Environment
from compiler.inputs.image_builds import ImageBuild
from compiler.pipeline import EnvironmentPlan
from platform_constructs.lustre import TrainingFileSystem
from platform_constructs.network import TrainingNetwork
from platform_constructs.registry import TrainingImageRepository
from platform_constructs.removal import removal_policy
from platform_constructs.storage import TrainingStorage
from platform_constructs.training_jobs import TrainingJobsAccess
from stacks.access import AccessStack
from stacks.network import NetworkStack
from stacks.registry import RegistryStack
from stacks.storage import StorageStack


@dataclass(frozen=True)
class PlatformResources:
    """What the workload stacks of one environment use of its platform (CDK objects; tokens across stacks)."""

    env: Environment
    project_root: Path
    removal_policy: cdk.RemovalPolicy
    key: kms.IKey
    network: TrainingNetwork
    storage: TrainingStorage
    file_system: TrainingFileSystem | None
    images: Mapping[str, TrainingImageRepository]
    training_jobs: TrainingJobsAccess

    def substitutions(self) -> dict[str, str]:
        """Every environment-wide deploy-time placeholder (compiler/facts/placeholders.py) this platform fills, as tokens.

        The job security group is each workload's own (platform_constructs/workload.py), filled there."""
        values = {
            ph.TRAINING_SUBNET_ID: self.network.training_subnet.subnet_id,
            ph.DATA_BUCKET: self.storage.data_bucket.bucket_name,
            ph.OUTPUT_BUCKET: self.storage.output_bucket.bucket_name,
            ph.CHECKPOINT_BUCKET: self.storage.checkpoint_bucket.bucket_name,
            ph.KMS_KEY_ARN: self.key.key_arn,
        }
        if self.file_system is not None:
            values[ph.FILE_SYSTEM_ID] = self.file_system.file_system_id
            values[ph.FSX_MOUNT_NAME] = self.file_system.mount_name
        for name, image in self.images.items():
            values[ph.repository_key(name)] = image.repository.repository_uri
            if image.image_uri is not None:
                values[ph.image_uri_key(name)] = image.image_uri
        return values


class PlatformStage(cdk.Stage):
    """All platform stacks of one environment; `platform` is the contract for the workload stacks."""

    def __init__(self, scope: Construct, plan: EnvironmentPlan, *, images: Mapping[str, ImageBuild],
                 project_root: Path) -> None:
        settings = plan.environment
        super().__init__(scope, settings.name, env=cdk.Environment(account=settings.account, region=settings.region))
        self.settings = settings
        removal = removal_policy(settings.removal_policy)
        common: dict[str, Any] = {"termination_protection": settings.production}
        self.network_stack = NetworkStack(self, "Network", settings=settings, removal_policy=removal,
                                          pulled_repositories=plan.pulled_repositories, **common)
        network = self.network_stack.network
        self.storage_stack = StorageStack(self, "Storage", settings=settings, network=network, removal_policy=removal,
                                          **common)
        key = self.storage_stack.storage.key
        self.registry_stack = RegistryStack(self, "Registry", settings=settings, key=key, images=images,
                                            removal_policy=removal, **common)
        self.access_stack = AccessStack(self, "Access", settings=settings, network=network, **common)
        self.platform = PlatformResources(
            env=settings, project_root=project_root, removal_policy=removal, key=key, network=network,
            storage=self.storage_stack.storage, file_system=self.storage_stack.file_system,
            images=self.registry_stack.images, training_jobs=self.access_stack.training_jobs,
        )
        cdk.Tags.of(self).add("project", "training-platform")
        cdk.Tags.of(self).add("environment", settings.name)

    @property
    def platform_stacks(self) -> list[cdk.Stack]:
        return [self.network_stack, self.storage_stack, self.registry_stack, self.access_stack]
