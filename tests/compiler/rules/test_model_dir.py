"""TensorFlow's model_dir is somewhere an isolated job can write (issue 36).

The SDK sends `model_dir` = `s3://<output path>/<job name>/model` unless the spec sets it or MPI is on
(`sagemaker/tensorflow/estimator.py`, `TensorFlow.hyperparameters` and `_default_s3_path` of the pinned 2.257.7);
the values here are read from the compiled request, which the parity tests hold to the SDK's.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from compiler.inputs.tracked import NotInGitWarning
from compiler.pipeline import _Bundles, compile_workload
from tests.project import ENVIRONMENTS

DEV = ENVIRONMENTS["dev"]
TENSORFLOW = {"framework": "tensorflow", "framework_version": "2.14.1", "py_version": "py310",
              "instance_type": "ml.g5.12xlarge", "distribution": {"multi_worker_mirrored_strategy": {"enabled": True}}}


def problems(make, spec_dir: Path, **changes) -> tuple[str, list[str]]:
    workload = make(**{**TENSORFLOW, "hyperparameters": {"epochs": 1}, **changes})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotInGitWarning)
        result, found = compile_workload(workload, DEV, {}, _Bundles(spec_dir))
    model_dir = result.request["HyperParameters"].get("model_dir")
    return json.loads(model_dir) if model_dir else "", [str(p) for p in found if ": model_dir: " in str(p)]


def test_the_sdks_s3_default_is_refused_under_isolation_naming_both_fixes(make, spec_dir) -> None:
    value, found = problems(make, spec_dir)
    assert value.startswith("s3://")  # what the SDK sends for a multi_worker_mirrored_strategy job
    assert len(found) == 1
    for words in ("network isolation", "model_dir: /opt/ml/model", "model_dir: false", "model.tar.gz"):
        assert words in found[0]


@pytest.mark.parametrize("change", [{"model_dir": "/opt/ml/model"}, {"model_dir": False},
                                    {"distribution": {"mpi": {"enabled": True, "processes_per_host": 4}}},
                                    {"enable_network_isolation": False,
                                     "network_isolation_off_reason": "saves its model to S3 itself"}])
def test_a_local_path_no_model_dir_mpi_or_isolation_off_pass(make, spec_dir, change) -> None:
    value, found = problems(make, spec_dir, **change)
    assert found == []
    assert not str(value).startswith("s3://") or change.get("enable_network_isolation") is False


def test_other_frameworks_send_no_model_dir(make, spec_dir) -> None:
    workload = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotInGitWarning)
        result, found = compile_workload(workload, DEV, {}, _Bundles(spec_dir))
    assert "model_dir" not in result.request["HyperParameters"] and found == []
