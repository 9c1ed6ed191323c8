"""cdk.json's grants, checked as they are read (compiler/inputs/grants.py): datasets with their readers, secrets with
their readers, customer keys with their users; the file system links the datasets (at most 8 on PERSISTENT_2).

Names, ARNs and limits are literals; each refusal has its neighbour just inside the boundary.
"""

from __future__ import annotations

import copy
import json

import botocore.session
import pytest

from compiler.errors import SpecError
from compiler.inputs.environments import CONTEXT_KEY, MAX_FSX_DATASETS, parse_environments
from compiler.inputs.grants import Dataset
from compiler.inputs.model import FsxChannel, S3Channel
from tests.project import ENVIRONMENTS, PROJECT, loaded

SHIPPED = json.loads(PROJECT.cdk_json.read_text())["context"][CONTEXT_KEY]
SECRET = "arn:aws:secretsmanager:us-east-1:111111111111:secret:hf-token-AbCdEf"
KEY = "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def _dev(**settings) -> dict:
    raw = copy.deepcopy(SHIPPED)
    raw["dev"].update(settings)
    for key in [k for k, v in raw["dev"].items() if v is ...]:
        del raw["dev"][key]
    return raw


def _broken(**settings) -> str:
    with pytest.raises(SpecError) as info:
        parse_environments(_dev(**settings))
    return str(info.value)


# -------------------------------------------------------------------------------------------- datasets


def _reads(workload) -> set[str]:
    """The datasets a workload's channels read, over S3 (datasets/<name>/...) or FSx (/datasets/<name>...)."""
    paths = [c.key_prefix for c in workload.inputs if isinstance(c, S3Channel) and c.in_data_bucket]
    paths += [c.directory_path.strip("/") for c in workload.inputs if isinstance(c, FsxChannel)]
    return {p.split("/")[1] for p in paths if p.startswith("datasets/")}


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_the_shipped_datasets_name_exactly_the_workloads_that_read_them(env) -> None:
    """workloads/*.yaml read datasets/gpt-tokens/ (four over S3, gpt-torchrun-fsx over FSx), datasets/smoke/ (the two
    smoke workloads, over both) and datasets/tabular/ (the three tabular examples, over S3): cdk.json names each
    reader, and no workload that does not read it."""
    readers: dict[str, set[str]] = {}
    for workload in loaded().workloads(env):
        for name in _reads(workload):
            readers.setdefault(name, set()).add(workload.name)
    declared = {n: set(d.readers) for n, d in ENVIRONMENTS[env].datasets.items()}
    assert declared == readers == {
        "gpt-tokens": {"gpt-finetune-single", "gpt-horovod-mpi", "gpt-smddp", "gpt-smp-v1", "gpt-torchrun-fsx"},
        "smoke": {"platform-smoke", "platform-smoke-gpu"},
        "tabular": {"linear-learner-tabular", "sklearn-tabular", "xgboost-tabular"}}


def test_a_dataset_is_its_prefix_and_its_directory() -> None:
    dataset = Dataset("gpt-tokens", frozenset({"x"}))
    assert (dataset.key_prefix, dataset.file_system_path) == ("datasets/gpt-tokens/", "/datasets/gpt-tokens")


def test_datasets_may_be_left_out() -> None:
    assert parse_environments(_dev(datasets=...))["dev"].datasets == {}


def test_datasets_are_the_environments_with_or_without_a_file_system() -> None:
    env = parse_environments(_dev(fsx=..., datasets={"a": {"readers": ["w"]}}))["dev"]
    assert env.fsx is None and env.datasets == {"a": Dataset("a", frozenset({"w"}))}


def test_datasets_under_fsx_are_refused_naming_where_they_moved() -> None:
    text = _broken(fsx={"deployment_type": "SCRATCH_2", "storage_capacity_gib": 1200,
                        "datasets": {"a": {"readers": ["w"]}}})
    assert "dev.fsx.datasets: datasets are the environment's, read over S3 and FSx alike: move this block to " \
           "dev.datasets" in text


@pytest.mark.parametrize("name", ["a", "gpt-tokens", "a1", "x" * 63])
def test_a_dataset_name_within_bounds_passes(name) -> None:
    assert set(parse_environments(_dev(datasets={name: {"readers": ["w"]}}))["dev"].datasets) == {name}


@pytest.mark.parametrize("name", ["", "-a", "a-", "A", "a_b", "a.b", "a/b", "x" * 64])
def test_a_dataset_name_outside_them_is_refused(name) -> None:
    assert f"dev.datasets.{name}: a dataset's name is a prefix of the data bucket" in _broken(
        datasets={name: {"readers": ["w"]}})


PERSISTENT_2 = {"deployment_type": "PERSISTENT_2", "storage_capacity_gib": 2400, "per_unit_storage_throughput": 250}


def test_eight_datasets_pass_and_nine_are_refused_on_persistent_2() -> None:
    eight = {f"d{i}": {"readers": ["w"]} for i in range(8)}
    assert len(parse_environments(_dev(fsx=PERSISTENT_2, datasets=eight))["dev"].datasets) == 8
    text = _broken(fsx=PERSISTENT_2, datasets=eight | {"d8": {"readers": ["w"]}})
    assert "dev.datasets: has 9 datasets, and the PERSISTENT_2 file system links each by a data repository " \
           "association, at most 8 per file system" in text


@pytest.mark.parametrize("fsx", [..., {"deployment_type": "SCRATCH_2", "storage_capacity_gib": 1200}])
def test_more_datasets_pass_where_nothing_links_each(fsx) -> None:
    """Without a file system, or on one that imports the whole bucket (SCRATCH types), no association is made."""
    nine = {f"d{i}": {"readers": ["w"]} for i in range(9)}
    assert len(parse_environments(_dev(fsx=fsx, datasets=nine))["dev"].datasets) == 9


@pytest.mark.parametrize(("entry", "words"), [
    ({}, "dev.datasets.a.readers: is required"),
    ({"readers": []}, "dev.datasets.a.readers: needs at least 1 item"),
    ({"readers": "w"}, "dev.datasets.a.readers: must be a list of non-empty text items"),
    ({"readers": [""]}, "dev.datasets.a.readers: must be a list of non-empty text items"),
    ({"readers": ["w"], "writers": ["w"]}, "dev.datasets.a.writers: unknown key"),
    (None, "dev.datasets.a: must be a mapping with readers"),
    (["w"], "dev.datasets.a: must be a mapping"),
])
def test_a_dataset_names_its_readers(entry, words) -> None:
    assert words in _broken(datasets={"a": entry})


def test_datasets_is_a_mapping() -> None:
    assert "dev.datasets: must be a mapping" in _broken(datasets=["gpt-tokens"])


def test_the_limits_are_fsxs_own() -> None:
    """8 associations a file system, none on SCRATCH_1, no ImportPath beside one: botocore's FSx model says so."""
    model = botocore.session.get_session().get_service_model("fsx")
    create = model.operation_model("CreateDataRepositoryAssociation").documentation
    assert f"maximum of {MAX_FSX_DATASETS} data repository associations on a file system" in create
    assert "excluding <code>scratch_1</code> deployment type" in create
    import_path = model.shape_for("CreateFileSystemLustreConfiguration").members["ImportPath"].documentation
    assert "not supported for file systems with a data repository association" in import_path
    path = model.operation_model("CreateDataRepositoryAssociation").input_shape.members["FileSystemPath"].documentation
    assert "Two data repository associations cannot have overlapping file system paths" in path


# -------------------------------------------------------------------------------------------- secrets and keys


def test_secrets_and_keys_name_who_may_use_them() -> None:
    env = parse_environments(_dev(secrets={SECRET: {"readers": ["a", "b"]}}, kms_keys={KEY: {"users": ["a"]}}))["dev"]
    assert (env.secrets, env.kms_keys) == ({SECRET: frozenset({"a", "b"})}, {KEY: frozenset({"a"})})


def test_the_shipped_environments_grant_no_secret_and_no_key() -> None:
    # no shipped workload names one (workloads/*.yaml); a team that adds one declares it (docs/security.md#secrets)
    assert all(not env.secrets and not env.kms_keys for env in ENVIRONMENTS.values())


@pytest.mark.parametrize(("block", "arn", "words"), [
    ("secrets", SECRET.removesuffix("-AbCdEf"), "is not a complete Secrets Manager secret ARN"),
    ("secrets", SECRET + "*", "is not a complete Secrets Manager secret ARN"),
    ("secrets", SECRET.replace("111111111111", "222222222222"), "is in 222222222222, us-east-1, but this environment "
                                                                 "runs in 111111111111, us-east-1"),
    ("secrets", SECRET.replace("us-east-1", "us-west-2"), "is in 111111111111, us-west-2"),
    ("kms_keys", "arn:aws:kms:us-east-1:111111111111:alias/team", "is not a KMS key ARN"),
    ("kms_keys", "arn:aws:kms:us-east-1:111111111111:key/*", "is not a KMS key ARN"),
    ("kms_keys", KEY.replace("111111111111", "222222222222"), "is in 222222222222, us-east-1"),
])
def test_a_grant_names_one_secret_or_key_of_the_environment(block, arn, words) -> None:
    names = "readers" if block == "secrets" else "users"
    assert f"dev.{block}.{arn}: {words}" in _broken(**{block: {arn: {names: ["w"]}}})


@pytest.mark.parametrize(("block", "arn", "names"), [("secrets", SECRET, "readers"), ("kms_keys", KEY, "users")])
def test_a_grant_names_its_workloads(block, arn, names) -> None:
    assert f"dev.{block}.{arn}.{names}: is required" in _broken(**{block: {arn: {}}})
    assert f"dev.{block}.{arn}.{names}: needs at least 1 item" in _broken(**{block: {arn: {names: []}}})
    assert f"dev.{block}.{arn}: must be a mapping with {names}" in _broken(**{block: {arn: None}})
