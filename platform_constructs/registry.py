"""ECR repositories for the project's training images, with each image built at deploy time and copied in.

Why copy: `DockerImageAsset` builds at `cdk deploy` but pushes into the CDK bootstrap repository, which has no
scan on push, mutable tags and no lifecycle rules of ours. `cdk-ecr-deployment` (a custom resource whose Lambda
ships pre-built inside the package, so synth stays offline and needs no Docker) copies the built image into the
project's repository under the asset hash as its tag: a new tag only when the build context changes, which
immutable tags require.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from cdk_ecr_deployment import DockerImageName, ECRDeployment
from constructs import Construct

from platform_constructs.nag import acknowledge_required_wildcards

# Build-context paths that never belong in the image: specs and the synth-time compiler change often and
# would otherwise rebuild the image (new hash, new tag) on every unrelated edit.
DEFAULT_EXCLUDE = (
    "workloads", "core", "**/__pycache__", "**/*.pyc", "**/.pytest_cache", "**/.ruff_cache", "**/.hypothesis",
    "cli.py", "__main__.py",
)


class TrainingImageRepository(Construct):
    """One ECR repository (scan on push, immutable tags, KMS, lifecycle rules) and, given a build context,
    the image built from it at deploy time.

    Exposes `repository`, `image_uri` (None without a build context) and `asset`.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        encryption_key: kms.IKey,
        build_context: Path | None = None,
        dockerfile: str = "Dockerfile",
        build_args: Mapping[str, str] | None = None,
        exclude: Sequence[str] = DEFAULT_EXCLUDE,
        removal_policy: cdk.RemovalPolicy = cdk.RemovalPolicy.RETAIN,
        max_image_count: int = 50,
        untagged_image_days: int = 7,
    ) -> None:
        super().__init__(scope, construct_id)
        self.repository = ecr.Repository(
            self, "Repository", image_scan_on_push=True, image_tag_mutability=ecr.TagMutability.IMMUTABLE,
            encryption=ecr.RepositoryEncryption.KMS, encryption_key=encryption_key,
            lifecycle_rules=[
                ecr.LifecycleRule(description="drop untagged layers of failed or replaced pushes",
                                  tag_status=ecr.TagStatus.UNTAGGED, max_image_age=cdk.Duration.days(untagged_image_days)),
                ecr.LifecycleRule(description=f"keep the newest {max_image_count} images",
                                  tag_status=ecr.TagStatus.ANY, max_image_count=max_image_count),
            ],
            removal_policy=removal_policy, empty_on_delete=removal_policy == cdk.RemovalPolicy.DESTROY,
        )
        self.asset: ecr_assets.DockerImageAsset | None = None
        self.image_uri: str | None = None
        if build_context is None:
            return
        dockerfile_path = Path(build_context) / dockerfile
        if not dockerfile_path.is_file():
            raise ValueError(f"{self.node.path}: no Dockerfile at {dockerfile_path}; pass build_context=None to skip")
        self.asset = ecr_assets.DockerImageAsset(
            self, "Image", directory=str(build_context), file=dockerfile, build_args=dict(build_args or {}),
            exclude=list(exclude), platform=ecr_assets.Platform.LINUX_AMD64,
        )
        self.image_uri = self.repository.repository_uri_for_tag(self.asset.asset_hash)

        copy_role = iam.Role(
            self, "CopyRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Copies the deploy-time image build from the CDK asset repository into this repository",
        )
        pull = ["ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"]
        push = ["ecr:InitiateLayerUpload", "ecr:UploadLayerPart", "ecr:CompleteLayerUpload", "ecr:PutImage"]
        copy_policy = iam.Policy(self, "CopyPolicy", roles=[copy_role], statements=[
            iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
            iam.PolicyStatement(sid="PullBuiltImage", actions=pull, resources=[self.asset.repository.repository_arn]),
            iam.PolicyStatement(sid="PushImage", actions=[*pull, *push], resources=[self.repository.repository_arn]),
            iam.PolicyStatement(
                sid="WriteLogs", actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[cdk.Stack.of(self).format_arn(
                    service="logs", resource="log-group", resource_name="/aws/lambda/*",
                    arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                )],
            ),
        ])
        acknowledge_required_wildcards(copy_policy, {
            "EcrLogin": "ecr:GetAuthorizationToken has no resource-level permissions: AWS requires Resource '*'.",
            "WriteLogs": "The copy Lambda's log group is named after its function name, generated at deploy; "
                         "limited to /aws/lambda/ log groups of this account and region.",
        })
        self.copy = ECRDeployment(
            self, "Copy", src=DockerImageName(self.asset.image_uri), dest=DockerImageName(self.image_uri),
            # The package adds ecr:* and s3:GetObject on '*' to the role it is given; an immutable view of the role
            # drops those, and CopyPolicy above grants only what the copy needs.
            role=copy_role.without_policy_updates(),
        )
        self.copy.node.add_dependency(copy_policy)
