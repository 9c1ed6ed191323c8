"""FSx channels read a dataset that names the workload among its readers, or the workload's own directory.

Datasets are declared per environment in cdk.json (`<env>.datasets.<name>.readers`, read by compiler/inputs/grants.py:
tests/compiler/inputs/test_grant_settings.py); a spec's FSx channel reads a dataset that names it, or its own directory,
nothing else (compiler/rules/fsx_datasets.py). The base spec's workload is `demo`; each refusal has its neighbour just
inside the boundary. Paths and names are literals.
"""

from __future__ import annotations

import dataclasses

import pytest

from compiler.inputs.grants import Dataset
from compiler.inputs.model import FsxChannel
from compiler.inputs.reader import Findings
from compiler.rules import check_in_environment
from compiler.rules.fsx_datasets import fsx_reads_are_granted_datasets
from tests.project import ENVIRONMENTS

DEV = ENVIRONMENTS["dev"]


def with_datasets(**readers: list[str]):
    """The shipped dev environment (with its file system) with exactly these datasets."""
    assert DEV.fsx is not None
    return dataclasses.replace(DEV, datasets={name: Dataset(name, frozenset(names)) for name, names in readers.items()})


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
    assert "add demo to cdk.json, dev.datasets.other.readers" in message


@pytest.mark.parametrize("path", ["/datasets/tokensx", "/datasets/token", "/datasets/Tokens"])
def test_an_undeclared_dataset_is_refused_with_the_declaration_to_add(make, path) -> None:
    [(field, message)] = problems(make, path)
    name = path.rsplit("/", 1)[1]
    assert field == "inputs.train.directory_path"
    assert f"dataset '{name}' is not declared for environment dev (declared: other, tokens)" in message
    assert f"dev.datasets.{name}: {{readers: [demo]}}" in message


@pytest.mark.parametrize("path", ["/datasets", "/datasets/", "/./datasets/."])
def test_all_datasets_at_once_are_refused(make, path) -> None:
    [(field, message)] = problems(make, path)
    assert field == "inputs.train.directory_path"
    assert "holds every dataset of environment dev" in message and "/datasets/<name> (other, tokens)" in message


def test_an_environment_without_datasets_says_none_are_declared(make) -> None:
    [(_, message)] = problems(make, "/datasets/tokens", env=with_datasets())
    assert "(declared: none)" in message and "dev.datasets.tokens: {readers: [demo]}" in message


def test_a_workload_named_datasets_is_no_reader_of_every_dataset(make) -> None:
    assert problems(make, "/datasets/tokens", name="datasets")[0][1].startswith("dataset 'tokens' of environment dev")


# -------------------------------------------------------------------------------------------- other directories


@pytest.mark.parametrize("path", ["/demo", "/demo/", "/./demo/."])
def test_the_workloads_own_directory_may_be_read(make, path) -> None:
    # (a path below it is refused by paths.fsx_channels_pass_no_job_written_entry: tests/compiler/rules/test_paths.py)
    assert problems(make, path) == []


@pytest.mark.parametrize("path", ["/trainer/out", "/demox", "/dem/out", "/Demo/out", "/smoke", "/data/tokens"])
def test_another_directory_is_refused(make, path) -> None:
    [(field, message)] = problems(make, path)
    assert field == "inputs.train.directory_path"
    assert "is neither a dataset nor this workload's own directory /demo/" in message
    assert "/datasets/<name> with demo among its readers in cdk.json (dev.datasets), or /demo" in message


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
