"""Training data at rest: the environment's KMS key and the data, output and checkpoint buckets.

Why one key: the execution roles, FSx, ECR and CloudWatch Logs all need grants on it, and one rotated key keeps the
audit trail in one place. Why versioned, access-logged buckets with lifecycle rules: checkpoints are large and
rewritten every few minutes; old ones must expire by themselves, while data and outputs must survive mistakes.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_s3 as s3
from constructs import Construct

from platform_constructs.checkov import acknowledge_check
from platform_constructs.keys import environment_key
from platform_constructs.nag import acknowledge
from platform_constructs.removal import RETAIN


class TrainingStorage(Construct):
    """The key and the buckets of one environment.

    `removal_policy=DESTROY` also empties the buckets on stack deletion (dev); the default keeps key and buckets
    (but for a rollback of the deploy that created them: `platform_constructs.removal`).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        removal_policy: cdk.RemovalPolicy = RETAIN,
        checkpoint_expiration_days: int = 30,
        noncurrent_version_days: int = 30,
        access_log_retention_days: int = 365,
    ) -> None:
        super().__init__(scope, construct_id)
        if checkpoint_expiration_days < 1:
            raise ValueError(f"{self.node.path}: checkpoint_expiration_days must be at least 1 day")
        destroy = removal_policy == cdk.RemovalPolicy.DESTROY
        self.removal_policy = removal_policy
        self.key = environment_key(
            self, "Key", removal_policy=removal_policy,
            description="Training platform data: buckets, FSx for Lustre, ECR images, SageMaker job volumes",
        )
        self.access_logs = s3.Bucket(
            self, "AccessLogs",
            # S3 server access logging can only deliver to SSE-S3 buckets, not SSE-KMS ones.
            encryption=s3.BucketEncryption.S3_MANAGED, enforce_ssl=True, minimum_tls_version=1.2,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL, versioned=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[s3.LifecycleRule(
                id="expire-access-logs", expiration=cdk.Duration.days(access_log_retention_days),
                noncurrent_version_expiration=cdk.Duration.days(1),
                abort_incomplete_multipart_upload_after=cdk.Duration.days(1),
            )],
            removal_policy=removal_policy, auto_delete_objects=destroy,
        )
        no_self_logging = ("This bucket is the server-access-log destination of the training buckets; logging it "
                           "into itself would loop, so it has no access log of its own.")
        acknowledge(self.access_logs, "S1", no_self_logging)
        access_logs_resource = self.access_logs.node.default_child
        assert isinstance(access_logs_resource, s3.CfnBucket)
        acknowledge_check(access_logs_resource, "CKV_AWS_18", no_self_logging)

        keep = cdk.Duration.days(noncurrent_version_days)
        self.data_bucket = self._bucket("Data", destroy, [s3.LifecycleRule(
            id="tidy-data", noncurrent_version_expiration=keep,
            abort_incomplete_multipart_upload_after=cdk.Duration.days(7),
        )])
        self.output_bucket = self._bucket("Output", destroy, [s3.LifecycleRule(
            id="tidy-output", noncurrent_version_expiration=keep,
            abort_incomplete_multipart_upload_after=cdk.Duration.days(7),
        )])
        self.checkpoint_bucket = self._bucket("Checkpoints", destroy, [s3.LifecycleRule(
            id="expire-old-checkpoints", expiration=cdk.Duration.days(checkpoint_expiration_days),
            noncurrent_version_expiration=cdk.Duration.days(1),
            abort_incomplete_multipart_upload_after=cdk.Duration.days(1),
        )])

    def _bucket(self, name: str, destroy: bool, rules: list[s3.LifecycleRule]) -> s3.Bucket:
        return s3.Bucket(
            self, f"{name}Bucket",
            encryption=s3.BucketEncryption.KMS, encryption_key=self.key, bucket_key_enabled=True,
            enforce_ssl=True, minimum_tls_version=1.2, block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            versioned=True, object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=self.access_logs, server_access_logs_prefix=f"{name.lower()}/",
            lifecycle_rules=rules, removal_policy=self.removal_policy, auto_delete_objects=destroy,
        )
