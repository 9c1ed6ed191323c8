"""TensorFlow's `model_dir` is a place the job can write.

The TensorFlow estimator sends the hyperparameter `model_dir`: without `model_dir` in the spec, `s3://<output
path>/<job name>/model` (the SDK's `_default_s3_path`; `/opt/ml/model` only under MPI), and the script saves there
itself (TensorFlow's S3 file system). A job under network isolation, the platform's default, makes no network call and
holds no AWS credentials (SageMaker Developer Guide, "Run Training and Inference Containers in Internet-Free Mode"):
that save fails, after training. The spec keeps the SDK's meaning, so the rule refuses it and names the two values that
work: a path in the container, `/opt/ml/model`, which SageMaker itself uploads to the workload's output as
`model.tar.gz` when the job ends, or `false` for a script that does not read it.
"""

from __future__ import annotations

import json

from compiler.compilation.request import MODEL_DIR
from compiler.inputs.reader import Findings
from compiler.rules.registry import compiled_rule
from compiler.rules.views import CompiledView


@compiled_rule
def an_isolated_job_writes_its_model_locally(view: CompiledView, f: Findings) -> None:
    request = view.request
    if not request.get("EnableNetworkIsolation"):
        return
    encoded = (request.get("HyperParameters") or {}).get(MODEL_DIR)
    try:
        value = json.loads(encoded) if isinstance(encoded, str) else None
    except ValueError:
        return
    if view.workload.framework != "tensorflow" or not isinstance(value, str) or not value.startswith("s3://"):
        return
    f.problem("model_dir", "the TensorFlow estimator's default model_dir is an S3 location the script writes itself "
              "(s3://<output>/<job>/model), and with network isolation on (the default) the job has no network and "
              "no credentials to write it: set model_dir: /opt/ml/model (SageMaker uploads that folder to the "
              "workload's output prefix as model.tar.gz when the job ends; the SDK's own choice under MPI), or "
              "model_dir: false if the script does not read it")
