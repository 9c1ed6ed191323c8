"""The file system's settings that FSx changes in place never touch a property that replaces it.

`automatic_backup_retention_days` 7 -> 0 used to drop `CopyTagsToBackups` (true -> absent), which cannot change in
place (the CDK's service spec, `@aws-cdk/aws-service-spec`, LustreConfiguration.CopyTagsToBackups: replacement; the
spec `trainctl review` judges by): turning prod's backups off would have replaced its file system. Found by the
edit matrix of issue "infrastructure changes checked for replacements".
"""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import assertions

from compiler.inputs.environments import FsxSettings
from platform_constructs.network import TrainingNetwork
from tests.platform.test_guards import file_system, tiny_stack

pytestmark = pytest.mark.synth


def _lustre(settings: FsxSettings) -> dict[str, Any]:
    _app, stack = tiny_stack()
    network = TrainingNetwork(stack, "Net", availability_zone="us-east-1a", training_subnet_mask=25)
    file_system(stack, network, settings=settings)
    (resource,) = assertions.Template.from_stack(stack).find_resources("AWS::FSx::FileSystem").values()
    return dict(resource["Properties"]["LustreConfiguration"])


def test_backup_retention_changes_only_the_retention_on_a_persistent_file_system() -> None:
    configs = {days: _lustre(FsxSettings(deployment_type="PERSISTENT_2", storage_capacity_gib=2400,
                                         per_unit_storage_throughput=250, automatic_backup_retention_days=days))
               for days in (7, 0, None)}
    assert configs[7]["AutomaticBackupRetentionDays"] == 7
    assert configs[0]["AutomaticBackupRetentionDays"] == 0  # said, so FSx turns backups off
    assert "AutomaticBackupRetentionDays" not in configs[None]  # unset: FSx's default
    rest = [{k: v for k, v in c.items() if k != "AutomaticBackupRetentionDays"} for c in configs.values()]
    assert rest[0] == rest[1] == rest[2] and rest[0]["CopyTagsToBackups"] is True


def test_a_scratch_file_system_has_no_backup_settings() -> None:
    config = _lustre(FsxSettings(deployment_type="SCRATCH_2", storage_capacity_gib=1200))
    assert not {"AutomaticBackupRetentionDays", "CopyTagsToBackups"} & set(config)


def test_a_file_system_created_linked_to_s3_asks_for_no_tag_copies_to_backups() -> None:
    """FSx API reference, CreateFileSystemLustreConfiguration.CopyTagsToBackups: "Not available for use with file
    systems that are linked to a data repository" (a PERSISTENT_1 file system is created with the bucket's ImportPath;
    PERSISTENT_2's associations come after it is created)."""
    from aws_cdk import aws_s3 as s3

    _app, stack = tiny_stack()
    network = TrainingNetwork(stack, "Net", availability_zone="us-east-1a", training_subnet_mask=25)
    settings = FsxSettings(deployment_type="PERSISTENT_1", storage_capacity_gib=2400, per_unit_storage_throughput=200)
    file_system(stack, network, settings=settings, data_bucket=s3.Bucket(stack, "Data"))
    (resource,) = assertions.Template.from_stack(stack).find_resources("AWS::FSx::FileSystem").values()
    config = resource["Properties"]["LustreConfiguration"]
    assert "ImportPath" in config and "CopyTagsToBackups" not in config


def _associations(*names: str) -> dict[str, dict[str, Any]]:
    """The associations of a PERSISTENT_2 file system with these datasets, by logical ID."""
    from aws_cdk import aws_s3 as s3

    from compiler.inputs.grants import Dataset

    _app, stack = tiny_stack()
    network = TrainingNetwork(stack, "Net", availability_zone="us-east-1a", training_subnet_mask=25)
    settings = FsxSettings(deployment_type="PERSISTENT_2", storage_capacity_gib=2400, per_unit_storage_throughput=250)
    file_system(stack, network, settings=settings, data_bucket=s3.Bucket(stack, "Data"),
                datasets={n: Dataset(n, frozenset({"reader"})) for n in names})
    return assertions.Template.from_stack(stack).find_resources("AWS::FSx::DataRepositoryAssociation")


def _chain(associations: dict[str, dict[str, Any]]) -> list[str]:
    """The datasets in the order CloudFormation must create them: each after the one its DependsOn names."""
    path = {k: v["Properties"]["FileSystemPath"].rsplit("/", 1)[-1] for k, v in associations.items()}
    after = {k: v.get("DependsOn", []) for k, v in associations.items()}
    (first,) = [k for k, d in after.items() if not d]
    order = [first]
    while nexts := [k for k, d in after.items() if d == [order[-1]]]:
        (following,) = nexts
        order.append(following)
    assert len(order) == len(associations), after  # one chain: no two created at the same time
    return [path[k] for k in order]


def test_associations_are_created_one_at_a_time_and_a_dataset_added_or_removed_disturbs_no_other() -> None:
    """Adding or removing a dataset keeps every other association's logical ID, properties and place in the order;
    only the DependsOn of the one after it moves, and a DependsOn change alone updates nothing (aws/aws-cdk#21496:
    CloudFormation's UpdateStack does nothing for it). The order is by name, whatever order cdk.json lists them in."""
    before = _associations("web-text", "code", "books")
    assert _chain(before) == ["books", "code", "web-text"]
    for names, expected in ((("web-text", "code", "books", "images"), ["books", "code", "images", "web-text"]),
                            (("web-text", "books"), ["books", "web-text"]),
                            (("web-text", "code", "books", "a-first"), ["a-first", "books", "code", "web-text"])):
        after = _associations(*names)
        assert _chain(after) == expected
        kept = set(before) & set(after)
        assert {after[k]["Properties"]["FileSystemPath"] for k in kept} == {f"/datasets/{n}" for n in names} & {
            before[k]["Properties"]["FileSystemPath"] for k in before}
        assert all(after[k]["Properties"] == before[k]["Properties"] for k in kept)
        moved = [k for k in kept if after[k].get("DependsOn") != before[k].get("DependsOn")]
        assert len(moved) <= 1, moved
