"""FSx datasets: declared per environment in cdk.json (`fsx.datasets`), read only by the workloads they name.

cdk.json's `fsx.datasets.<name>.readers` is checked as it is read (compiler/inputs/environments.py); a spec's FSx channel
reads a dataset that names it, or its own directory, nothing else (compiler/rules/fsx_datasets.py). The base spec's
workload is `demo`; each refusal has its neighbour just inside the boundary. Paths and names are literals.
"""

from __future__ import annotations

import copy
import dataclasses
import json

import botocore.session
import pytest

from compiler.errors import SpecError
from compiler.inputs.environments import CONTEXT_KEY, MAX_FSX_DATASETS, FsxDataset, parse_environments
from compiler.inputs.model import FsxChannel
from compiler.inputs.reader import Findings
from compiler.rules import check_in_environment
from compiler.rules.fsx_datasets import fsx_reads_are_granted_datasets
from tests.project import ENVIRONMENTS, PROJECT

SHIPPED = json.loads(PROJECT.cdk_json.read_text())["context"][CONTEXT_KEY]
DEV = ENVIRONMENTS["dev"]


def with_datasets(**readers: list[str]):
    """The shipped dev environment with exactly these datasets."""
    assert DEV.fsx is not None
    datasets = {name: FsxDataset(name, frozenset(names)) for name, names in readers.items()}
    return dataclasses.replace(DEV, fsx=dataclasses.replace(DEV.fsx, datasets=datasets))


def problems(make, path: str, mode: str = "ro", env=None, name: str = "demo") -> list[tuple[str, str]]:
    workload = dataclasses.replace(make(), name=name, inputs=(FsxChannel("train", path, mode),))
    findings = Findings("demo.yaml")
    fsx_reads_are_granted_datasets(workload, env or with_datasets(tokens=["demo"], other=["trainer"]), findings)
    return [(p.field, p.message) for p in findings.problems]


# -------------------------------------------------------------------------------------------- reading a dataset


@pytest.mark.parametrize("path", ["/datasets/tokens", "/datasets/tokens/", "/./datasets//tokens/shard-0",
                                  "/datasets/tokens/a/b"])
def test_a_reader_reads_its_dataset(make, path) -> None:
    assert problems(make, path) == []


@pytest.mark.parametrize("path", ["/datasets/other", "/datasets/other/shard-0"])
def test_a_dataset_that_does_not_name_the_workload_is_refused(make, path) -> None:
    [(field, message)] = problems(make, path)
    assert field == "inputs.train.directory_path"
    assert "read by trainer, not demo" in message
    assert "add demo to cdk.json, dev.fsx.datasets.other.readers" in message


@pytest.mark.parametrize("path", ["/datasets/tokensx", "/datasets/token", "/datasets/Tokens"])
def test_an_undeclared_dataset_is_refused_with_the_declaration_to_add(make, path) -> None:
    [(field, message)] = problems(make, path)
    name = path.rsplit("/", 1)[1]
    assert field == "inputs.train.directory_path"
    assert f"dataset '{name}' is not declared for environment dev (declared: other, tokens)" in message
    assert f"dev.fsx.datasets.{name}: {{readers: [demo]}}" in message


@pytest.mark.parametrize("path", ["/datasets", "/datasets/", "/./datasets/."])
def test_all_datasets_at_once_are_refused(make, path) -> None:
    [(field, message)] = problems(make, path)
    assert field == "inputs.train.directory_path"
    assert "holds every dataset of environment dev" in message and "/datasets/<name> (other, tokens)" in message


def test_an_environment_without_datasets_says_none_are_declared(make) -> None:
    [(_, message)] = problems(make, "/datasets/tokens", env=with_datasets())
    assert "(declared: none)" in message and "dev.fsx.datasets.tokens: {readers: [demo]}" in message


def test_a_workload_named_datasets_is_no_reader_of_every_dataset(make) -> None:
    assert problems(make, "/datasets/tokens", name="datasets")[0][1].startswith("dataset 'tokens' of environment dev")


# -------------------------------------------------------------------------------------------- other directories


@pytest.mark.parametrize("path", ["/demo", "/demo/", "/demo/out", "/./demo//out/x"])
def test_the_workloads_own_directory_may_be_read(make, path) -> None:
    assert problems(make, path) == []


@pytest.mark.parametrize("path", ["/trainer/out", "/demox", "/dem/out", "/Demo/out", "/smoke", "/data/tokens"])
def test_another_directory_is_refused(make, path) -> None:
    [(field, message)] = problems(make, path)
    assert field == "inputs.train.directory_path"
    assert "is neither a dataset nor this workload's own directory /demo/" in message
    assert "/datasets/<name> with demo among its readers in cdk.json (dev.fsx.datasets), or /demo/..." in message


@pytest.mark.parametrize("path", ["/", "/..", "/demo/../trainer"])
def test_the_root_and_dot_dot_are_left_to_the_path_rule(make, path) -> None:
    assert problems(make, path) == []  # paths.fsx_channels_stay_in_bounds refuses them (tests/compiler/rules/test_paths.py)


def test_an_environment_without_a_file_system_is_left_to_its_own_rule(make) -> None:
    assert problems(make, "/trainer/out", env=dataclasses.replace(DEV, fsx=None)) == []


def test_the_rule_is_registered(make) -> None:
    workload = dataclasses.replace(make(), inputs=(FsxChannel("train", "/trainer/out", "ro"),))
    findings = Findings("demo.yaml")
    check_in_environment(workload, DEV, findings)
    assert any(p.field == "inputs.train.directory_path" and "neither a dataset" in p.message
               for p in findings.problems)


# -------------------------------------------------------------------------------------------- cdk.json


def _dev_fsx(**fsx) -> dict:
    raw = copy.deepcopy(SHIPPED)
    raw["dev"]["fsx"] = {"deployment_type": "SCRATCH_2", "storage_capacity_gib": 1200} | fsx
    return raw


def _broken(**fsx) -> str:
    with pytest.raises(SpecError) as info:
        parse_environments(_dev_fsx(**fsx))
    return str(info.value)


def test_the_shipped_datasets_name_the_shipped_readers() -> None:
    for env in ("dev", "prod"):
        fsx = ENVIRONMENTS[env].fsx
        assert fsx is not None
        assert {n: set(d.readers) for n, d in fsx.datasets.items()} == {
            "gpt-tokens": {"gpt-torchrun-fsx"}, "smoke": {"platform-smoke", "platform-smoke-gpu"}}


def test_a_dataset_is_its_directory_and_its_prefix() -> None:
    dataset = FsxDataset("gpt-tokens", frozenset({"x"}))
    assert (dataset.file_system_path, dataset.key_prefix) == ("/datasets/gpt-tokens", "datasets/gpt-tokens/")


def test_datasets_may_be_left_out() -> None:
    fsx = parse_environments(_dev_fsx())["dev"].fsx
    assert fsx is not None and fsx.datasets == {}


@pytest.mark.parametrize("name", ["a", "gpt-tokens", "a1", "x" * 63])
def test_a_dataset_name_within_bounds_passes(name) -> None:
    fsx = parse_environments(_dev_fsx(datasets={name: {"readers": ["w"]}}))["dev"].fsx
    assert fsx is not None and set(fsx.datasets) == {name}


@pytest.mark.parametrize("name", ["", "-a", "a-", "A", "a_b", "a.b", "a/b", "x" * 64])
def test_a_dataset_name_outside_them_is_refused(name) -> None:
    assert f"dev.fsx.datasets.{name}: a dataset's name is a directory" in _broken(datasets={name: {"readers": ["w"]}})


def test_eight_datasets_pass_and_nine_are_refused() -> None:
    eight = {f"d{i}": {"readers": ["w"]} for i in range(8)}
    fsx = parse_environments(_dev_fsx(datasets=eight))["dev"].fsx
    assert fsx is not None and len(fsx.datasets) == 8
    text = _broken(datasets=eight | {"d8": {"readers": ["w"]}})
    assert "dev.fsx.datasets: has 9 datasets; a file system takes at most 8 data repository associations" in text


@pytest.mark.parametrize("kind", ["SCRATCH_1", "SCRATCH_2"])
def test_datasets_on_types_linked_by_import_path_say_who_reads(kind) -> None:
    """SCRATCH types keep the whole-bucket ImportPath (no association): their datasets bound the specs' reads only."""
    fsx = parse_environments(_dev_fsx(deployment_type=kind, datasets={"a": {"readers": ["w"]}}))["dev"].fsx
    assert fsx is not None and list(fsx.datasets) == ["a"]


@pytest.mark.parametrize(("entry", "words"), [
    ({}, "dev.fsx.datasets.a.readers: is required"),
    ({"readers": []}, "dev.fsx.datasets.a.readers: needs at least 1 item"),
    ({"readers": "w"}, "dev.fsx.datasets.a.readers: must be a list of non-empty text items"),
    ({"readers": [""]}, "dev.fsx.datasets.a.readers: must be a list of non-empty text items"),
    ({"readers": ["w"], "writers": ["w"]}, "dev.fsx.datasets.a.writers: unknown key"),
    (None, "dev.fsx.datasets.a: must be a mapping with readers"),
    (["w"], "dev.fsx.datasets.a: must be a mapping"),
])
def test_a_dataset_names_its_readers(entry, words) -> None:
    assert words in _broken(datasets={"a": entry})


def test_datasets_is_a_mapping() -> None:
    assert "dev.fsx.datasets: must be a mapping" in _broken(datasets=["gpt-tokens"])


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
