"""Network isolation is on by default, as the SDK sends it (the code channel and a local sagemaker_submit_directory);
off only with a reason, and never with secrets.

The base spec (tests/compiler/conftest.py) is a two-node torchrun job named `demo` with a source_dir. Request
equality with the real SDK, isolated by default, is tests/compiler/compilation/test_sdk_parity.py's (sdk_reference passes
enable_network_isolation=True where the spec leaves it to the platform).
"""

from __future__ import annotations

import json

import pytest

from compiler.compilation.request import CODE_CHANNEL_SOURCEDIR, compile_request
from compiler.facts import placeholders as ph
from compiler.inputs.reader import Findings
from compiler.rules.isolation import network_isolation_is_off_only_with_a_reason
from tests.project import ENVIRONMENTS, loaded

DEV = ENVIRONMENTS["dev"]
REASON = "downloads a tokenizer from the Hugging Face Hub through the environment's NAT gateway"


def test_a_spec_that_says_nothing_is_isolated_as_the_sdk_sends_it(make) -> None:
    workload = make()
    request = compile_request(workload, DEV, training_image="img")
    assert workload.enable_network_isolation and request["EnableNetworkIsolation"] is True
    code = request["InputDataConfig"][-1]
    assert code == {"DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": ph.ref(ph.SOURCE_DIR_S3_URI),
                                                    "S3DataDistributionType": "FullyReplicated"}},
                    "ChannelName": "code"}
    assert json.loads(request["HyperParameters"]["sagemaker_submit_directory"]) == CODE_CHANNEL_SOURCEDIR
    assert CODE_CHANNEL_SOURCEDIR.startswith("/opt/ml/input/data/code/")  # where SageMaker puts the channel


def test_off_without_a_reason_is_refused_naming_the_fix(rejects) -> None:
    rejects("enable_network_isolation", "network_isolation_off_reason", "on by default",
            enable_network_isolation=False)


def test_off_with_a_reason_sends_no_isolation_and_no_code_channel(make) -> None:
    workload = make(enable_network_isolation=False, network_isolation_off_reason=REASON)
    request = compile_request(workload, DEV, training_image="img")
    assert "EnableNetworkIsolation" not in request
    assert all(c["ChannelName"] != "code" for c in request.get("InputDataConfig", []))
    assert json.loads(request["HyperParameters"]["sagemaker_submit_directory"]) == ph.ref(ph.SOURCE_DIR_S3_URI)


def test_a_reason_with_isolation_on_is_a_warning(make) -> None:
    for explicit in ({}, {"enable_network_isolation": True}):
        workload = make(network_isolation_off_reason=REASON, **explicit)
        findings = Findings("demo.yaml")
        network_isolation_is_off_only_with_a_reason(workload, findings)
        assert not findings.problems
        assert [w.field for w in findings.warnings] == ["network_isolation_off_reason"]


def test_an_image_only_job_is_isolated_without_a_code_channel(make) -> None:
    image = f"{DEV.account}.dkr.ecr.{DEV.region}.amazonaws.com/trainer:1"
    workload = make(framework=..., framework_version=..., py_version=..., entry_point=..., source_dir=...,
                    distribution=..., image_uri=image)
    request = compile_request(workload, DEV, training_image=image)
    assert request["EnableNetworkIsolation"] is True and "InputDataConfig" not in request


@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
def test_every_shipped_workload_is_isolated_or_says_why_not(env: str) -> None:
    workloads = loaded().workloads(env)
    assert workloads
    for workload in workloads:
        assert workload.enable_network_isolation or workload.network_isolation_off_reason, workload.name


def test_an_fsx_reader_without_isolation_is_warned_that_the_path_is_no_longer_the_bound(make) -> None:
    off = {"enable_network_isolation": False, "network_isolation_off_reason": REASON}
    fsx = {"train": {"directory_path": "/datasets/tokens", "file_system_access_mode": "ro"}}
    for inputs, changes, warned in ((fsx, off, ["enable_network_isolation"]), (fsx, {}, []),
                                    ({"train": "datasets/tokens/"}, off, [])):
        findings = Findings("demo.yaml")
        network_isolation_is_off_only_with_a_reason(make(inputs=inputs, **changes), findings)
        assert [w.field for w in findings.warnings] == warned, (inputs, changes)
