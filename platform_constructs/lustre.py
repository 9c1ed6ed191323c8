"""FSx for Lustre in the training subnet, sized per environment, linked to the data bucket.

A spec's paths are the same in every environment: `/datasets/<name>/<key>` for the object
`s3://<data bucket>/datasets/<name>/<key>`, whichever way the file system is linked:

- PERSISTENT_2: one data repository association per dataset of the environment (cdk.json `datasets`),
  `/datasets/<name>` <-> `s3://<data bucket>/datasets/<name>/`, import only, so the file system holds only what is
  meant for it. FSx takes at most 8 per file system (FSx API reference, CreateDataRepositoryAssociation), and
  creates them one at a time: each depends on the one before it in name order.
- SCRATCH_1, SCRATCH_2, PERSISTENT_1: the file system's ImportPath, the whole bucket at the root, as before. FSx
  takes no association beside an ImportPath, and ImportPath cannot change without replacing the file system (and
  the workload stacks that import its id), so these keep it; what a spec may read is bounded by the rule, not the
  link.

Which workloads read a dataset is checked on the specs (compiler/rules/fsx_datasets.py): FSx checks no IAM per path.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_fsx as fsx
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from compiler.inputs.environments import FsxSettings
from compiler.inputs.grants import Dataset
from platform_constructs import guards
from platform_constructs.checkov import acknowledge_check
from platform_constructs.removal import RETAIN

PERSISTENT_TYPES = ("PERSISTENT_1", "PERSISTENT_2")
NO_DATASETS: Mapping[str, Dataset] = MappingProxyType({})
FSX_S3_ROLE = "aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/AWSServiceRoleForFSxS3Access_*"


class TrainingFileSystem(Construct):
    """A Lustre file system for training jobs.

    Exposes `file_system`, `file_system_id`, `mount_name`, `connections` and `data_repository_associations` (one
    per dataset of `datasets` on PERSISTENT_2, linked to `data_bucket`).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: FsxSettings,
        vpc: ec2.IVpc,
        subnet: ec2.ISubnet,
        security_group: ec2.ISecurityGroup,
        training_subnets: list[ec2.ISubnet],
        kms_key: kms.IKey,
        data_bucket: s3.IBucket | None = None,
        removal_policy: cdk.RemovalPolicy = RETAIN,
        job_security_group: ec2.ISecurityGroup | None = None,
        datasets: Mapping[str, Dataset] = NO_DATASETS,
    ) -> None:
        super().__init__(scope, construct_id)
        kind = settings.deployment_type
        persistent = kind in PERSISTENT_TYPES
        by_association = data_bucket is not None and kind == "PERSISTENT_2"
        link_by_import_path = data_bucket is not None and not by_association
        datasets_linked = sorted(datasets.values(), key=lambda d: d.name) if by_association else []
        backups = settings.automatic_backup_retention_days
        config = fsx.LustreConfiguration(
            deployment_type=fsx.LustreDeploymentType[kind],
            per_unit_storage_throughput=settings.per_unit_storage_throughput if persistent else None,
            data_compression_type=(
                fsx.LustreDataCompressionType[settings.data_compression_type]
                if settings.data_compression_type else None
            ),
            # Both fixed per deployment type, never derived from the retention: CopyTagsToBackups cannot change in
            # place (the service spec's LustreConfiguration), so turning backups off must not drop it. Scratch file
            # systems take no backups, nor does one created linked to S3 (ImportPath), for which FSx's API reference
            # says CopyTagsToBackups is not available; associations come after the file system is created.
            automatic_backup_retention=cdk.Duration.days(backups) if persistent and backups is not None else None,
            copy_tags_to_backups=True if persistent and not link_by_import_path else None,
            import_path=f"s3://{data_bucket.bucket_name}" if data_bucket is not None and link_by_import_path else None,
            auto_import_policy=fsx.LustreAutoImportPolicy.NEW_CHANGED_DELETED if link_by_import_path else None,
        )
        self.file_system = fsx.LustreFileSystem(
            self, "FileSystem", vpc=vpc, vpc_subnet=subnet, security_group=security_group,
            storage_capacity_gib=settings.storage_capacity_gib, lustre_configuration=config,
            file_system_type_version=fsx.FileSystemTypeVersion.V_2_15,
            # SCRATCH file systems are always encrypted with an FSx-managed key; KmsKeyId is for PERSISTENT only.
            kms_key=kms_key if persistent else None,
            removal_policy=removal_policy,
        )
        self.connections = self.file_system.connections
        self.file_system_id = self.file_system.file_system_id
        self.mount_name = self.file_system.mount_name
        self.subnet = subnet

        if data_bucket is not None and (datasets_linked or link_by_import_path):
            # FSx reads and writes the linked bucket through a service-linked role named after the file system;
            # the bucket's customer-managed key must let that role use it (FSx user guide, "S3 data repositories").
            kms_key.add_to_resource_policy(iam.PolicyStatement(
                sid="FsxLustreLinkedBucket",
                principals=[iam.AnyPrincipal()],
                actions=["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
                resources=["*"],
                conditions={
                    "StringEquals": {"aws:PrincipalAccount": cdk.Aws.ACCOUNT_ID},
                    "ArnLike": {"aws:PrincipalArn": f"arn:{cdk.Aws.PARTITION}:iam::{cdk.Aws.ACCOUNT_ID}:role/{FSX_S3_ROLE}"},
                },
            ))
            key_resource = kms_key.node.default_child
            if isinstance(key_resource, kms.CfnKey):  # a key of this app (an imported key's policy is not ours)
                acknowledge_check(key_resource, "CKV_AWS_33", (
                    "Statement FsxLustreLinkedBucket: FSx's service-linked role for the S3 link is named after the "
                    "file system's id, which does not exist when the key policy is written, so the principal is '*' "
                    "narrowed by aws:PrincipalArn to that role's name pattern and aws:PrincipalAccount to this account."))
        self.data_repository_associations = (
            self._link_datasets(datasets_linked, data_bucket) if data_bucket is not None else {})

        cdk.CfnOutput(self, "MountName", value=self.mount_name,
                      description="Lustre mount name: FileSystemDataSource DirectoryPath starts with /<MountName>")
        guards.add_guard(self, lambda: guards.single_zone_problems(
            {"training subnets": training_subnets, "file system": [subnet]},
        ))
        # Each workload's job group checks its own rules with the file system (TrainingNetwork.job_security_group);
        # here the file servers' rules, and a job group passed in.
        guards.add_guard(self, lambda: guards.lustre_rule_problems(job_security_group, security_group))

    def _link_datasets(self, datasets: list[Dataset], data_bucket: s3.IBucket,
                       ) -> dict[str, fsx.CfnDataRepositoryAssociation]:
        """One import-only association per dataset, created one at a time in name order: FSx fails concurrent
        CreateDataRepositoryAssociation calls on one file system (hashicorp/terraform-provider-aws#24678), and
        CloudFormation creates (and deletes) resources that do not depend on each other in parallel. A dataset added
        or removed moves one DependsOn only, which updates nothing (aws/aws-cdk#21496); every association keeps its
        logical ID and its place in the order."""
        associations: dict[str, fsx.CfnDataRepositoryAssociation] = {}
        previous: fsx.CfnDataRepositoryAssociation | None = None
        for dataset in sorted(datasets, key=lambda d: d.name):
            # Import only (no AutoExportPolicy): what a job writes on the file system never reaches the dataset.
            association = fsx.CfnDataRepositoryAssociation(
                self, f"Dataset-{dataset.name}", file_system_id=self.file_system_id,
                file_system_path=dataset.file_system_path,
                data_repository_path=f"s3://{data_bucket.bucket_name}/{dataset.key_prefix}",
                batch_import_meta_data_on_create=True,
                s3=fsx.CfnDataRepositoryAssociation.S3Property(
                    auto_import_policy=fsx.CfnDataRepositoryAssociation.AutoImportPolicyProperty(
                        events=["NEW", "CHANGED", "DELETED"],
                    ),
                ),
            )
            if previous is not None:
                association.add_resource_dependency(previous)
            associations[dataset.name] = previous = association
        return associations
