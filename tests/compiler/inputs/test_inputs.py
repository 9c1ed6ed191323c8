"""`inputs` written as one TrainingInput (or FileSystemInput), the spelling of `fit(TrainingInput(...))`, is the one
channel the SDK makes of it, named `training` (sagemaker/job.py, `_Job._format_inputs_to_input_config`), checked
against the real SDK's fit() like the other parity tests; an argument of TrainingInput is never a channel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.errors import SpecError
from tests import sdk_reference as sdk
from tests.compiler.compilation.test_sdk_parity import DEV, accepted, compiled


@pytest.fixture(scope="module")
def code_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("project")
    (directory / "src").mkdir()
    (directory / "src" / "train.py").write_text("print('training')\n")
    return directory


SPEC: dict[str, Any] = {
    "name": "recordio", "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311",
    "entry_point": "train.py", "source_dir": "src", "instance_type": "ml.g5.2xlarge",
    "inputs": {"s3_data": "s3://my-datasets/train/", "content_type": "application/x-recordio"},
}


def test_one_training_input_is_the_channel_fit_names_training(code_dir: Path) -> None:
    ours = compiled(SPEC, DEV, code_dir)
    framework, kwargs, _ = sdk.estimator_arguments({k: v for k, v in SPEC.items() if k != "inputs"}, ours, code_dir)
    training_input = sdk._sagemaker().inputs.TrainingInput(s3_data="s3://my-datasets/train/",
                                                          content_type="application/x-recordio")
    theirs = sdk.capture_create_training_job(framework, job_name=ours["TrainingJobName"], inputs=training_input,
                                             region=DEV.region, **kwargs)
    expected = [{
        "ChannelName": "training",
        "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://my-datasets/train/",
                                        "S3DataDistributionType": "FullyReplicated"}},
        "ContentType": "application/x-recordio",
    }]
    # with network isolation (the default) both also carry the code as the channel `code`, after the inputs
    for request in (theirs, ours):
        assert request["InputDataConfig"][:-1] == expected and request["InputDataConfig"][-1]["ChannelName"] == "code"


@pytest.mark.parametrize("location", ["s3://my-datasets/train/", "datasets/train/"])
def test_one_location_is_the_channel_fit_names_training(location: str, code_dir: Path) -> None:
    """`inputs: s3://...`, the spelling of fit("s3://...") (the SDK's own tests, `tf.fit(inputs="s3://mybucket/train")`):
    the real SDK's fit() given the same one location sends the same channels; a key prefix is in the data bucket."""
    spec = SPEC | {"inputs": location}
    ours = compiled(spec, DEV, code_dir)
    framework, kwargs, _ = sdk.estimator_arguments({k: v for k, v in spec.items() if k != "inputs"}, ours, code_dir)
    theirs = sdk.capture_create_training_job(framework, job_name=ours["TrainingJobName"],
                                             inputs=sdk.s3_location(location), region=DEV.region, **kwargs)
    assert ours["InputDataConfig"] == theirs["InputDataConfig"]
    assert ours["InputDataConfig"][0]["ChannelName"] == "training"


@pytest.mark.parametrize(("location", "fix"), [
    ("/abs/path", "write it without a leading '/'"),
    ("file:///data", "upload the data to the environment's data bucket and give its key prefix"),
    ("", "must be an s3:// URI or a key prefix in the environment's data bucket"),
])
def test_one_location_that_is_no_s3_location_is_refused_at_inputs(location: str, fix: str, code_dir: Path) -> None:
    with pytest.raises(SpecError) as refused:
        accepted(SPEC | {"inputs": location}, DEV, code_dir)
    assert [p.field for p in refused.value.problems] == ["inputs"], str(refused.value)
    assert fix in str(refused.value)


def test_a_key_prefix_with_training_input_arguments_is_one_channel_too(code_dir: Path) -> None:
    spec = SPEC | {"inputs": {"s3_data": "datasets/tokens/", "input_mode": "FastFile", "distribution": "ShardedByS3Key"}}
    workload = accepted(spec, DEV, code_dir)
    [channel] = workload.inputs
    assert (channel.name, channel.s3_data, channel.input_mode, channel.distribution) == (
        "training", "datasets/tokens/", "FastFile", "ShardedByS3Key")


def test_one_file_system_input_is_the_channel_training(code_dir: Path) -> None:
    spec = SPEC | {"inputs": {"directory_path": "/recordio", "file_system_access_mode": "ro"}}
    workload = accepted(spec, DEV, code_dir)
    assert [c.name for c in workload.inputs] == ["training"]


@pytest.mark.parametrize(("inputs", "expected"), [
    ({"s3_data": "s3://my-datasets/train/", "validation": "s3://my-datasets/val/"},
     "inputs.s3_data: is an argument of TrainingInput, which fit() makes one channel named 'training', but "
     "validation are not: write each channel under its name, e.g. {training: {s3_data: ...}, validation: ...}"),
    ({"train": "s3://my-datasets/train/", "content_type": "application/x-recordio"},
     "inputs.content_type: is an argument of TrainingInput or FileSystemInput, not a channel: put it in the channel it "
     "belongs to, e.g. {train: {s3_data: ..., content_type: application/x-recordio}}"),
])
def test_arguments_mixed_with_channels_are_refused_naming_the_fix(inputs: dict[str, Any], expected: str,
                                                                   code_dir: Path) -> None:
    with pytest.raises(SpecError) as refused:
        accepted(SPEC | {"inputs": inputs}, DEV, code_dir)
    assert f"recordio.yaml: {expected}" in str(refused.value).splitlines()


def test_a_channel_named_s3_data_is_still_a_channel(code_dir: Path) -> None:
    workload = accepted(SPEC | {"inputs": {"s3_data": {"s3_data": "s3://my-datasets/train/"}}}, DEV, code_dir)
    assert [(c.name, c.s3_data) for c in workload.inputs] == [("s3_data", "s3://my-datasets/train/")]


def test_s3_reads_are_the_s3_channels_and_the_model_channel(tmp_path: Path) -> None:
    """What the rules check and the execution role grants: every S3 channel, and `model_uri` as the channel SageMaker
    adds for it (named by `model_channel_name`); FSx channels read no S3 location."""
    from compiler.spec import parse_workload

    (tmp_path / "train.py").write_text("print('hi')\n")
    raw = {"name": "demo", "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311",
           "entry_point": "train.py", "instance_type": "ml.g5.2xlarge", "instance_count": 1,
           "inputs": {"train": "datasets/a/", "extra": "s3://other-bucket/b/c", "fsx": {"directory_path": "/datasets/d"}},
           "model_uri": "s3://models/m/model.tar.gz", "model_channel_name": "weights"}
    workload = parse_workload(raw, source="demo.yaml", spec_dir=tmp_path, project_root=tmp_path)
    reads = {where: (c.name, c.bucket, c.key_prefix) for where, c in workload.s3_reads}
    assert reads == {"inputs.train": ("train", None, "datasets/a/"),
                     "inputs.extra": ("extra", "other-bucket", "b/c"),
                     "model_uri": ("weights", "models", "m/model.tar.gz")}
