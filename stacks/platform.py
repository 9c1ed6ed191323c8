"""One environment's platform as a CDK Stage, and the one object the workload stacks build on.

`cdk deploy 'dev/*'` deploys the stage named `dev`: stacks `dev/Network`, `dev/Storage`, `dev/Registry`,
`dev/Access` (stateful, deployed rarely) and the workload stacks the next layer adds to the same stage.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_fsx as fsx
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_assets as s3_assets
from cdk_nag import AwsSolutionsChecks
from constructs import Construct

from platform_constructs.base_image import training_base_image
from platform_constructs.execution_role import SageMakerExecutionRole
from platform_constructs.network import DEFAULT_TRAINING_IPS
from stacks.access import AccessStack
from stacks.network import NetworkStack
from stacks.registry import RegistryStack, default_build_context
from stacks.storage import StorageStack
from compiler import placeholders as ph
from compiler.environments import CDK_JSON, Environment

CDK_CONTEXT_JSON = CDK_JSON.with_name("cdk.context.json")
USE_DEFAULT = object()


@dataclass(frozen=True)
class PlatformResources:
    """What the workload stacks of one environment need from its platform, as CDK objects and tokens."""

    env: Environment
    vpc: ec2.IVpc
    training_subnet: ec2.ISubnet
    training_security_group: ec2.ISecurityGroup
    file_system: fsx.LustreFileSystem | None
    file_system_id: str | None
    mount_name: str | None
    data_bucket: s3.IBucket
    output_bucket: s3.IBucket
    checkpoint_bucket: s3.IBucket
    kms_key: kms.IKey
    execution_role: iam.IRole
    repositories: dict[str, ecr.IRepository]
    image_uris: dict[str, str] = field(default_factory=dict)
    execution_role_construct: SageMakerExecutionRole | None = None

    def substitutions(self) -> dict[str, str]:
        """Every deploy-time placeholder of training/core/placeholders.py this platform can fill, as tokens."""
        values = {
            ph.EXECUTION_ROLE_ARN: self.execution_role.role_arn,
            ph.TRAINING_SUBNET_ID: self.training_subnet.subnet_id,
            ph.TRAINING_SECURITY_GROUP_ID: self.training_security_group.security_group_id,
            ph.DATA_BUCKET: self.data_bucket.bucket_name,
            ph.OUTPUT_BUCKET: self.output_bucket.bucket_name,
            ph.CHECKPOINT_BUCKET: self.checkpoint_bucket.bucket_name,
            ph.KMS_KEY_ARN: self.kms_key.key_arn,
        }
        if self.file_system_id is not None and self.mount_name is not None:
            values[ph.FILE_SYSTEM_ID] = self.file_system_id
            values[ph.FSX_MOUNT_NAME] = self.mount_name
        for name, repository in self.repositories.items():
            values[ph.repository_key(name)] = repository.repository_uri
        for name, uri in self.image_uris.items():
            values[ph.image_uri_key(name)] = uri
        return values

    def grant_pass_execution_role(self, grantee: iam.IGrantable) -> iam.Grant:
        """iam:PassRole on the execution role, to SageMaker only (for the Step Functions role)."""
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=["iam:PassRole"], resource_arns=[self.execution_role.role_arn],
            conditions={"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
        )

    def grant_read_source(self, scope: Construct, asset: s3_assets.Asset) -> iam.Policy:
        """Let training jobs read one source bundle (exactly that object), with a policy in `scope`'s stack.

        The policy lives with the workload, so a new bundle does not change the Access stack.
        """
        return iam.Policy(scope, "ReadSourceBundle", roles=[self.execution_role], statements=[iam.PolicyStatement(
            actions=["s3:GetObject"], resources=[asset.bucket.arn_for_objects(asset.s3_object_key)],
        )])


class PlatformStage(cdk.Stage):
    """All platform stacks of one environment. `platform` is the PlatformResources for workload stacks."""

    def __init__(self, scope: Construct, settings: Environment, *, required_private_ips: int = DEFAULT_TRAINING_IPS,
                 build_context: Path | object | None = USE_DEFAULT, pulled_repository_arns: Sequence[str] = ()) -> None:
        super().__init__(scope, settings.name, env=cdk.Environment(account=settings.account, region=settings.region))
        self.settings = settings
        removal = cdk.RemovalPolicy.RETAIN if settings.removal_policy == "retain" else cdk.RemovalPolicy.DESTROY
        common: dict[str, Any] = {"termination_protection": settings.production}
        base_image = training_base_image(settings.region)
        context = default_build_context() if build_context is USE_DEFAULT else build_context
        assert context is None or isinstance(context, Path)

        self.network_stack = NetworkStack(self, "Network", settings=settings, required_private_ips=required_private_ips,
                                          removal_policy=removal, **common)
        network = self.network_stack.network
        self.storage_stack = StorageStack(self, "Storage", settings=settings, network=network, removal_policy=removal,
                                          **common)
        storage = self.storage_stack.storage
        self.registry_stack = RegistryStack(self, "Registry", settings=settings, encryption_key=storage.key,
                                            base_image=base_image, build_context=context, removal_policy=removal,
                                            **common)
        images = self.registry_stack.images
        self.access_stack = AccessStack(
            self, "Access", settings=settings, network=network, storage=storage,
            repositories=[i.repository for i in images.values()], base_image=base_image,
            pulled_repository_arns=pulled_repository_arns, **common,
        )
        lustre = self.storage_stack.file_system
        role = self.access_stack.execution_role
        self.platform = PlatformResources(
            env=settings, vpc=network.vpc, training_subnet=network.training_subnet,
            training_security_group=network.security_group,
            file_system=lustre.file_system if lustre else None,
            file_system_id=lustre.file_system_id if lustre else None,
            mount_name=lustre.mount_name if lustre else None,
            data_bucket=storage.data_bucket, output_bucket=storage.output_bucket,
            checkpoint_bucket=storage.checkpoint_bucket, kms_key=storage.key, execution_role=role.role,
            repositories={name: i.repository for name, i in images.items()},
            image_uris={name: i.image_uri for name, i in images.items() if i.image_uri is not None},
            execution_role_construct=role,
        )
        cdk.Tags.of(self).add("project", "training-platform")
        cdk.Tags.of(self).add("environment", settings.name)


def file_context(cdk_json: Path = CDK_JSON, cdk_context_json: Path = CDK_CONTEXT_JSON) -> dict[str, Any]:
    """cdk.json's context plus the cached lookups of cdk.context.json, as the CDK CLI would pass them.

    Lets `python app.py` and the tests synthesize exactly what `cdk synth` does; the CLI's own context wins.
    """
    context: dict[str, Any] = dict(json.loads(cdk_json.read_text()).get("context", {}))
    if cdk_context_json.is_file():
        context.update(json.loads(cdk_context_json.read_text()))
    return context


def build_app(
    environments: Mapping[str, Environment],
    *,
    required_private_ips: int = DEFAULT_TRAINING_IPS,
    build_context: Path | object | None = USE_DEFAULT,
    context: Mapping[str, Any] | None = None,
    outdir: str | None = None,
    only: Iterable[str] | None = None,
    pulled_repositories: Callable[[Environment], Sequence[str]] | None = None,
) -> tuple[cdk.App, dict[str, PlatformStage]]:
    """The CDK app with one PlatformStage per environment and cdk-nag AwsSolutions checks on every stack."""
    app = cdk.App(context=dict(file_context() if context is None else context), outdir=outdir)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    wanted = set(only) if only is not None else None
    stages = {
        name: PlatformStage(app, settings, required_private_ips=required_private_ips, build_context=build_context,
                            pulled_repository_arns=pulled_repositories(settings) if pulled_repositories else ())
        for name, settings in environments.items() if wanted is None or name in wanted
    }
    return app, stages
