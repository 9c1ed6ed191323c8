"""The compiler builds the same CreateTrainingJob request as the real SageMaker Python SDK v2.

For each case, one spec goes two ways: through `parse_workload`, the environment's rules and `compile_request`
(placeholders then filled with deploy-time values), and, as the same estimator arguments with the same
deploy-time values, through the real `sagemaker==2.257.7` estimator's `fit()` (captured offline by
tests/sdk_reference.py, which also maps the spec's mappings to the SDK's objects). HyperParameters must be
identical; every other field equal, except the differences listed in ALLOWED_DIFFERENCES, each with its reason.
Every compiled request also passes the full service-model validation, and so does every shipped workload in
every environment. What the SDK refuses, the spec refuses, naming the field.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ParamValidationError

from compiler.compilation.request import TAG_ENVIRONMENT, TAG_WORKLOAD, compile_request
from compiler.errors import SpecError
from compiler.facts import placeholders
from compiler.inputs.environments import Environment
from compiler.inputs.grants import Dataset
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.inputs.spec.keys import SDK_ARGUMENTS
from compiler.rules import check_in_environment
from compiler.sdk import service_model
from compiler.spec import parse_workload, read_spec_file
from tests import sdk_reference as sdk
from tests.project import ENVIRONMENTS, PROJECT, SHIPPED, loaded

RUN_ID = sdk.RUN_ID
VALUES = sdk.DEPLOY_VALUES
values_for = sdk.deploy_values

# dev, with the external buckets the cases read from allowed (an environment rule: inputs.<channel> and
# model_uri may name only buckets the environment lets its roles read), the datasets of its data bucket they read and
# the keys they name declared (other rules: a workload reads a dataset, and uses a key, the environment grants it;
# `accepted` grants each case's workload all of them: the cases are about the request, the grants have their tests in
# tests/compiler/rules/).
EXTERNAL_BUCKETS = ("my-datasets", "my-models")
assert ENVIRONMENTS["dev"].fsx is not None
DATASETS = {name: Dataset(name, frozenset()) for name in (
    "tokens", "csv", "recordio", "tabular", "instructions", "vocab", "images", "x", "train",
    "fm", "km", "mnist", "rcf", "s2s", "ss", "t", "taxi", "v")}  # the second line: test_tabular_parity.py's
_REGION, _ACCOUNT = ENVIRONMENTS["dev"].region, ENVIRONMENTS["dev"].account
# Keys must be ARNs of the environment's account and region (another environment rule).
DEV_KEY = f"arn:aws:kms:{_REGION}:{_ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
DEV_KEY_2 = f"arn:aws:kms:{_REGION}:{_ACCOUNT}:key/abcd1234-12ab-34cd-56ef-1234567890ab"
DEV = dataclasses.replace(ENVIRONMENTS["dev"], external_data_buckets=EXTERNAL_BUCKETS, datasets=DATASETS,
                          kms_keys={DEV_KEY: frozenset(), DEV_KEY_2: frozenset()})
# An environment that encrypts traffic between training nodes unless a spec says otherwise (with a reason).
ENCRYPTING = dataclasses.replace(DEV, name="secure", encrypt_inter_container_traffic=True)
TRAINING_PLAN = f"arn:aws:sagemaker:{DEV.region}:{DEV.account}:training-plan/gpt-reserved-p5"
HUB_CONTENT_ARN = f"arn:aws:sagemaker:{DEV.region}:aws:hub-content/SageMakerPublicHub/Model/meta-textgeneration-llama-3-8b/2.0.0"


@pytest.fixture(scope="module")
def code_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project: train.py beside the specs, a source_dir `src`, and a dependency folder `lib/helpers`."""
    directory = tmp_path_factory.mktemp("project")
    (directory / "train.py").write_text("print('training')\n")
    (directory / "src").mkdir()
    (directory / "src" / "train.py").write_text("import model\n")
    (directory / "src" / "model.py").write_text("LAYERS = 12\n")
    (directory / "lib" / "helpers").mkdir(parents=True)
    (directory / "lib" / "helpers" / "__init__.py").write_text("")
    (directory / "src" / "launch.sh").write_text("torchrun train.py\n")  # a shell entry point (REAL_CALL_CASES)
    (directory / "model-script").mkdir()  # an entry point in a subfolder, without source_dir (REAL_CALL_CASES)
    (directory / "model-script" / "mnist.py").write_text("print('mnist')\n")
    return directory


# ---------------------------------------------------------------------------------------------------------------
# The cases: a spec in the workload YAML's shape (SDK argument names), realistic for its strategy.
# ---------------------------------------------------------------------------------------------------------------

EVERY_JSON_TYPE = {
    "epochs": 3,
    "learning_rate": 3e-4,
    "warmup_ratio": 0.05,
    "batch_size": "10",  # a string that looks like a number stays a string: sent as "\"10\""
    "bf16": True,
    "resume": False,
    "optimizer": "adamw",
    "betas": [0.9, 0.95],
    "model": {"layers": 12, "heads": 12, "dropout": 0.1, "tie_embeddings": True, "name": "gpt-small"},
    "empty": "",
    "unicode": "données",
    "big": 12345678901234,
    "negative": -1,
}

SMP_V1_PARAMETERS = {
    "partitions": 2,
    "microbatches": 4,
    "placement_strategy": "spread",
    "pipeline": "interleaved",
    "optimize": "speed",
    "ddp": True,
}
# SMP v2 as AWS's current notebooks configure it (torch.sagemaker under torchrun).
SMP_V2_PARAMETERS = {"hybrid_shard_degree": 16, "sm_activation_offloading": True, "tensor_parallel_degree": 1,
                     "activation_loading_horizon": 2}


@dataclass(frozen=True)
class Case:
    id: str
    spec: dict[str, Any]
    env: Environment = DEV
    warns: tuple[str, ...] = ()  # fields the compiler must warn about (accepted, with a warning)


def _spec(name: str, **values: Any) -> dict[str, Any]:
    return {"name": name, "entry_point": "train.py", "source_dir": "src", **values}


PYTORCH_2_3 = {"framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311"}
PYTORCH_2_2 = {"framework": "pytorch", "framework_version": "2.2.0", "py_version": "py310"}
TENSORFLOW = {"framework": "tensorflow", "framework_version": "2.14", "py_version": "py310"}
HUGGINGFACE = {"framework": "huggingface", "transformers_version": "4.36", "pytorch_version": "2.1",
               "py_version": "py310"}
HUGGINGFACE_FULL = {"framework": "huggingface", "transformers_version": "4.36.0", "pytorch_version": "2.1.0",
                    "py_version": "py310"}
TORCHRUN = {"torch_distributed": {"enabled": True}}
DLC = "763104351884.dkr.ecr.us-east-1.amazonaws.com"
OWN_IMAGE = f"{DLC.replace('763104351884', '111111111111')}/gpt-trainer:2024-11-01"
NEURON_IMAGE = f"{DLC}/pytorch-training-neuronx:2.1.2-neuronx-py310-sdk2.20.0-ubuntu20.04"

STRATEGY_CASES = [
    Case("torch_distributed", _spec(
        "gpt-torchrun", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution=TORCHRUN, hyperparameters=EVERY_JSON_TYPE,
    )),
    Case("torch_distributed on p5en (EFA variables added)", _spec(
        "gpt-p5en", **PYTORCH_2_3, instance_type="ml.p5en.48xlarge", instance_count=4,
        distribution=TORCHRUN, hyperparameters={"epochs": 1},
    )),
    Case("smdistributed dataparallel", _spec(
        "gpt-smddp", **PYTORCH_2_2, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={"smdistributed": {"dataparallel": {"enabled": True, "custom_mpi_options": "-verbose"}}},
        hyperparameters={"epochs": 2, "bucket_cap_mb": 25},
    )),
    Case("smdistributed modelparallel v1 (mpi)", _spec(
        "gpt-smp-v1", framework="pytorch", framework_version="1.13.1", py_version="py39",
        instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={
            "smdistributed": {"modelparallel": {"enabled": True, "parameters": SMP_V1_PARAMETERS}},
            "mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "-verbose -x NCCL_DEBUG=WARN"},
        },
        hyperparameters={"epochs": 1, "fp16": True},
    )),
    Case("smdistributed modelparallel v2 (torch_distributed, PyTorch 2.2.0)", _spec(
        "gpt-smp-v2", **PYTORCH_2_2, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={**TORCHRUN, "smdistributed": {"modelparallel": {"enabled": True, "parameters": {
            "hybrid_shard_degree": 16, "sm_activation_offloading": True, "tensor_parallel_degree": 1,
        }}}},
        hyperparameters={"epochs": 1},
    )),
    Case("SMP v2 image 2.4.1 on p4d (the SMP image catalog)", _spec(
        "llama-smp-241", framework="pytorch", framework_version="2.4.1", py_version="py311",
        instance_type="ml.p4d.24xlarge", instance_count=4,
        distribution={**TORCHRUN, "smdistributed": {"modelparallel": {"enabled": True,
                                                                      "parameters": SMP_V2_PARAMETERS}}},
        hyperparameters={"max_steps": 100, "bf16": 1},
    )),
    Case("SMP v2 image 2.3.1 on p5", _spec(
        "llama-smp-231", framework="pytorch", framework_version="2.3.1", py_version="py311",
        instance_type="ml.p5.48xlarge", instance_count=2,
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {
            "hybrid_shard_degree": 8, "tensor_parallel_degree": 2}}}, **TORCHRUN},
    )),
    Case("SMP v2 without parameters (no mp_parameters sent)", _spec(
        "llama-smp-bare", framework="pytorch", framework_version="2.4.1", py_version="py311",
        instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={**TORCHRUN, "smdistributed": {"modelparallel": {"enabled": True}}},
    )),
    Case("mpi (Horovod, TensorFlow, custom MPI options)", _spec(
        "resnet-horovod", **TENSORFLOW, instance_type="ml.p3.16xlarge", instance_count=2,
        distribution={"mpi": {
            "enabled": True, "processes_per_host": 8,
            "custom_mpi_options": "-verbose --NCCL_DEBUG=INFO -x HOROVOD_HIERARCHICAL_ALLREDUCE=1",
        }},
        hyperparameters={"epochs": 10, "batch_size": 256},
    ), warns=("instance_type",)),
    Case("mpi (PyTorch, no processes_per_host)", _spec(
        "gpt-mpi", **PYTORCH_2_3, instance_type="ml.g5.48xlarge", instance_count=2,
        distribution={"mpi": {"enabled": True}},
    )),
    Case("pytorchddp (PyTorch: rewritten to SMDDP)", _spec(
        "gpt-pytorchddp", **PYTORCH_2_2, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={"pytorchddp": {"enabled": True}},
    )),
    Case("pytorchddp (HuggingFace)", _spec(
        "bert-hf-ddp", **HUGGINGFACE, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={"pytorchddp": {"enabled": True}},
        hyperparameters={"model_name_or_path": "bert-base-uncased", "num_train_epochs": 3, "fp16": True},
    )),
    Case("torch_distributed (HuggingFace, full versions)", _spec(
        "bert-hf-torchrun", **HUGGINGFACE_FULL, instance_type="ml.g5.12xlarge", instance_count=2,
        distribution=TORCHRUN, hyperparameters={"model_name_or_path": "bert-base-uncased"},
    )),
    Case("smdistributed dataparallel (HuggingFace: the base framework's versions)", _spec(
        "bert-hf-smddp", **HUGGINGFACE_FULL, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={"smdistributed": {"dataparallel": {"enabled": True}}},
    )),
    Case("parameter_server", _spec(
        "resnet-ps", **TENSORFLOW, instance_type="ml.p3.2xlarge", instance_count=4,
        distribution={"parameter_server": {"enabled": True}},
        hyperparameters={"epochs": 5},
    ), warns=("instance_type",)),
    Case("multi_worker_mirrored_strategy", _spec(
        "resnet-mwms", **TENSORFLOW, instance_type="ml.g5.12xlarge", instance_count=2,
        distribution={"multi_worker_mirrored_strategy": {"enabled": True}},
    )),
    Case("none (single node)", _spec(
        "gpt-single", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", hyperparameters=EVERY_JSON_TYPE,
    )),
    # the S3 default only where the job may write S3 itself: isolated, it is refused (compiler/rules/model_dir.py)
    Case("none (TensorFlow: model_dir in S3, isolation off)", _spec(
        "resnet-single", **TENSORFLOW, instance_type="ml.g5.2xlarge", hyperparameters={"epochs": 1},
        enable_network_isolation=False, network_isolation_off_reason="saves its model to S3 itself (model_dir)",
    )),
    Case("TensorFlow model_dir: false", _spec(
        "resnet-no-model-dir", **TENSORFLOW, instance_type="ml.g5.2xlarge", model_dir=False,
    )),
    Case("TensorFlow model_dir in the container", _spec(
        "resnet-local-model-dir", **TENSORFLOW, instance_type="ml.g5.2xlarge", model_dir="/opt/ml/model",
        hyperparameters={"epochs": 1},
    )),
    Case("TensorFlow mpi: model_dir is /opt/ml/model", _spec(
        "resnet-mpi-model-dir", **TENSORFLOW, instance_type="ml.p3.16xlarge", instance_count=2,
        distribution={"mpi": {"enabled": True, "processes_per_host": 8}},
    ), warns=("instance_type",)),
    Case("HuggingFace on TensorFlow with SMDDP (the TensorFlow table)", _spec(
        "bert-hf-tf", framework="huggingface", transformers_version="4.17.0", tensorflow_version="2.6.3",
        py_version="py38", instance_type="ml.p3.16xlarge", instance_count=2,
        distribution={"smdistributed": {"dataparallel": {"enabled": True}}},
    ), warns=("instance_type",)),
    # The SDK's "Use the SMDDP library with the SageMaker Python SDK" (doc/api/training/smd_data_parallel_use_sm_pysdk.rst):
    # the TensorFlow estimator takes the same dataparallel switch as PyTorch's
    Case("smdistributed dataparallel (TensorFlow 2.9, custom MPI options)", _spec(
        "resnet-smddp", framework="tensorflow", framework_version="2.9", py_version="py39",
        instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={"smdistributed": {"dataparallel": {"enabled": True, "custom_mpi_options": "-x NCCL_DEBUG=INFO"}}},
        hyperparameters={"epochs": 3, "batch_size": 64},
    )),
]

GENERIC_CASES = [
    Case("generic Estimator: image only (str() hyperparameters, no sagemaker_* keys)", {
        "name": "mpi-bench", "image_uri": OWN_IMAGE, "instance_count": 2, "instance_type": "ml.c5.xlarge",
        "volume_size": 50, "hyperparameters": {"mpi_world_size": 2},
    }),  # CPU-only nodes: no EFA warning (compiler/rules/compute.py)
    Case("generic Estimator: image only, every JSON type as str(), network isolation (no code channel)", {
        "name": "bench-types", "image_uri": OWN_IMAGE, "instance_type": "ml.c5.xlarge",
        "hyperparameters": EVERY_JSON_TYPE, "enable_network_isolation": True,
    }),
    Case("generic Estimator with entry_point (the SDK packs it; str() hyperparameters)", {
        "name": "generic-script", "image_uri": OWN_IMAGE, "entry_point": "train.py",
        "instance_type": "ml.g5.2xlarge", "hyperparameters": {"epochs": 2, "lr": 0.1, "tags": ["a", "b"]},
    }),
    Case("generic Estimator with entry_point and source_dir (JSON hyperparameters)", {
        "name": "generic-sourcedir", "image_uri": OWN_IMAGE, "entry_point": "train.py", "source_dir": "src",
        "instance_type": "ml.g5.2xlarge", "hyperparameters": {"epochs": 2, "lr": 0.1, "name": "x"},
    }),
    Case("generic Estimator ignores distribution", {
        "name": "generic-distributed", "image_uri": OWN_IMAGE, "entry_point": "train.py", "source_dir": "src",
        "instance_type": "ml.p4d.24xlarge", "instance_count": 2, "distribution": TORCHRUN,
        "hyperparameters": {"epochs": 1},
    }, warns=("distribution",)),
    # The estimator API reference: the generic Estimator's hyperparameters reach the container as str() of each value
    Case("generic Estimator: null, nested nulls, exponent floats and an empty list as str()", {
        "name": "generic-odd-values", "image_uri": OWN_IMAGE, "instance_type": "ml.c5.xlarge",
        "hyperparameters": {"seed": None, "schedule": {"warmup": [1, {"decay": None}], "cosine": True}, "lr": 1e-05,
                            "huge": 1.5e300, "steps": 100.0, "layers": []},
    }),
    Case("generic Estimator: project-built image, no code", {
        "name": "generic-own", "image": {"repository": "gpt-trainer", "tag": "v1"}, "instance_type": "ml.g5.2xlarge",
    }),
]

FEATURE_CASES = [
    Case("spot with max_wait and checkpoints", _spec(
        "gpt-spot", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2, distribution=TORCHRUN,
        use_spot_instances=True, max_run=36000, max_wait=72000, checkpoints=True,
        checkpoint_local_path="/opt/ml/checkpoints",
    )),
    Case("platform checkpoints (checkpoints: true)", _spec(
        "gpt-ckpt", **PYTORCH_2_3, instance_type="ml.g5.12xlarge", checkpoints=True,
    )),
    Case("retries, warm pool, encryption, isolation, volume, max_run", _spec(
        "gpt-options", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2, distribution=TORCHRUN,
        max_retry_attempts=3, keep_alive_period_in_seconds=1800, encrypt_inter_container_traffic=True,
        enable_network_isolation=True, volume_size=500, max_run=7200, container_log_level=10,
        inputs={"train": "s3://my-datasets/tokens/train/"},  # the SDK appends its "code" channel after this one
    )),
    Case("base_job_name", _spec(
        "gpt-named", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", base_job_name="gpt-pretrain-v2",
    )),
    Case("metrics, environment, tags, output key", _spec(
        "gpt-observed", **PYTORCH_2_3, instance_type="ml.g5.2xlarge",
        metric_definitions=[{"Name": "train:loss", "Regex": "loss=([0-9\\.]+)"},
                            {"Name": "train:tokens_per_s", "Regex": "tok/s=([0-9\\.]+)"}],
        environment={"NCCL_DEBUG": "INFO", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
        tags={"team": "ml-platform", "cost-center": "1234"}, output_kms_key=DEV_KEY,
    )),
    Case("tags in the SDK's [{Key, Value}] form", _spec(
        "gpt-tag-list", **PYTORCH_2_3, instance_type="ml.g5.2xlarge",
        tags=[{"Key": "team", "Value": "ml-platform"}],
    )),
    Case("metric regex without a capture group (accepted, with a warning)", _spec(
        "gpt-metric-nogroup", **PYTORCH_2_3, instance_type="ml.g5.2xlarge",
        metric_definitions=[{"Name": "train:loss", "Regex": "loss=[0-9.]+"}],
    ), warns=("metric_definitions[0].Regex",)),
    Case("input channels: S3 (modes, sharding) and FSx", _spec(
        "gpt-inputs", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2, distribution=TORCHRUN,
        inputs={
            "train": {"s3_data": "s3://my-datasets/tokens/train/", "distribution": "ShardedByS3Key",
                      "input_mode": "FastFile"},
            "validation": "datasets/tokens/validation/",
            "manifest": {"s3_data": "s3://my-datasets/manifests/train.manifest", "s3_data_type": "ManifestFile",
                         "content_type": "application/jsonlines", "compression": "Gzip", "input_mode": "Pipe"},
            "fsx": {"directory_path": "/datasets/tokens", "file_system_access_mode": "ro"},
            "fsx-typed": {"directory_path": "/datasets/csv", "content_type": "text/csv"},
        },
    )),
    Case("TrainingInput options: record wrapping, attribute names, shuffle, compression", _spec(
        "gpt-input-options", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", input_mode="Pipe",
        inputs={
            "train": {"s3_data": "datasets/recordio/train/", "record_wrapping": "RecordIO",
                      "shuffle_config": {"seed": 42}, "content_type": "application/x-recordio"},
            "augmented": {"s3_data": "s3://my-datasets/manifests/augmented.manifest",
                          "s3_data_type": "AugmentedManifestFile", "attribute_names": ["source-ref", "label"],
                          "record_wrapping": "RecordIO"},
            "tabular": {"s3_data": "datasets/tabular/", "content_type": "text/csv", "compression": "None"},
        },
    )),
    Case("a gated JumpStart model's channel: model_access_config and hub_access_config", _spec(
        "llama-gated", **PYTORCH_2_3, instance_type="ml.g5.12xlarge",
        inputs={
            "model": {"s3_data": "s3://my-models/meta-textgeneration-llama-3-8b/", "model_access_config":
                      {"AcceptEula": True}, "hub_access_config": {"HubContentArn": HUB_CONTENT_ARN}},
            "train": "datasets/instructions/",
        },
    )),
    Case("explicit image_uri", _spec(
        "gpt-custom-image", framework="pytorch",
        image_uri=f"{DLC}/pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker",
        instance_type="ml.p4d.24xlarge", instance_count=2, distribution=TORCHRUN,
    )),
    Case("image_uri with framework_version (the image wins)", _spec(
        "gpt-image-and-version", **PYTORCH_2_3, image_uri=OWN_IMAGE,
        instance_type="ml.p4d.24xlarge", instance_count=2, distribution=TORCHRUN,
    )),
    Case("project-built image (repository)", _spec(
        "gpt-own-image", framework="pytorch", image={"repository": "gpt-trainer"},
        instance_type="ml.p5.48xlarge", instance_count=2, distribution=TORCHRUN,
    )),
    Case("entry point without source_dir, with dependencies (the SDK packs them)", {
        "name": "gpt-deps", **PYTORCH_2_3, "entry_point": "train.py", "dependencies": ["lib/helpers"],
        "instance_type": "ml.g5.2xlarge",
    }),
    Case("debugger_hook_config: false", _spec(
        "gpt-no-hook", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", debugger_hook_config=False,
    )),
    Case("debugger_hook_config: true", _spec(
        "gpt-hook", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", debugger_hook_config=True,
    )),
    Case("debugger_hook_config as a mapping (collections compared in any order)", _spec(
        "gpt-hook-config", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", debugger_hook_config={
            "container_local_output_path": "/opt/ml/output/tensors",
            "hook_parameters": {"save_interval": "100"},
            "collection_configs": [
                {"name": "weights", "parameters": {"save_interval": "500"}},
                {"name": "gradients"}, {"name": "losses", "parameters": {"save_steps": "1,2,3"}},
            ],
        },
    )),
    Case("debugger hook turned off by checkpoints on a distributed job (as the SDK does)", _spec(
        "gpt-hook-ckpt", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2, distribution=TORCHRUN,
        debugger_hook_config=True, checkpoints=True, checkpoint_local_path="/opt/ml/checkpoints",
    ), warns=("debugger_hook_config",)),
    Case("debugger hook turned off by checkpoints on a single node too (PyTorch sets distribution to {})", _spec(
        "gpt-hook-ckpt-single", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", debugger_hook_config=True,
        checkpoints=True, checkpoint_local_path="/opt/ml/checkpoints",
    ), warns=("debugger_hook_config",)),
    Case("debugger hook kept with checkpoints (HuggingFace)", _spec(
        "bert-hook-ckpt", **HUGGINGFACE, instance_type="ml.g5.2xlarge", debugger_hook_config=True,
        checkpoints=True, checkpoint_local_path="/opt/ml/checkpoints",
    )),
    Case("heterogeneous cluster with checkpoints (debugger hook off, as the SDK needs it)", _spec(
        "gpt-hetero-ckpt", **PYTORCH_2_3, instance_groups=[
            {"instance_group_name": "train", "instance_type": "ml.p4d.24xlarge", "instance_count": 2},
        ], distribution=TORCHRUN, checkpoints=True, checkpoint_local_path="/opt/ml/checkpoints",
        debugger_hook_config=False,
    )),
    Case("debugger hook turned off by parameter_server (TensorFlow)", _spec(
        "resnet-ps-hook", **TENSORFLOW, instance_type="ml.p3.2xlarge", instance_count=2,
        distribution={"parameter_server": {"enabled": True}}, debugger_hook_config=True,
    ), warns=("instance_type", "debugger_hook_config")),
    Case("disable_profiler: false (the default: no ProfilerConfig sent)", _spec(
        "gpt-profiler-default", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", disable_profiler=False,
    )),
    Case("disable_profiler: true", _spec(
        "gpt-no-profiler", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", disable_profiler=True,
    )),
    Case("profiler_config: system monitoring interval", _spec(
        "gpt-profiler", **PYTORCH_2_3, instance_type="ml.g5.2xlarge",
        profiler_config={"system_monitor_interval_millis": 500},
    )),
    Case("profiler_config: disabled inside the config", _spec(
        "gpt-profiler-off", **TENSORFLOW, instance_type="ml.g5.2xlarge",
        profiler_config={"disable_profiler": True},
    )),
    Case("tensorboard_output_config with a local path", _spec(
        "gpt-tensorboard", **PYTORCH_2_3, instance_type="ml.g5.2xlarge",
        tensorboard_output_config={"container_local_output_path": "/opt/ml/output/tensorboard"},
    )),
    Case("tensorboard_output_config: true", _spec(
        "gpt-tensorboard-default", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", tensorboard_output_config=True,
    )),
    Case("enable_sagemaker_metrics: false (the TensorFlow estimator's default is true)", _spec(
        "resnet-metrics-off", **TENSORFLOW, instance_type="ml.g5.2xlarge", enable_sagemaker_metrics=False,
    )),
    Case("enable_sagemaker_metrics: true, debugger hook kept with checkpoints (generic Estimator)", {
        "name": "generic-metrics", "image_uri": OWN_IMAGE, "instance_type": "ml.g5.2xlarge",
        "enable_sagemaker_metrics": True, "debugger_hook_config": True, "checkpoints": True,
        "checkpoint_local_path": "/opt/ml/checkpoints",
    }),
    Case("network isolation with model_uri (inputs, then model, then code)", _spec(
        "gpt-isolated-model", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", enable_network_isolation=True,
        model_uri="gpt-isolated-model/models/gpt/", inputs={"train": "datasets/tokens/"},
    )),
    Case("the environment's traffic encryption policy (multi-node)", _spec(
        "gpt-encrypted", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2, distribution=TORCHRUN,
    ), env=ENCRYPTING),
    Case("the environment's policy relaxed with a reason", _spec(
        "gpt-unencrypted", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2, distribution=TORCHRUN,
        encrypt_inter_container_traffic=False, unencrypted_traffic_reason="measured 20% lower throughput",
    ), env=ENCRYPTING),
    Case("disable_output_compression", _spec(
        "gpt-uncompressed", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", disable_output_compression=True,
    )),
    Case("heterogeneous cluster: instance_groups with distribution.instance_groups", _spec(
        "gpt-hetero", **PYTORCH_2_2, instance_groups=[
            {"instance_group_name": "train", "instance_type": "ml.p4d.24xlarge", "instance_count": 2},
            {"instance_group_name": "data", "instance_type": "ml.c5.18xlarge", "instance_count": 2},
        ],
        distribution={"smdistributed": {"dataparallel": {"enabled": True}}, "instance_groups": ["train"]},
        inputs={"train": {"s3_data": "datasets/tokens/", "instance_groups": ["data"]}},
    )),
    Case("heterogeneous cluster: one group named for the SDK, torch_distributed", _spec(
        "gpt-one-group", **PYTORCH_2_3, instance_groups=[
            {"instance_group_name": "train", "instance_type": "ml.p4d.24xlarge", "instance_count": 2},
        ], distribution=TORCHRUN,
    )),
    Case("heterogeneous cluster without distribution (every group runs the entry point)", _spec(
        "gpt-hetero-plain", **PYTORCH_2_3, instance_groups=[
            {"instance_group_name": "gpu", "instance_type": "ml.g5.12xlarge", "instance_count": 1},
            {"instance_group_name": "cpu", "instance_type": "ml.c5.18xlarge", "instance_count": 2},
        ],
    ), warns=("distribution",)),  # the CPU group is not warned for EFA; g5.12xlarge has it
    Case("heterogeneous cluster with mpi", _spec(
        "gpt-hetero-mpi", **PYTORCH_2_3, instance_groups=[
            {"instance_group_name": "gpu", "instance_type": "ml.p4d.24xlarge", "instance_count": 2},
            {"instance_group_name": "cpu", "instance_type": "ml.c5.18xlarge", "instance_count": 1},
        ], distribution={"mpi": {"enabled": True, "processes_per_host": 8}, "instance_groups": ["gpu"]},
    )),
    Case("heterogeneous cluster, CPU group first (the image follows the first GPU group, as the SDK's does)", _spec(
        "tf-hetero-data-first", framework="tensorflow", framework_version="2.9.2", py_version="py39",
        instance_groups=[
            {"instance_group_name": "data_group", "instance_type": "ml.c5.18xlarge", "instance_count": 2},
            {"instance_group_name": "dnn_group", "instance_type": "ml.p4d.24xlarge", "instance_count": 1},
        ], distribution={"mpi": {"enabled": True, "processes_per_host": 8}, "instance_groups": ["dnn_group"]},
        inputs={"training": {"s3_data": "s3://my-datasets/train/", "instance_groups": ["data_group", "dnn_group"]}},
    )),
    Case("pytorchddp on g5 (sent as SMDDP, whose launcher runs an nccl script there; a public workshop's call)", _spec(
        "sd-ddp-g5", framework="pytorch", framework_version="1.13.1", py_version="py39",
        instance_type="ml.g5.12xlarge", instance_count=1, distribution={"pytorchddp": {"enabled": True}},
    ), warns=("distribution.smdistributed.dataparallel",)),
    Case("max_wait without spot (the SDK's own TensorFlow release test sends it)", _spec(
        "tf-max-wait", **TENSORFLOW, instance_type="ml.c5.xlarge", checkpoints=True,
        # the release test's /test/checkpoint/path, moved under /opt/ml/ (compiler/rules/paths.py)
        checkpoint_local_path="/opt/ml/test/checkpoint/path", max_wait=86400, max_retry_attempts=2,
    ), warns=("max_wait",)),
    Case("another framework's strategy, switched off (sent as the SDK sends it)", _spec(
        "gpt-mwms-off", **PYTORCH_2_2, instance_type="ml.c5.4xlarge",
        distribution={"multi_worker_mirrored_strategy": {"enabled": False}},
    )),
    Case("container_entry_point and container_arguments", _spec(
        "gpt-entrypoint", **PYTORCH_2_3, instance_type="ml.g5.2xlarge",
        container_entry_point=["python", "-m", "launcher"], container_arguments=["--epochs", "3"],
    )),
    Case("training_plan (ARN)", _spec(
        "gpt-plan", **PYTORCH_2_3, instance_type="ml.p5.48xlarge", instance_count=2, distribution=TORCHRUN,
        training_plan=TRAINING_PLAN,
    )),
    Case("instance_placement_config", _spec(
        "gpt-placement", **PYTORCH_2_3, instance_type="ml.p5.48xlarge", instance_count=2, distribution=TORCHRUN,
        instance_placement_config={"EnableMultipleJobs": True, "PlacementSpecifications": [
            {"UltraServerId": "us-0123456789abcdef0", "InstanceCount": 2}]},
    )),
    Case("enable_infra_check, enable_remote_debug, enable_session_tag_chaining", _spec(
        "gpt-switches", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", enable_infra_check=True,
        enable_remote_debug=True, remote_debug_reason="a shell in a hung job to read its NCCL state",
        enable_session_tag_chaining=True,
    ), warns=("enable_remote_debug",)),
    Case("switches off explicitly", _spec(
        "gpt-switches-off", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", enable_infra_check=False,
        enable_remote_debug=False, enable_session_tag_chaining=False, enable_network_isolation=False,
        network_isolation_off_reason="downloads a tokenizer through the environment's NAT gateway",
        encrypt_inter_container_traffic=False,
    )),
    Case("training_repository_access_mode: Platform", _spec(
        "gpt-repo-access", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", training_repository_access_mode="Platform",
    )),
    Case("volume_kms_key on a type with EBS volumes", _spec(
        "gpt-volume-key", **PYTORCH_2_3, instance_type="ml.p3.16xlarge", volume_kms_key=DEV_KEY,
        output_kms_key=DEV_KEY_2, volume_size=200,
    )),
    Case("model_uri with model_channel_name", _spec(
        "gpt-finetune", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", model_uri="s3://my-models/gpt/model.tar.gz",
        model_channel_name="pretrained", inputs={"train": "datasets/tokens/"},
    )),
    Case("model_uri as a data-bucket prefix", _spec(
        "gpt-finetune-prefix", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", model_uri="gpt-finetune-prefix/gpt/",
    )),
    Case("input_mode FastFile for the job", _spec(
        "gpt-fastfile", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", input_mode="FastFile",
        inputs={"train": "datasets/tokens/"},
    )),
    # AWS "Configure data input mode using the SageMaker Python SDK": the estimator's input_mode is each channel's
    # default, a TrainingInput's own input_mode wins for its channel
    Case("input_mode Pipe for the job, File and FastFile for single channels", _spec(
        "gpt-mixed-modes", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", input_mode="Pipe",
        inputs={"stream": "datasets/tokens/", "files": {"s3_data": "datasets/vocab/", "input_mode": "File"},
                "lazy": {"s3_data": "datasets/images/", "input_mode": "FastFile"}},
    )),
    # The SDK's "Run a SageMaker Distributed Model Parallel Training Job" parameters (doc/api/training/
    # smd_model_parallel_general.rst): manual partitioning, cluster placement, the simple pipeline
    Case("smdistributed modelparallel v1: manual partitions, cluster placement, simple pipeline", _spec(
        "gpt-smp-v1-manual", framework="pytorch", framework_version="1.12.1", py_version="py38",
        instance_type="ml.p3.16xlarge", instance_count=1,
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {
            "partitions": 2, "microbatches": 4, "auto_partition": False, "default_partition": 0,
            "placement_strategy": "cluster", "pipeline": "simple", "optimize": "memory", "horovod": False,
            "tensor_parallel_degree": 1}}},
            "mpi": {"enabled": True, "processes_per_host": 8,
                    "custom_mpi_options": "--mca btl_vader_single_copy_mechanism none"}},
    )),
    Case("instance type outside the old catalog: ml.c4.xlarge", _spec(
        "gpt-c4", **PYTORCH_2_3, instance_type="ml.c4.xlarge",
    )),
    Case("instance type outside the old catalog: ml.g6.12xlarge", _spec(
        "gpt-g6", **PYTORCH_2_3, instance_type="ml.g6.12xlarge", distribution=TORCHRUN,
    )),
    Case("instance type outside the old catalog: ml.trn2.48xlarge (Neuron image)", _spec(
        "llama-trn2", framework="pytorch", image_uri=NEURON_IMAGE, instance_type="ml.trn2.48xlarge",
        instance_count=2, distribution=TORCHRUN,
    )),
    Case("Trainium with the SDK's Neuron catalog image", _spec(
        "gpt-trn1", framework="pytorch", framework_version="1.11.0", py_version="py38",
        instance_type="ml.trn1.32xlarge", instance_count=2, distribution=TORCHRUN, disable_profiler=True,
    )),
]

# Estimator calls from public material, translated as a user would: the notebook's values kept, the platform's
# buckets, role and network substituted (checkpoint_s3_uri -> checkpoints: true, an S3 input -> s3://my-datasets/,
# git_config -> source_dir). Each names its source, github.com/<repository>/<path>.
HF_NB = "huggingface/notebooks sagemaker"
SMP_V1_MPI_OPTIONS = ("-x NCCL_DEBUG=WARN -x SMDEBUG_LOG_LEVEL=ERROR -x SMP_DISABLE_D2D=1 -x SMP_D2D_GPU_BUFFER_SIZE_BYTES=1 "
                      "-x SMP_NCCL_THROTTLE_LIMIT=1 -x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa -x RDMAV_FORK_SAFE=1")
REAL_CALL_CASES = [
    # huggingface/notebooks sagemaker/04_distributed_training_model_parallelism/sagemaker-notebook.ipynb
    Case(f"{HF_NB}/04: HuggingFace with SMP v1 under mpi, one p3.16xlarge", _spec(
        "hf-glue-smp", framework="huggingface", transformers_version="4.26.0", pytorch_version="1.13.1",
        py_version="py39", instance_type="ml.p3.16xlarge", instance_count=1, volume_size=200,
        debugger_hook_config=False,
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {
            "microbatches": 4, "placement_strategy": "spread", "pipeline": "interleaved", "optimize": "speed",
            "partitions": 4, "ddp": True}}}, "mpi": {"enabled": True, "processes_per_host": 8}},
        hyperparameters={"model_name_or_path": "roberta-large", "task_name": "mnli", "per_device_train_batch_size": 16,
                         "do_train": True, "do_eval": True, "num_train_epochs": 2, "output_dir": "/opt/ml/model",
                         "max_steps": 500},
    )),
    # huggingface/notebooks sagemaker/03_distributed_training_data_parallelism/sagemaker-notebook.ipynb
    Case(f"{HF_NB}/03: HuggingFace SMDDP on p3.16xlarge, the notebook's metric regexes", _spec(
        "hf-squad-smddp", framework="huggingface", transformers_version="4.26.0", pytorch_version="1.13.1",
        py_version="py39", instance_type="ml.p3.16xlarge", instance_count=2, volume_size=200,
        distribution={"smdistributed": {"dataparallel": {"enabled": True}}},
        metric_definitions=[{"Name": "train_runtime", "Regex": r"train_runtime.*=\D*(.*?)$"},
                            {"Name": "f1", "Regex": r"f1.*=\D*(.*?)$"},
                            {"Name": "exact_match", "Regex": r"exact_match.*=\D*(.*?)$"}],
        hyperparameters={"model_name_or_path": "bert-large-uncased-whole-word-masking", "dataset_name": "squad",
                         "do_train": True, "fp16": True, "per_device_train_batch_size": 4, "max_seq_length": 384,
                         "max_steps": 100, "pad_to_max_length": True, "doc_stride": 128, "output_dir": "/opt/ml/model"},
    ), warns=("instance_type",)),
    # huggingface/notebooks sagemaker/25_pytorch_fsdp_model_parallelism/sagemaker-notebook.ipynb
    Case(f"{HF_NB}/25: HuggingFace FSDP under torchrun, a hyperparameter holding quotes", _spec(
        "hf-fsdp", framework="huggingface", transformers_version="4.26.0", pytorch_version="1.13.1", py_version="py39",
        instance_type="ml.p4d.24xlarge", instance_count=2, volume_size=200, distribution=TORCHRUN,
        hyperparameters={"model_id": "togethercomputer/GPT-NeoXT-Chat-Base-20B", "gradient_checkpointing": True,
                         "bf16": True, "optimizer": "adamw_apex_fused", "per_device_train_batch_size": 2, "epochs": 3,
                         "fsdp": '"full_shard auto_wrap"', "fsdp_transformer_layer_cls_to_wrap": "GPTNeoXLayer",
                         "dataset_path": "/opt/ml/input/data/training"},
        inputs={"training": "s3://my-datasets/processed/dolly/train"},
    )),
    # huggingface/notebooks sagemaker/32_train_deploy_embedding_models/sagemaker-notebook.ipynb
    Case(f"{HF_NB}/32: HuggingFace 4.36.0, two-day max_run, output uncompressed, cache variable", _spec(
        "bge-base-exp1", framework="huggingface", transformers_version="4.36.0", pytorch_version="2.1.0",
        py_version="py310", instance_type="ml.g5.xlarge", max_run=2 * 24 * 60 * 60, base_job_name="bge-base-exp1",
        disable_output_compression=True, environment={"HUGGINGFACE_HUB_CACHE": "/tmp/.cache"},
        hyperparameters={"model_id": "BAAI/bge-base-en-v1.5", "num_train_epochs": 3, "learning_rate": 2e-5},
        inputs={"train": "s3://my-datasets/train", "test": "s3://my-datasets/test"},
    )),
    # aws/amazon-sagemaker-examples build_and_train_models/sm-distributed_model_parallel/sm-distributed_model_parallel.ipynb
    Case("amazon-sagemaker-examples: TensorFlow 2.3.1 with SMP v1 under mpi, custom MPI options", _spec(
        "tf-smp-v1", framework="tensorflow", framework_version="2.3.1", py_version="py37",
        instance_type="ml.p3.16xlarge", base_job_name="SMD-MP-demo",
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {
            "microbatches": 2, "partitions": 2, "pipeline": "interleaved", "optimize": "memory"}}},
            "mpi": {"enabled": True, "processes_per_host": 2,
                    "custom_mpi_options": "--mca btl_vader_single_copy_mechanism none "}},
    )),
    # aws/amazon-sagemaker-examples build_and_train_models/sm-distributed_training_model_parallel_v2_mixtral_on_p4.ipynb
    Case("amazon-sagemaker-examples: SMP v2 expert parallelism on p4d, floats 0.0 and 1e-05, a regex without group", _spec(
        "mixtral-smp", framework="pytorch", framework_version="2.2.0", py_version="py310",
        instance_type="ml.p4d.24xlarge", instance_count=8, volume_size=400, max_run=86400, debugger_hook_config=False,
        base_job_name="smp-mixtral-fsdp", checkpoints=True,
        metric_definitions=[{"Name": "base_metric", "Regex": "<><><><><><>"}],
        distribution={**TORCHRUN, "smdistributed": {"modelparallel": {"enabled": True, "parameters": {
            "activation_loading_horizon": 2, "expert_parallel_degree": 2, "hybrid_shard_degree": 32,
            "sm_activation_offloading": False}}}},
        hyperparameters={"activation_checkpointing": 1, "auto_wrap_policy": "transformer_auto_wrap_policy",
                         "beta1": 0.9, "bf16": 1, "checkpoint_dir": "/opt/ml/checkpoints", "lr": 0.0001,
                         "min_lr": 1e-05, "plateau": 0.0, "warmup": 0.0032, "moe_load_balancing": "sinkhorn"},
        inputs={"train": {"s3_data": "s3://my-datasets/train", "distribution": "FullyReplicated",
                          "s3_data_type": "S3Prefix"},
                "test": {"s3_data": "s3://my-datasets/test", "distribution": "FullyReplicated",
                         "s3_data_type": "S3Prefix"}},
    ), warns=("metric_definitions[0].Regex",)),
    # aws/amazon-sagemaker-examples build_and_train_models/sm-distributed_model_parallel_v2/llama_v2_v3/
    # sm-fsdp-tp-cp_train_llama_v2_v3.ipynb (instance_count lowered to what dev's training subnet holds)
    Case("amazon-sagemaker-examples: SMP v2 context parallelism on p5, PyTorch 2.4.1", _spec(
        "llama-smp-cp", framework="pytorch", framework_version="2.4.1", py_version="py311",
        instance_type="ml.p5.48xlarge", instance_count=2, volume_size=400, max_run=86400, debugger_hook_config=False,
        distribution={**TORCHRUN, "smdistributed": {"modelparallel": {"enabled": True, "parameters": {
            "activation_loading_horizon": 2, "context_parallel_degree": 2, "hybrid_shard_degree": 8,
            "sm_activation_offloading": True, "tensor_parallel_degree": 2}}}},
    )),
    # aws/amazon-sagemaker-examples archived/smp-gpt-sharded-data-parallel/smp-train-gpt-sharded-data-parallel.ipynb
    Case("amazon-sagemaker-examples: SMP v1 sharded data parallelism, the notebook's MPI options", _spec(
        "gpt-sdp", framework="pytorch", framework_version="1.13", py_version="py39", instance_type="ml.p4d.24xlarge",
        instance_count=2, checkpoints=True, debugger_hook_config=False,
        distribution={"mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": SMP_V1_MPI_OPTIONS},
                      "smdistributed": {"modelparallel": {"enabled": True, "parameters": {
                          "ddp": True, "skip_tracing": True, "delayed_parameter_initialization": True,
                          "offload_activations": False, "activation_loading_horizon": 4,
                          "sharded_data_parallel_degree": 16, "fp16": False, "bf16": True, "partitions": 1}}}},
        hyperparameters={"max_steps": 100, "seed": 12345, "fp16": 0, "bf16": 1, "lr": 2.0e-4, "min_lr": 0.00001,
                         "lr-decay-style": "linear", "warmup": 0.01, "sharded_data_parallel_degree": 16},
    )),
    # aws/amazon-sagemaker-examples archived/mpi_on_sagemaker/mpi_demo.ipynb
    Case("amazon-sagemaker-examples: mpi on CPU instances, two processes per host (TensorFlow 2.3.0)", {
        "name": "mpi-demo", "framework": "tensorflow", "entry_point": "train.py", "framework_version": "2.3.0",
        "py_version": "py37", "distribution": {"mpi": {"enabled": True, "processes_per_host": 2}},
        "instance_count": 3, "instance_type": "ml.c5.2xlarge",
    }),
    # aws/amazon-sagemaker-examples deploy_and_monitor/sm-batch_transform_pytorch/sm-batch_transform_pytorch.ipynb
    Case("amazon-sagemaker-examples: entry point in a subfolder, no source_dir, PyTorch 1.8.0 py3", {
        "name": "pt-batch", "framework": "pytorch", "entry_point": "model-script/mnist.py", "framework_version": "1.8.0",
        "py_version": "py3", "instance_count": 3, "instance_type": "ml.c5.2xlarge",
        "hyperparameters": {"epochs": 1, "backend": "gloo"},
    }),
    # aws/amazon-sagemaker-examples archived/sagemaker_job_tracking/pytorch_distributed_training_experiment.ipynb
    Case("amazon-sagemaker-examples: PyTorch with model_dir: false (dropped, warned) and a warm pool", {
        "name": "mnist-ddp", "framework": "pytorch", "entry_point": "./train.py", "model_dir": False,
        "framework_version": "1.12", "py_version": "py38", "instance_type": "ml.g4dn.12xlarge", "instance_count": 2,
        "hyperparameters": {"epochs": 10, "hidden_channels": 20, "backend": "nccl", "dropout": 0.2,
                            "kernel_size": 5, "optimizer": "sgd"},
        "keep_alive_period_in_seconds": 600,
    }, warns=("model_dir", "distribution")),
    # aws/amazon-sagemaker-examples archived/tensorboard_keras/tensorboard_keras.ipynb
    Case("amazon-sagemaker-examples: TensorFlow 2.2.0 in Pipe mode, three channels", _spec(
        "tb-keras", framework="tensorflow", framework_version="2.2.0", py_version="py37", instance_type="ml.c5.xlarge",
        base_job_name="tensorboard-example", input_mode="Pipe", hyperparameters={"epochs": 10, "batch-size": 256},
        metric_definitions=[{"Name": "val_acc", "Regex": "val_acc: ([0-9\\.]+)"}],
        inputs={"train": "s3://my-datasets/cifar10/train", "validation": "s3://my-datasets/cifar10/validation",
                "eval": "s3://my-datasets/cifar10/eval"},
    )),
    # aws/sagemaker-python-sdk tests/unit/test_estimator.py (v2.257.6): two groups of one type, generic Estimator
    Case("sagemaker-python-sdk unit test: generic Estimator, two instance groups of one type", {
        "name": "gen-groups-g5", "image_uri": OWN_IMAGE, "base_job_name": "base-job-name", "instance_groups": [
            {"instance_group_name": "group1", "instance_type": "ml.g5.2xlarge", "instance_count": 1},
            {"instance_group_name": "group2", "instance_type": "ml.g5.2xlarge", "instance_count": 2}],
    }, warns=("instance_groups",)),
    # aws-samples/sagemaker-distributed-training-workshop 1_data_parallel/Lab_1.ipynb
    Case("distributed training workshop: pytorchddp with an image of its own, warm pool 0", _spec(
        "ddp-mnist", framework="pytorch", image_uri=f"{DLC}/pytorch-training:1.12.1-gpu-py38-cu113-ubuntu20.04-sagemaker",
        base_job_name="user-ddp-mnist", instance_type="ml.g4dn.12xlarge", py_version="py38",
        distribution={"pytorchddp": {"enabled": True}}, debugger_hook_config=False,
        hyperparameters={"batch_size": 320, "epochs": 900}, keep_alive_period_in_seconds=0,
    ), warns=("distribution.smdistributed.dataparallel",)),
    # aws-samples/sagemaker-distributed-training-workshop 1_data_parallel/Lab1_stable_diffusion/
    # fine_tune_stable_diffusion.ipynb (its instance_type a variable: ml.g5.12xlarge here)
    Case("distributed training workshop: checkpoint_local_path empty (no path, warned), a number as text", _spec(
        "stable-diffusion", framework="pytorch", framework_version="1.13.1", py_version="py39",
        instance_type="ml.g5.12xlarge", base_job_name="stable-diffusion", checkpoint_local_path="",
        distribution={"pytorchddp": {"enabled": True}},
        hyperparameters={"pretrained_model_name_or_path": "CompVis/stable-diffusion-v1-4", "resolution": 256,
                         "mixed_precision": "fp16", "learning_rate": "1e-10", "seed": 100,
                         "output_dir": "/opt/ml/model/sd-output-final"},
    ), warns=("checkpoint_local_path", "distribution.smdistributed.dataparallel")),
    # aws-samples/sagemaker-distributed-training-workshop 16_smp_cp_fp8_llama3_1/sm-fsdp-cp-llama-3-1-8b.ipynb
    # (HF_TOKEN left out: a token belongs in secrets:)
    Case("distributed training workshop: SMP v2 with delayed initialization, warm pool, NCCL variables", _spec(
        "llama-smp-cp-fp8", framework="pytorch", framework_version="2.4.1", py_version="py311",
        instance_type="ml.p5.48xlarge", instance_count=2, volume_size=400, max_run=86400, debugger_hook_config=False,
        keep_alive_period_in_seconds=1800, checkpoints=True,
        distribution={**TORCHRUN, "smdistributed": {"modelparallel": {"enabled": True, "parameters": {
            "context_parallel_degree": 2, "hybrid_shard_degree": 8, "delayed_parameter_initialization": True}}}},
        environment={"NCCL_DEBUG": "INFO", "NCCL_MIN_NRINGS": "1", "NCCL_IB_TIMEOUT": "22"},
    )),
    # aws-samples/sagemaker-distributed-training-workshop 23_customize-gptoss-models-on-sagemaker-ai/
    # customize-gpt-oss-on-amazon-sagemaker-ai.ipynb (HF_TOKEN left out)
    Case("distributed training workshop: a shell entry point in a PyTorch 2.7.1 image, JSON text in a variable", _spec(
        "oss-recipe", framework="pytorch", entry_point="launch.sh",
        image_uri=f"{DLC}/pytorch-training:2.7.1-gpu-py312-cu128-ubuntu22.04-sagemaker", py_version="py312",
        instance_type="ml.p4de.24xlarge", base_job_name="oss-recipe-gpt-oss-20b", volume_size=1024,
        keep_alive_period_in_seconds=3600,
        environment={"MLFLOW_EXPERIMENT_NAME": "gpt-oss-v4",
                     "MLFLOW_TAGS": '{"source.job": "smai-training-jobs", "source.type": "sft"}',
                     "MLFLOW_TRACKING_URI": f"arn:aws:sagemaker:{DEV.region}:{DEV.account}:mlflow-tracking-server/tfc"},
        hyperparameters={"config": "hf_recipes/openai/gpt-oss-20b--vanilla-spectrum.yaml"},
        inputs={"training": "s3://my-datasets/gpt-oss/"},
    )),
    # aws/amazon-sagemaker-examples build_and_train_models/sm-heterogeneous_clusters_for_model_training/
    # sm-heterogeneous_clusters_for_model_training.ipynb
    Case("amazon-sagemaker-examples: PyTorch heterogeneous cluster, data group and DNN group, no distribution", _spec(
        "pt-hetero", framework="pytorch", framework_version="1.11.0", py_version="py38", entry_point="train.py",
        volume_size=10, max_run=4800, disable_profiler=True, debugger_hook_config=False, instance_groups=[
            {"instance_group_name": "data_group", "instance_type": "ml.c5.9xlarge", "instance_count": 1},
            {"instance_group_name": "dnn_group", "instance_type": "ml.p3.2xlarge", "instance_count": 1}],
        hyperparameters={"batch-size": 8192, "num-data-workers": 4, "grpc-workers": 4, "num-dnn-workers": 4,
                         "pin-memory": True, "iterations": 100, "region": DEV.region},
    ), warns=("instance_groups",)),
    # aws/amazon-sagemaker-examples build_and_train_models/sm-model_trainer/model_trainer_overview.ipynb: its image,
    # environment and hyperparameters (null ones included) as HuggingFace estimator arguments, the image in us-east-1
    Case("amazon-sagemaker-examples: null hyperparameters, an image of its own, NCCL and EFA variables of the spec's", _spec(
        "llama-fsdp-mt", framework="huggingface", py_version="py310",
        image_uri=f"{DLC}/huggingface-pytorch-training:2.0.0-transformers4.28.1-gpu-py310-cu118-ubuntu20.04",
        instance_type="ml.p4d.24xlarge", volume_size=96, keep_alive_period_in_seconds=3600, distribution=TORCHRUN,
        environment={"FI_PROVIDER": "efa", "NCCL_PROTO": "simple", "NCCL_SOCKET_IFNAME": "eth0", "NCCL_IB_DISABLE": "1",
                     "NCCL_DEBUG": "WARN"},
        hyperparameters={"dataset_path": "/opt/ml/input/data/dataset", "model_dir": "/opt/ml/model", "cache_dir": None,
                         "max_train_steps": None, "num_train_steps": 1, "forward_prefetch": False, "weight_decay": 0.0,
                         "learning_rate": 5e-5, "fsdp": "full_shard auto_wrap", "gradient_checkpointing": True,
                         "fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer", "optimizer": "adamw_torch"},
        inputs={"dataset": "s3://my-datasets/llama/"},
    )),
    # aws/amazon-sagemaker-examples archived/nas_for_llm_with_amt/nas_for_llm_with_amt.ipynb: framework_version beside
    # pytorch_version (the HuggingFace estimator drops it: warned), a three-day max_run, a model channel
    Case("amazon-sagemaker-examples: HuggingFace with framework_version repeating pytorch_version, model_uri", _spec(
        "hf-nas", framework="huggingface", py_version="py39", framework_version="1.13", pytorch_version="1.13",
        transformers_version="4.26", instance_type="ml.g4dn.xlarge", max_run=3600 * 72, volume_size=125,
        model_uri="s3://my-models/nas/", hyperparameters={"model_name_or_path": "bert-base-cased", "epochs": 1},
    ), warns=("framework_version",)),
    # The pinned SDK's newest catalog entries (sagemaker 2.257.7 image_uri_config): PyTorch 2.8.0, HuggingFace 4.56.2
    Case("the SDK's newest PyTorch, 2.8.0 py312, under torchrun on p5", _spec(
        "pt-latest", framework="pytorch", framework_version="2.8.0", py_version="py312", instance_type="ml.p5.48xlarge",
        instance_count=2, distribution=TORCHRUN,
    )),
    Case("the SDK's newest HuggingFace, 4.56.2 on PyTorch 2.8.0", _spec(
        "hf-latest", framework="huggingface", transformers_version="4.56.2", pytorch_version="2.8.0",
        py_version="py312", instance_type="ml.g5.2xlarge",
    )),
]

ALL_CASES = STRATEGY_CASES + GENERIC_CASES + FEATURE_CASES + REAL_CALL_CASES

# ---------------------------------------------------------------------------------------------------------------
# Where our request deliberately differs from the SDK's, and why. Nothing else may differ.
# ---------------------------------------------------------------------------------------------------------------

ALLOWED_DIFFERENCES = {
    "DebugHookConfig": "fit() adds the Debugger hook by default; it is optional, we send it only when the spec "
                       "asks (debugger_hook_config): Step Functions checks field names at deploy (FACTS.md "
                       "section 4) and distributed jobs do not use it",
    "ProfilerConfig": "fit() adds the profiler config by default; optional, sent only when the spec asks "
                      "(profiler_config, disable_profiler), for the same reason",
    "AlgorithmSpecification.EnableSageMakerMetricsTimeSeries": "the framework estimators turn it on for PyTorch >= "
                                                               "1.3, TensorFlow >= 1.15 and HuggingFace; optional, "
                                                               "sent only when the spec sets enable_sagemaker_metrics",
    "Environment: EFA variables": "the toolkit sets FI_PROVIDER/FI_EFA_USE_DEVICE_RDMA/RDMAV_FORK_SAFE only on its own "
                                  "list of instance types; we add them for EFA types it does not know (catalog.py)",
    "Tags: platform tags": "every job carries its workload and environment tags for cost reports and IAM scoping",
    "OutputDataConfig.KmsKeyId": "without output_kms_key in the spec we encrypt with the environment's KMS key; "
                                 "the SDK leaves it out (S3 default encryption)",
}

# The SDK's optional defaults, and whether a spec asks for each (then both sides must send the same). Asking for
# the SDK's default (disable_profiler: false) is not asking: the profiler stays off the request.
SDK_DEFAULT_FIELDS = {
    "DebugHookConfig": lambda spec: "debugger_hook_config" in spec,
    "ProfilerConfig": lambda spec: "profiler_config" in spec or spec.get("disable_profiler") is True,
    "AlgorithmSpecification.EnableSageMakerMetricsTimeSeries": lambda spec: "enable_sagemaker_metrics" in spec,
}


def _drop(request: dict[str, Any], dotted: str) -> Any:
    *parents, last = dotted.split(".")
    node = request
    for part in parents:
        node = node.get(part, {})
    return node.pop(last, None)


def _unordered_collections(request: dict[str, Any]) -> None:
    """The SDK gathers DebugHookConfig's collections in a set: their order is arbitrary, so compare them sorted."""
    collections = request.get("DebugHookConfig", {}).get("CollectionConfigurations")
    if collections:
        collections.sort(key=lambda c: c["CollectionName"])


def reconcile(ours: dict[str, Any], theirs: dict[str, Any], spec: dict[str, Any], workload: Workload,
              env: Environment) -> tuple[dict, dict, set[str]]:
    """Remove exactly the allowed differences, checking each is what its reason says.

    Returns both requests and the names (ALLOWED_DIFFERENCES keys) of the differences that applied.
    """
    ours, theirs = copy.deepcopy(ours), copy.deepcopy(theirs)
    applied: set[str] = set()
    for dotted, asks in SDK_DEFAULT_FIELDS.items():
        if asks(spec):
            continue  # asked for: compared like every other field
        assert _drop(ours, dotted) is None, f"{dotted} is meant to stay off in our request unless the spec asks"
        if _drop(theirs, dotted) is not None:
            applied.add(dotted)
    for request in (ours, theirs):
        _unordered_collections(request)

    efa = workload.instance.efa_environment()
    added = {k: v for k, v in efa.items() if k not in (spec.get("environment") or {})}
    ours_env = ours.get("Environment", {})
    assert {k: ours_env.get(k) for k in added} == added, "the catalog's EFA variables must be in Environment"
    for key in added:
        del ours_env[key]
        applied.add("Environment: EFA variables")
    if added and not ours_env and spec.get("environment") is None:
        del ours["Environment"]  # only the EFA variables were there: the SDK sends no Environment

    platform_tags = [{"Key": TAG_WORKLOAD, "Value": spec["name"]}, {"Key": TAG_ENVIRONMENT, "Value": env.name}]
    for tag in platform_tags:
        assert tag in ours.get("Tags", []), f"platform tag {tag} missing"
        ours["Tags"].remove(tag)
        applied.add("Tags: platform tags")
    if not ours["Tags"]:  # only the platform's tags were there: the SDK sends none, or `tags: []` as []
        del ours["Tags"]
        if theirs.get("Tags") == []:
            del theirs["Tags"]

    if "output_kms_key" not in spec:
        assert ours["OutputDataConfig"].pop("KmsKeyId") == VALUES[placeholders.KMS_KEY_ARN]
        applied.add("OutputDataConfig.KmsKeyId")
    return ours, theirs, applied


# ---------------------------------------------------------------------------------------------------------------
# Running both sides
# ---------------------------------------------------------------------------------------------------------------


def granting(env: Environment, workload: str) -> Environment:
    """The environment with `workload` among the readers of each of its datasets and secrets and the users of its keys."""
    return dataclasses.replace(
        env, datasets={n: Dataset(n, d.readers | {workload}) for n, d in env.datasets.items()},
        secrets={arn: names | {workload} for arn, names in env.secrets.items()},
        kms_keys={arn: names | {workload} for arn, names in env.kms_keys.items()})


def accepted(spec: dict[str, Any], env: Environment, spec_dir: Path, project_root: Path | None = None) -> Workload:
    """The workload as validate and synth accept it in one environment: the spec's checks, then the environment's
    (which grants the case's workload its datasets and keys)."""
    workload = parse_workload(copy.deepcopy(spec), source=f"{spec['name']}.yaml", spec_dir=spec_dir,
                              project_root=project_root or spec_dir)
    findings = Findings(workload.source)
    check_in_environment(workload, granting(env, workload.name), findings)
    if findings.problems:
        raise SpecError(findings.problems)
    return workload


def _source_dir_value(spec: dict[str, Any], request: dict[str, Any], job: str) -> dict[str, str]:
    """Without source_dir the SDK packs and uploads the code itself: our placeholder gets where it uploads."""
    if "entry_point" in spec and "source_dir" not in spec:
        output = placeholders.substitute(request["OutputDataConfig"]["S3OutputPath"], VALUES)
        return {placeholders.SOURCE_DIR_S3_URI: sdk.code_upload_uri(output, job)}
    return {}


def compiled(spec: dict[str, Any], env: Environment, spec_dir: Path, project_root: Path | None = None,
             **values: str) -> dict[str, Any]:
    request = compile_request(accepted(spec, env, spec_dir, project_root), env)
    job = placeholders.substitute(request["TrainingJobName"], VALUES | values)
    return placeholders.substitute(request, values_for(request, **(_source_dir_value(spec, request, job) | values)))


def assert_matches_sdk(spec: dict[str, Any], env: Environment, spec_dir: Path, label: str,
                       project_root: Path | None = None) -> set[str]:
    """Compile and capture the same job; fail on any difference not allowed. Returns the allowances used."""
    workload = accepted(spec, env, spec_dir, project_root)
    ours = compiled(spec, env, spec_dir, project_root)
    framework, kwargs, channels = sdk.estimator_arguments(spec, ours, spec_dir, env.region)
    uploads: dict[str, list[str]] = {}
    theirs = sdk.capture_create_training_job(
        framework, job_name=ours["TrainingJobName"], inputs=channels or None, region=env.region, uploads=uploads,
        **kwargs,
    )
    if "entry_point" in spec and "source_dir" not in spec:  # the SDK packed the code: check what and where
        assert list(uploads) == [sdk.code_upload_uri(ours["OutputDataConfig"]["S3OutputPath"], ours["TrainingJobName"])]
        names = next(iter(uploads.values()))
        assert Path(spec["entry_point"]).name in names, names
        assert all(Path(d).name in names for d in spec.get("dependencies", [])), names

    # HyperParameters: identical, before any reconciling.
    assert ours.get("HyperParameters") == theirs.get("HyperParameters"), _diff(
        ours.get("HyperParameters", {}), theirs.get("HyperParameters", {}),
    )

    ours, theirs, applied = reconcile(ours, theirs, spec, workload, env)
    mismatches = [
        f"{name}:\n  ours: {ours.get(name)!r}\n  SDK:  {theirs.get(name)!r}"
        for name in sorted(set(ours) | set(theirs)) if ours.get(name) != theirs.get(name)
    ]
    assert not mismatches, f"{label}: differs from the SDK\n" + "\n".join(mismatches)
    return applied


def _diff(ours: dict[str, str], theirs: dict[str, str]) -> str:
    lines = []
    for key in sorted(set(ours) | set(theirs)):
        if ours.get(key) != theirs.get(key):
            lines.append(f"  {key}: ours={ours.get(key)!r} SDK={theirs.get(key)!r}")
    return "HyperParameters differ from the SDK's:\n" + "\n".join(lines)


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_request_matches_the_sdk(case: Case, code_dir: Path) -> None:
    assert_matches_sdk(case.spec, case.env, code_dir, case.id)


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_case_is_accepted_with_exactly_its_warnings(case: Case, code_dir: Path) -> None:
    """Each case is a spec a user may write: accepted, warned about only where the case says."""
    workload = accepted(case.spec, case.env, code_dir)
    warned = {w.split(": ", 2)[1] for w in workload.warnings}
    assert warned == set(case.warns), workload.warnings


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_workload_matches_the_sdk(path: Path) -> None:
    spec = read_spec_file(path, PROJECT).base
    assert_matches_sdk(spec, ENVIRONMENTS["dev"], path.parent, path.name, PROJECT.root)


def test_every_allowed_difference_still_occurs(code_dir: Path) -> None:
    """An allowance that no longer applies is stale: remove it (or it may hide a future regression)."""
    case = next(c for c in STRATEGY_CASES if c.id.startswith("torch_distributed on p5en"))
    assert assert_matches_sdk(case.spec, case.env, code_dir, case.id) == set(ALLOWED_DIFFERENCES)


def test_every_accepted_sdk_argument_has_a_parity_case() -> None:
    """A new accepted argument comes with a case that runs it through the real SDK."""
    used = {key for case in ALL_CASES for key in case.spec}
    assert SDK_ARGUMENTS - used == set()


# ---------------------------------------------------------------------------------------------------------------
# Full service-model validation of every compiled request
# ---------------------------------------------------------------------------------------------------------------


def worst_case_values(spec_max_attempts: int) -> dict[str, str]:
    """Run-time values that make the job name as long as it can get: the highest attempt number."""
    return {placeholders.RUN_ID: "f" * len(RUN_ID), placeholders.ATTEMPT: str(spec_max_attempts)}


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_parity_case_passes_full_validation(case: Case, code_dir: Path) -> None:
    request = compiled(case.spec, case.env, code_dir, **worst_case_values(3))
    assert service_model.validate_request(request) == []


@pytest.mark.parametrize("case", STRATEGY_CASES[:3], ids=[c.id for c in STRATEGY_CASES[:3]])
def test_longest_allowed_base_job_name_makes_a_valid_63_character_name(case: Case, code_dir: Path) -> None:
    """The spec admits a base_job_name only if the longest run-time name still fits 63 characters."""
    attempts = 10  # the most relaunches capacity_retry allows: two digits of attempt number
    longest_ok = None
    for length in range(63, 0, -1):
        spec = case.spec | {"base_job_name": "j" * length, "capacity_retry": {"max_attempts": attempts}}
        try:
            request = compiled(spec, case.env, code_dir, **worst_case_values(attempts))
        except SpecError:
            continue
        longest_ok = request
        break
    assert longest_ok is not None
    assert len(longest_ok["TrainingJobName"]) == 63, longest_ok["TrainingJobName"]
    assert service_model.validate_request(longest_ok) == []


@pytest.mark.parametrize("env_name", sorted(ENVIRONMENTS))
def test_shipped_workloads_pass_full_validation(env_name: str) -> None:
    env = ENVIRONMENTS[env_name]
    workloads = loaded().workloads(env_name)
    assert workloads, f"no shipped workload deploys to {env_name}"
    for workload in workloads:
        request = compile_request(workload, env)
        values = sdk.deploy_values(request) | worst_case_values(workload.capacity_retry.max_attempts)
        values[placeholders.KMS_KEY_ARN] = f"arn:aws:kms:{env.region}:{env.account}:key/" \
                                           "1234abcd-12ab-34cd-56ef-1234567890ab"
        filled = placeholders.substitute(request, values)
        assert service_model.validate_request(filled) == [], workload.source


def test_some_workloads_are_shipped() -> None:
    assert SHIPPED, "no workload specs in workloads/"
    assert all(p.suffix in (".yaml", ".yml") for p in SHIPPED)


# ---------------------------------------------------------------------------------------------------------------
# The harness itself: offline, and really the SDK's behaviour
# ---------------------------------------------------------------------------------------------------------------


def test_harness_never_reaches_aws() -> None:
    """Without output_path the SDK would look up (or create) its default bucket: the harness refuses."""
    with pytest.raises(Exception, match=r"unstubbed AWS request|network connection") as info:
        sdk.capture_create_training_job(
            "pytorch", job_name="probe-1", entry_point="train.py", framework_version="2.3.0", py_version="py311",
            instance_type="ml.g5.2xlarge", instance_count=1, output_path=None,
        )
    assert "sts" in str(info.value).lower() or "s3" in str(info.value).lower() or "network" in str(info.value)


def test_harness_sees_sdk_validation() -> None:
    """The harness runs the SDK's own checks: an SDK-rejected distribution raises from the SDK."""
    with pytest.raises(ValueError, match="smdistributed"):
        sdk.capture_create_training_job(
            "pytorch", job_name="probe-2", entry_point="train.py", framework_version="2.3.0", py_version="py311",
            instance_type="ml.p4d.24xlarge", instance_count=2,
            distribution={"smdistributed": {"dataparallel": {"enabled": True}, "modelparallel": {"enabled": True}}},
        )


def test_harness_maps_mappings_to_the_sdks_objects(code_dir: Path) -> None:
    """The spec's mappings reach the SDK as its own classes, not as dicts it would misread."""
    sagemaker = sdk._sagemaker()
    spec = _spec("objects", **PYTORCH_2_3, instance_groups=[
        {"instance_group_name": "train", "instance_type": "ml.p4d.24xlarge", "instance_count": 1}],
        debugger_hook_config={"collection_configs": [{"name": "losses"}]}, profiler_config={},
        tensorboard_output_config={"container_local_output_path": "/tb"},
        inputs={"train": {"s3_data": "d/", "shuffle_config": {"seed": 1}}})
    request = {"OutputDataConfig": {"S3OutputPath": sdk.OUTPUT_PATH}, "AlgorithmSpecification": {},
               "TensorBoardOutputConfig": {"S3OutputPath": sdk.OUTPUT_PATH + "/tb/"}}
    _, kwargs, channels = sdk.estimator_arguments(spec, request, code_dir)
    assert isinstance(kwargs["debugger_hook_config"], sagemaker.debugger.DebuggerHookConfig)
    assert isinstance(kwargs["debugger_hook_config"].collection_configs[0], sagemaker.debugger.CollectionConfig)
    assert isinstance(kwargs["profiler_config"], sagemaker.debugger.ProfilerConfig)
    assert isinstance(kwargs["tensorboard_output_config"], sagemaker.debugger.TensorBoardOutputConfig)
    assert isinstance(kwargs["instance_groups"][0], sagemaker.instance_group.InstanceGroup)
    channel = sdk._channel(channels["train"])
    assert isinstance(channel, sagemaker.inputs.TrainingInput)
    assert channel.config["ShuffleConfig"] == {"Seed": 1}


# ---------------------------------------------------------------------------------------------------------------
# What the SDK refuses, the spec refuses too (at synth, with the field to change)
# ---------------------------------------------------------------------------------------------------------------

SMP_V1_LAUNCHER = {"mpi": {"enabled": True, "processes_per_host": 8}}
TWO_GROUPS = [{"instance_group_name": "train", "instance_type": "ml.p4d.24xlarge", "instance_count": 2},
              {"instance_group_name": "data", "instance_type": "ml.c5.18xlarge", "instance_count": 1}]
REJECTED = [
    # (id, spec changes on top of a PyTorch 2.2.0 two-node p4d job, SDK message, spec field the problem names)
    ("two smdistributed strategies",
     {"distribution": {"smdistributed": {"dataparallel": {"enabled": True}, "modelparallel": {"enabled": True}}}},
     "more than 1 smdistributed strategy", "distribution.smdistributed"),
    ("torch_distributed on a CPU instance",
     {"instance_type": "ml.m5.xlarge", "distribution": TORCHRUN},
     "only for GPU and Trainium", "distribution.torch_distributed"),
    ("mpi on Trainium",
     {"instance_type": "ml.trn1.32xlarge", "distribution": {"mpi": {"enabled": True}}},
     "not supported for Trainium", "distribution"),
    ("channel named code with network isolation",
     {"enable_network_isolation": True, "inputs": {"code": "s3://my-datasets/code/"}},
     "Duplicate channel code", "inputs.code"),
    ("model channel named like an input",
     {"model_uri": "s3://my-models/gpt/", "inputs": {"model": "datasets/x/"}},
     "Duplicate channel model", "model_channel_name"),
    ("SMP pipeline not simple or interleaved",
     {"framework_version": "1.13.1", "py_version": "py39", "distribution": SMP_V1_LAUNCHER | {
         "smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline": "fast", "partitions": 2}}}}},
     "pipeline must be a value in", "distribution.smdistributed.modelparallel.parameters.pipeline"),
    ("SMP ddp and horovod together",
     {"framework_version": "1.13.1", "py_version": "py39", "distribution": SMP_V1_LAUNCHER | {
         "smdistributed": {"modelparallel": {"enabled": True, "parameters": {"ddp": True, "horovod": True,
                                                                             "partitions": 2}}}}},
     "cannot be simultaneously enabled", "distribution.smdistributed.modelparallel.parameters.ddp"),
    ("SMDDP on p5 without torch_distributed",
     {"instance_type": "ml.p5.48xlarge", "distribution": {"smdistributed": {"dataparallel": {"enabled": True}}}},
     "do not support p5", "distribution.smdistributed"),
    ("SMDDP with a PyTorch it does not support",
     {"framework_version": "2.3.0", "py_version": "py311",
      "distribution": {"smdistributed": {"dataparallel": {"enabled": True}}}},
     "not supported by smdataparallel", "framework_version"),
    ("pytorchddp with smdistributed",
     {"distribution": {"pytorchddp": {"enabled": True}, "smdistributed": {"dataparallel": {"enabled": True}}}},
     "Cannot use both pytorchddp and smdistributed", "distribution"),
    ("pytorchxla without Training Compiler",
     {"distribution": {"pytorchxla": {"enabled": True}}},
     "only supported when SageMaker Training Compiler is enabled", "distribution.pytorchxla"),
    ("torch_distributed with a short version",
     {"framework_version": "2.3", "py_version": "py311", "distribution": TORCHRUN},
     "not supported by torch_distributed", "framework_version"),
    ("torch_distributed (HuggingFace) with a short PyTorch version",
     {**HUGGINGFACE, "framework_version": ..., "distribution": TORCHRUN},
     "not supported by torch_distributed", "pytorch_version"),
    ("SMDDP (HuggingFace) with a PyTorch it does not support",
     {"framework": "huggingface", "transformers_version": "4.46.1", "pytorch_version": "2.3.0", "py_version": "py311",
      "framework_version": ..., "distribution": {"smdistributed": {"dataparallel": {"enabled": True}}}},
     "not supported by smdataparallel", "pytorch_version"),
    ("HuggingFace versions written one full, one short",
     {**HUGGINGFACE, "pytorch_version": "2.1.0", "framework_version": ...},
     "either full version or shortened version", "transformers_version"),
    ("multi_worker_mirrored_strategy before TensorFlow 2.9",
     {"framework": "tensorflow", "framework_version": "2.8", "py_version": "py39", "instance_type": "ml.p3.16xlarge",
      "distribution": {"multi_worker_mirrored_strategy": {"enabled": True}}},
     "only supported from framework_version 2.9", "distribution.multi_worker_mirrored_strategy"),
    ("instance_groups with instance_type",
     {"instance_groups": TWO_GROUPS[:1], "distribution": ...},
     "cannot be set when instance_groups is set", "instance_groups"),
    ("two instance groups, no training group named",
     {"instance_type": ..., "instance_count": ..., "instance_groups": TWO_GROUPS, "distribution": TORCHRUN},
     "only contain one instance group name", "distribution.instance_groups"),
    ("distribution names an instance group the spec lacks",
     {"instance_type": ..., "instance_count": ..., "instance_groups": TWO_GROUPS,
      "distribution": {"mpi": {"enabled": True}, "instance_groups": ["gpu"]}},
     "Invalid training instance group", "distribution.instance_groups"),
    ("empty distribution with one instance group",
     {"instance_type": ..., "instance_count": ..., "instance_groups": TWO_GROUPS[:1], "distribution": {}},
     "Don't set training instance groups while no distribution strategies enabled", "distribution"),
    ("empty distribution with two instance groups",
     {"instance_type": ..., "instance_count": ..., "instance_groups": TWO_GROUPS, "distribution": {}},
     "only contain one instance group name", "distribution"),
    ("parameter_server on training instance groups (TensorFlow launches only mpi or SMDDP on them)",
     {"framework": "tensorflow", "framework_version": "2.14", "py_version": "py310", "instance_type": ...,
      "instance_count": ..., "instance_groups": TWO_GROUPS,
      "distribution": {"parameter_server": {"enabled": True}, "instance_groups": ["train"]}},
     "Don't set training instance groups while no distribution strategies enabled", "distribution.instance_groups"),
    ("distribution names instance groups without instance_groups",
     {"distribution": {"mpi": {"enabled": True}, "instance_groups": ["train"]}},
     "Instance groups not specified", "distribution.instance_groups"),
    ("disable_profiler with profiler_config enabled",
     {"disable_profiler": True, "profiler_config": {"system_monitor_interval_millis": 500}},
     "disable_profiler cannot be False", "profiler_config"),
    ("HuggingFace with an image of its own and no py_version (its first argument)",
     {**HUGGINGFACE_FULL, "framework_version": ..., "py_version": ...,
      "image_uri": f"{DLC}/huggingface-pytorch-training:2.1.0-transformers4.36.0-gpu-py310-cu121-ubuntu20.04"},
     "missing 1 required positional argument: 'py_version'", "py_version"),
    ("instance_groups with checkpoint_local_path while the Debugger hook is on",
     {"instance_type": ..., "instance_count": ..., "instance_groups": TWO_GROUPS[:1], "distribution": TORCHRUN,
      "checkpoints": True, "checkpoint_local_path": "/opt/ml/checkpoints"},
     "not supported between instances of 'NoneType' and 'int'", "checkpoint_local_path"),
    ("TensorFlow 1.10 without image_uri (legacy mode only)",
     {"framework": "tensorflow", "framework_version": "1.10", "py_version": "py2", "instance_type": "ml.c4.xlarge",
      "instance_count": 1},
     "supports only legacy mode", "framework_version"),
    ("SMDDP in a cluster with a p5 group that does not train",
     {"instance_type": ..., "instance_count": ..., "instance_groups": [
         {"instance_group_name": "g1", "instance_type": "ml.p4d.24xlarge", "instance_count": 1},
         {"instance_group_name": "g2", "instance_type": "ml.p5.48xlarge", "instance_count": 1}],
      "distribution": {"smdistributed": {"dataparallel": {"enabled": True}}, "instance_groups": ["g1"]}},
     "do not support p5 instances", "distribution.smdistributed"),
    ("Trainium group named in distribution.instance_groups (a second strategy to the SDK)",
     {"framework_version": "1.11.0", "py_version": "py38", "instance_type": ..., "instance_count": ...,
      "instance_groups": [{"instance_group_name": "trn", "instance_type": "ml.trn1.32xlarge", "instance_count": 1},
                          {"instance_group_name": "cpu", "instance_type": "ml.c5.xlarge", "instance_count": 1}],
      "distribution": {**TORCHRUN, "instance_groups": ["trn"]}},
     "Multiple distribution strategies are not supported for Trainium", "distribution.instance_groups"),
    ("target_attribute_name (an AutoML channel field)",
     {"inputs": {"train": {"s3_data": "datasets/tabular/", "target_attribute_name": "label"}}},
     "Unknown parameter .*TargetAttributeName", "inputs.train.target_attribute_name"),
]


def _rejected_spec(changes: dict[str, Any]) -> dict[str, Any]:
    spec = _spec("rejected", **PYTORCH_2_2, instance_type="ml.p4d.24xlarge", instance_count=2)
    for key, value in changes.items():
        if value is ...:
            spec.pop(key, None)
        else:
            spec[key] = value
    return spec


@pytest.mark.parametrize(("changes", "sdk_message", "field_name"), [r[1:] for r in REJECTED],
                         ids=[r[0] for r in REJECTED])
def test_what_the_sdk_rejects_fails_synth(changes: dict, sdk_message: str, field_name: str, code_dir: Path) -> None:
    spec = _rejected_spec(changes)
    request: dict[str, Any] = {"OutputDataConfig": {"S3OutputPath": sdk.OUTPUT_PATH}, "AlgorithmSpecification": {}}
    if spec.get("checkpoints"):
        request["CheckpointConfig"] = {"S3Uri": f"{sdk.OUTPUT_PATH}/checkpoints"}
    framework, kwargs, channels = sdk.estimator_arguments(spec, request, code_dir)
    # TypeError: where the SDK cannot build the estimator at all (a missing argument, a comparison with None)
    with pytest.raises((ValueError, TypeError, RuntimeError, ParamValidationError), match=sdk_message):
        sdk.capture_create_training_job(framework, job_name="rejected-1", inputs=channels or None, **kwargs)
    with pytest.raises(SpecError) as info:
        accepted(spec, DEV, code_dir)
    fields = [p.field for p in info.value.problems]
    assert field_name in fields, f"expected a problem at {field_name}, got:\n{info.value}"


# The platform's own refusals of arguments the SDK takes: the old parity cases set these; they now fail synth.
PLATFORM_OWNED = [
    ("output_path", {"output_path": "s3://my-results/gpt-observed"}, "output_path", "s3://<environment output bucket>"),
    ("checkpoint_s3_uri", {"checkpoint_s3_uri": "s3://my-checkpoints/gpt-spot/run-1"}, "checkpoint_s3_uri",
     "checkpoints: true"),
    ("debugger s3_output_path", {"debugger_hook_config": {"s3_output_path": "s3://my-results/debug"}},
     "debugger_hook_config.s3_output_path", "platform's"),
    ("profiler s3_output_path", {"profiler_config": {"s3_output_path": "s3://my-results/profile"}},
     "profiler_config.s3_output_path", "platform's"),
    ("tensorboard s3_output_path", {"tensorboard_output_config": {"s3_output_path": "s3://my-results/tb"}},
     "tensorboard_output_config.s3_output_path", "platform's"),
    ("role", {"role": "arn:aws:iam::111111111111:role/SageMaker"}, "role", "execution role"),
    ("subnets", {"subnets": ["subnet-0123"]}, "subnets", "network"),
    ("security_group_ids", {"security_group_ids": ["sg-0123"]}, "security_group_ids", "network"),
    ("code_location", {"code_location": "s3://my-code/"}, "code_location", "CDK asset"),
    ("git_config", {"git_config": {"repo": "https://github.com/aws/sagemaker-python-sdk.git"}}, "git_config",
     "source_dir"),
    ("rules", {"rules": []}, "rules", "debugger_hook_config"),
    ("compiler_config", {"compiler_config": {}}, "compiler_config", "Training Compiler"),
    ("training_recipe", {"training_recipe": "training/llama/hf_llama3_8b_seq8k_gpu_p5x16_pretrain"},
     "training_recipe", "entry point"),
    ("training_repository_credentials_provider_arn",
     {"training_repository_credentials_provider_arn": "arn:aws:lambda:us-east-1:111111111111:function:registry-auth"},
     "training_repository_credentials_provider_arn", "push the image to the environment's ECR"),
]


@pytest.mark.parametrize(("changes", "field_name", "words"), [r[1:] for r in PLATFORM_OWNED],
                         ids=[r[0] for r in PLATFORM_OWNED])
def test_what_the_platform_owns_fails_synth(changes: dict, field_name: str, words: str, code_dir: Path) -> None:
    spec = _spec("owned", **PYTORCH_2_3, instance_type="ml.g5.2xlarge") | changes
    with pytest.raises(SpecError) as info:
        accepted(spec, DEV, code_dir)
    matching = [p.message for p in info.value.problems if p.field == field_name]
    assert matching and words in matching[0], f"expected {words!r} at {field_name}, got:\n{info.value}"
