"""FSx channels never mount the file system's root, write only on /<workload name> and mount nothing below it;
checkpoints stay in /opt/ml/.

The base spec's workload is named `demo`. Each refusal has its neighbour just inside the boundary.
"""

from __future__ import annotations

import dataclasses

import pytest

from compiler.compilation.request import compile_request
from compiler.errors import SpecError
from compiler.inputs.model import FsxChannel
from compiler.inputs.reader import Findings
from compiler.rules.paths import fsx_channels_pass_no_job_written_entry, fsx_channels_stay_in_bounds
from tests.project import ENVIRONMENTS


def fsx(path: str, mode: str = "ro") -> dict:
    return {"train": {"directory_path": path, "file_system_access_mode": mode}}


def accepted(make, **changes):
    try:
        return make(**changes)
    except SpecError as error:
        pytest.fail(f"{changes} was refused: {error}")


# -------------------------------------------------------------------------------------------- the file system's root


@pytest.mark.parametrize("path", ["/", "/.", "/./", "//", "/./."])
@pytest.mark.parametrize("mode", ["ro", "rw"])
def test_the_root_is_refused(rejects, path, mode) -> None:
    rejects("inputs.train.directory_path", "root of the file system", inputs=fsx(path, mode))


@pytest.mark.parametrize("path", ["/..", "/datasets/..", "/datasets/../..", "/demo/../other", "/../demo"])
def test_dot_dot_segments_are_refused(rejects, path) -> None:
    # refused as the spec is read (compiler/inputs/spec/data.py); the rule refuses them again for a Workload built otherwise
    rejects("inputs.train.directory_path", "path inside the file system", inputs=fsx(path, "ro"))


@pytest.mark.parametrize("path", ["/d", "/datasets/gpt-tokens", "/./datasets/x", "/datasets/./x/", "/other-workload/out"])
def test_a_directory_below_the_root_may_be_read(make, path) -> None:
    # this rule bounds the root and writes; which directories a workload reads is its environment's to say
    # (cdk.json datasets, compiler/rules/fsx_datasets.py; tests/compiler/rules/test_fsx_datasets.py)
    accepted(make, inputs=fsx(path, "ro"))


def test_the_request_mounts_the_path_under_the_mount_name(make) -> None:
    workload = accepted(make, inputs=fsx("/demo", "rw"))
    source = compile_request(workload, next(iter(ENVIRONMENTS.values())), training_image="x")["InputDataConfig"][0]
    assert source["DataSource"]["FileSystemDataSource"]["DirectoryPath"] == "/${FsxMountName}/demo"


# -------------------------------------------------------------------------------------------- rw on the workload's own


@pytest.mark.parametrize("path", ["/demo", "/demo/", "/./demo", "//demo/."])
def test_rw_on_the_workloads_own_directory_passes(make, path) -> None:
    accepted(make, inputs=fsx(path, "rw"))


@pytest.mark.parametrize("path", ["/demox/out", "/demo-x", "/dem", "/Demo/out", "/datasetsx/demo"])
def test_rw_elsewhere_is_refused(rejects, path) -> None:
    rejects("inputs.train.file_system_access_mode", "only on the workload's own directory /demo", "mount /demo rw, "
            "or mount this one ro", inputs=fsx(path, "rw"))


@pytest.mark.parametrize("path", ["/datasets", "/datasets/demo", "/./datasets/x/y"])
def test_rw_under_datasets_is_refused(rejects, path) -> None:
    rejects("inputs.train.file_system_access_mode", "rw under /datasets/ is refused", "mount it ro, or write in "
            "the workload's own directory, /demo", inputs=fsx(path, "rw"))


# -------------------------------------------------------------------------------------------- nothing below the own


@pytest.mark.parametrize("mode", ["ro", "rw"])
@pytest.mark.parametrize(("path", "below"), [("/demo/out", "out"), ("/./demo/out", "out"), ("//demo//out/./x", "out/x"),
                                             ("/demo/a/b/", "a/b")])
def test_a_path_below_the_own_directory_is_refused(rejects, path, below, mode) -> None:
    """Probe (issue 35): a run writes `/demo/out` as a symbolic link to another workload's directory; a later run that
    mounted /demo/out would mount whatever SageMaker's mount makes of the link (not documented), so none does."""
    message = rejects("inputs.train.directory_path", "below the workload's own directory /demo, whose entries its "
                      "jobs write", f"mount /demo itself and open {below} inside it (in the job, "
                      f"/opt/ml/input/data/train/{below})", inputs=fsx(path, mode))
    assert "symbolic link" in message


@pytest.mark.parametrize("path", ["/demo", "/demo/", "/./demo/.", "/demox/out", "/datasets/demo/out", "/other/demo/x"])
def test_the_own_directory_itself_and_other_paths_are_not_this_rules(make, path) -> None:
    workload = dataclasses.replace(make(), inputs=(FsxChannel("train", path, "ro"),))
    findings = Findings("demo.yaml")
    fsx_channels_pass_no_job_written_entry(workload, findings)
    assert findings.problems == []


def test_a_workload_named_datasets_is_left_to_the_datasets_rules(make) -> None:
    # /datasets/<name>/... is the environment's datasets, imported from the data bucket, never this workload's writes
    workload = dataclasses.replace(make(), name="datasets", inputs=(FsxChannel("train", "/datasets/x/y", "ro"),))
    findings = Findings("demo.yaml")
    fsx_channels_pass_no_job_written_entry(workload, findings)
    assert findings.problems == []


@pytest.mark.parametrize("path", ["/datasets", "/datasets/x", "/datasets/datasets"])
def test_rw_under_datasets_is_refused_even_to_a_workload_named_datasets(make, path) -> None:
    with pytest.raises(SpecError) as info:
        make(name="datasets", inputs=fsx(path, "rw"))
    [message] = [p.message for p in info.value.problems if p.field == "inputs.train.file_system_access_mode"]
    assert message.startswith("rw under /datasets/ is refused") and message.endswith("read only; mount it ro")


# -------------------------------------------------------------------------------------------- checkpoint_local_path


@pytest.mark.parametrize("path", ["/opt/ml/checkpoints", "/opt/ml/checkpoints/", "/opt/ml/x", "/opt//ml/./checkpoints",
                                  "/opt/ml/checkpoints/run-1", "/opt/ml/codes", "/opt/ml/inputs", "/opt/ml/model/ckpt"])
def test_a_checkpoint_path_under_opt_ml_passes(make, path) -> None:
    workload = accepted(make, checkpoints=True, checkpoint_local_path=path)
    assert workload.checkpoint_local_path == path  # sent as written, as the SDK sends it


@pytest.mark.parametrize(("path", "words"), [
    ("/opt/ml/../../etc", "'..' segment"),
    ("/opt/ml/checkpoints/..", "'..' segment"),
    ("/opt/ml", "not under /opt/ml/"),
    ("/opt/ml/", "not under /opt/ml/"),
    ("/opt/ml/.", "not under /opt/ml/"),
    ("/opt/mlx/checkpoints", "not under /opt/ml/"),
    ("/opt/checkpoints", "not under /opt/ml/"),
    ("/etc", "not under /opt/ml/"),
    ("/", "not under /opt/ml/"),
    ("/opt/ml/code", "holds the training code"),
    ("/opt/ml/code/ckpt", "holds the training code"),
    ("/opt/ml/input", "input data and configuration"),
    ("/opt/ml/./input/data/train", "input data and configuration"),
])
def test_a_checkpoint_path_outside_opt_ml_is_refused(rejects, path, words) -> None:
    rejects("checkpoint_local_path", words, "/opt/ml/checkpoints", checkpoints=True, checkpoint_local_path=path)


def test_the_rule_refuses_dot_dot_in_a_workload_built_without_the_reader(make) -> None:
    """The reader refuses '..' first; the rule does not rely on it."""
    workload = dataclasses.replace(make(), inputs=(FsxChannel("train", "/demo/../other", "rw"),))
    findings = Findings("demo.yaml")
    fsx_channels_stay_in_bounds(workload, findings)
    assert [(p.field, "'..' segment" in p.message) for p in findings.problems] == [("inputs.train.directory_path", True)]
