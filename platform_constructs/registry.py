"""ECR repositories for the project's training images, with each image built at deploy time and copied in.

Why copy: `DockerImageAsset` builds at `cdk deploy` but pushes into the CDK bootstrap repository, which every CDK app
of the account shares, without our key, scanning or lifecycle rules. `cdk-ecr-deployment` (a custom resource whose Lambda
ships pre-built inside the package, so synth stays offline and needs no Docker) copies the built image into the
project's repository under `build-<asset hash>`: a new tag only when the build context changes.

Why the repository is IMMUTABLE_WITH_EXCLUSION (`build-*` excluded): the copy runs on every create and update of its
custom resource, and a copy onto a tag that already exists in an IMMUTABLE repository fails (cdklabs/cdk-ecr-deployment
#207) -- on a redeploy after a package upgrade changes the resource's properties, and on the rollback of a failed
update, which copies the previous build onto its existing tag and would leave the stack in UPDATE_ROLLBACK_FAILED.
Tags matching an exclusion filter may be overwritten (ECR user guide, "Preventing image tags from being overwritten in
Amazon ECR"; What's New 2025-07, "Amazon ECR now supports exceptions to tag immutability"; CloudFormation
`ImageTagMutabilityExclusionFilters`), so the re-copy succeeds. It re-writes the same content: the source is
`<asset repository>:<asset hash>`, and the bootstrap repository's tags are immutable (aws/aws-cdk#19937), so a build
tag only ever receives the image first built for that hash. Every other tag stays immutable.

Only what git tracks is built: the asset excludes every untracked file of the build context (`compiler.inputs.tracked`),
so a `.env` or a scratch file beside the trainer reaches neither the image nor its asset hash; the CDK stages the
context without them and `docker build` runs in that copy. Outside a git work tree the whole context is built,
with a warning.

The package's copy function is one per stack (a singleton), and it runs with the role of the first copy that
created it: so every repository of a stack shares one copier (role, policy, log group), and each repository adds
its own two statements (pull from the build, push to the repository) to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
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

from compiler.inputs.image_builds import context_excludes
from platform_constructs.checkov import acknowledge_check
from platform_constructs.function_logs import role_and_logs
from platform_constructs.nag import acknowledge_required_wildcards
from platform_constructs.removal import RETAIN

# ECR API reference, ImageTagMutabilityExclusionFilter: filter is 1-128 characters of [0-9a-zA-Z._*-]; image tags are
# at most 128 characters (the asset hash is 64).
_FILTER = re.compile(r"[0-9a-zA-Z._*-]{1,128}")


class TrainingImageRepository(Construct):
    """One ECR repository (scan on push, immutable tags but `build_tag_prefix`*, KMS, lifecycle rules) and, given a
    build context, the image built from it at deploy time and copied in as `<build_tag_prefix><asset hash>`.

    Exposes `repository`, `image_uri` (None without a build context), `image_tag` and `asset`.
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
        removal_policy: cdk.RemovalPolicy = RETAIN,
        max_image_count: int = 50,
        untagged_image_days: int = 7,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_YEAR,
        build_tag_prefix: str = "build-",
        exclude: Sequence[str] | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        build_tags = f"{build_tag_prefix}*"
        if not build_tag_prefix or "*" in build_tag_prefix or not _FILTER.fullmatch(build_tags) or len(build_tags) > 64:
            raise ValueError(f"{self.node.path}: build_tag_prefix {build_tag_prefix!r} must be 1-63 characters of "
                             "letters, digits and . _ - (the tag adds the 64-character asset hash; ECR allows 128)")
        self.repository = ecr.Repository(
            self, "Repository", image_scan_on_push=True, image_tag_mutability=ecr.TagMutability.IMMUTABLE_WITH_EXCLUSION,
            image_tag_mutability_exclusion_filters=[ecr.ImageTagMutabilityExclusionFilter.wildcard(build_tags)],
            encryption=ecr.RepositoryEncryption.KMS, encryption_key=encryption_key,
            lifecycle_rules=[
                ecr.LifecycleRule(description="drop untagged layers of failed or replaced pushes",
                                  tag_status=ecr.TagStatus.UNTAGGED, max_image_age=cdk.Duration.days(untagged_image_days)),
                ecr.LifecycleRule(description=f"keep the newest {max_image_count} images",
                                  tag_status=ecr.TagStatus.ANY, max_image_count=max_image_count),
            ],
            removal_policy=removal_policy, empty_on_delete=removal_policy == cdk.RemovalPolicy.DESTROY,
        )
        cfn_repository = self.repository.node.default_child
        assert isinstance(cfn_repository, ecr.CfnRepository)
        acknowledge_check(cfn_repository, "CKV_AWS_51",
                          f"Every tag is immutable except {build_tags}, which only the deploy-time copy writes, always "
                          "from the immutable asset tag of the same hash (the same image); a re-copy on a redeploy or "
                          "rollback would fail on an IMMUTABLE repository (cdklabs/cdk-ecr-deployment#207).")
        self.asset: ecr_assets.DockerImageAsset | None = None
        self.image_uri: str | None = None
        self.image_tag: str | None = None
        if build_context is None:
            return
        dockerfile_path = Path(build_context) / dockerfile
        if not dockerfile_path.is_file():
            raise ValueError(f"{self.node.path}: no Dockerfile at {dockerfile_path}; pass build_context=None to skip")
        self.asset = ecr_assets.DockerImageAsset(
            self, "Image", directory=str(build_context), file=dockerfile, build_args=dict(build_args or {}),
            platform=ecr_assets.Platform.LINUX_AMD64,  # the build context's .dockerignore leaves caches out
            exclude=list(exclude) if exclude is not None else untracked_excludes(Path(build_context), dockerfile,
                                                                                  self.node.path),
            ignore_mode=cdk.IgnoreMode.DOCKER,
        )
        self.image_tag = f"{build_tag_prefix}{self.asset.asset_hash}"
        assert fnmatchcase(self.image_tag, build_tags)  # the copy's tag is one the exclusion lets it overwrite
        self.image_uri = self.repository.repository_uri_for_tag(self.image_tag)

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


def untracked_excludes(context: Path, dockerfile: str, where: str) -> list[str]:
    """The construct used on its own (no `exclude` given): the compiler's patterns for the context's untracked
    files (`compiler.inputs.image_builds.context_excludes`, which validate applies to the project's images)."""
    patterns, refusal = context_excludes(context, dockerfile)
    if refusal is not None:
        raise ValueError(f"{where}: {refusal}")
    return patterns


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
        self.role, self.log_group, write = role_and_logs(
            self, description="Copies deploy-time image builds from the CDK asset repository into ours",
            key=encryption_key, retention=log_retention, removal_policy=removal_policy)
        self.policy = iam.Policy(self, "Policy", roles=[self.role], statements=[
            iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]), write])
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
