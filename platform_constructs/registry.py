"""ECR repositories for the project's training images, with each image built at deploy time and copied in.

Why copy: `DockerImageAsset` builds at `cdk deploy` but pushes into the CDK bootstrap repository, which has no
scan on push, mutable tags and no lifecycle rules of ours. `cdk-ecr-deployment` (a custom resource whose Lambda
ships pre-built inside the package, so synth stays offline and needs no Docker) copies the built image into the
project's repository under the asset hash as its tag: a new tag only when the build context changes, which
immutable tags require.

The package's copy function is one per stack (a singleton), and it runs with the role of the first copy that
created it: so every repository of a stack shares one copier (role, policy, log group), and each repository adds
its own two statements (pull from the build, push to the repository) to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from cdk_ecr_deployment import DockerImageName, ECRDeployment
from constructs import Construct

from platform_constructs.nag import acknowledge_required_wildcards


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
        removal_policy: cdk.RemovalPolicy = cdk.RemovalPolicy.RETAIN,
        max_image_count: int = 50,
        untagged_image_days: int = 7,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR,
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
            platform=ecr_assets.Platform.LINUX_AMD64,  # the build context's .dockerignore leaves caches out
        )
        self.image_uri = self.repository.repository_uri_for_tag(self.asset.asset_hash)

        copier = ImageCopier.of(self, encryption_key=encryption_key, log_retention=log_retention,
                                removal_policy=removal_policy)
        copier.allow(self.asset.repository, self.repository, construct_id)
        self.copy = ECRDeployment(
            self, "Copy", src=DockerImageName(self.asset.image_uri), dest=DockerImageName(self.image_uri),
            # The package adds ecr:* and s3:GetObject on '*' to the role it is given; an immutable view of the role
            # drops those, and the copier's policy grants only what the copies need.
            role=copier.role.without_policy_updates(),
        )
        self.copy.node.add_dependency(copier.policy)
        copier.send_logs_to_own_group(self.copy)


class ImageCopier(Construct):
    """The copy function's role, policy and log group: one per stack, shared by its repositories' copies."""

    ID = "ImageCopier"

    @classmethod
    def of(cls, scope: Construct, *, encryption_key: kms.IKey, log_retention: logs.RetentionDays,
           removal_policy: cdk.RemovalPolicy) -> ImageCopier:
        stack = cdk.Stack.of(scope)
        existing = stack.node.try_find_child(cls.ID)
        if isinstance(existing, ImageCopier):
            return existing
        return cls(stack, cls.ID, encryption_key=encryption_key, log_retention=log_retention,
                   removal_policy=removal_policy)

    def __init__(self, scope: Construct, construct_id: str, *, encryption_key: kms.IKey,
                 log_retention: logs.RetentionDays, removal_policy: cdk.RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.role = iam.Role(
            self, "Role", description="Copies deploy-time image builds from the CDK asset repository into ours",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com",
                                            conditions={"StringEquals": {"aws:SourceAccount": stack.account}}),
        )
        # The function's own log group, with the environment's key and retention: the role writes there only and
        # cannot create groups.
        self.log_group = logs.LogGroup(self, "Logs", encryption_key=encryption_key, retention=log_retention,
                                       removal_policy=removal_policy)
        self.policy = iam.Policy(self, "Policy", roles=[self.role], statements=[
            iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
            # The group's ARN attribute ends in ":*": its streams, which Lambda names at run time.
            iam.PolicyStatement(sid="WriteLogs", actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                                resources=[self.log_group.log_group_arn]),
        ])
        acknowledge_required_wildcards(self.policy, {
            "EcrLogin": "ecr:GetAuthorizationToken has no resource-level permissions: AWS requires Resource '*'.",
        })
        self._function: lambda_.Function | None = None

    def allow(self, source: ecr.IRepository, destination: ecr.IRepository, sid_suffix: str) -> None:
        """Let the copier pull `source` (the CDK's asset repository) and push to `destination`."""
        pull = ["ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"]
        push = ["ecr:InitiateLayerUpload", "ecr:UploadLayerPart", "ecr:CompleteLayerUpload", "ecr:PutImage"]
        self.policy.add_statements(
            iam.PolicyStatement(sid=f"PullBuild{sid_suffix}", actions=pull, resources=[source.repository_arn]),
            iam.PolicyStatement(sid=f"Push{sid_suffix}", actions=[*pull, *push], resources=[destination.repository_arn]),
        )

    def send_logs_to_own_group(self, copy: ECRDeployment) -> None:
        """Point the package's singleton function at this copier's log group (once per stack)."""
        if self._function is not None:
            return
        stack = cdk.Stack.of(self)
        functions = [c for c in stack.node.children
                     if isinstance(c, lambda_.Function) and c.node.id.startswith("Custom::CDKECRDeployment")]
        if len(functions) != 1:
            raise ValueError(f"{copy.node.path}: expected the one copy function of cdk-ecr-deployment in "
                             f"{stack.node.path}, found {len(functions)}; the package's layout changed")
        (self._function,) = functions
        cfn = self._function.node.default_child
        assert isinstance(cfn, lambda_.CfnFunction)
        cfn.logging_config = lambda_.CfnFunction.LoggingConfigProperty(log_group=self.log_group.log_group_name)
        self._function.node.add_dependency(self.policy)
