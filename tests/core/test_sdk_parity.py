"""The compiler builds the same CreateTrainingJob request as the real SageMaker Python SDK v2.

For each case, one spec goes two ways: through `parse_workload` + `compile_request` (placeholders then
filled with deploy-time values), and, as the same estimator arguments with the same deploy-time values,
through the real `sagemaker==2.257.7` estimator's `fit()` (captured offline by tests/sdk_reference.py).
HyperParameters must be identical; every other field equal, except the differences listed in
ALLOWED_DIFFERENCES, each with its reason. Every compiled request also passes the full service-model
validation, and so does every shipped workload in every environment.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import sdk_reference as sdk
from compiler import catalog, placeholders, service_model
from compiler.environments import Environment, load_environments
from compiler.errors import SpecError
from compiler.request import TAG_ENVIRONMENT, TAG_WORKLOAD, compile_request
from compiler.spec import SDK_KEYS, load_workload_file, parse_workload, workload_files

ACCOUNT = sdk.ACCOUNT
RUN_ID = sdk.RUN_ID
FSX_MOUNT = sdk.FSX_MOUNT
VALUES = sdk.DEPLOY_VALUES
values_for = sdk.deploy_values


@pytest.fixture(scope="module")
def dev() -> Environment:
    return load_environments()["dev"]


@pytest.fixture(scope="module")
def code_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("code")
    (directory / "train.py").write_text("print('training')\n")
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


@dataclass(frozen=True)
class Case:
    id: str
    spec: dict[str, Any]
    channels: dict[str, Any] = field(default_factory=dict)


def _spec(name: str, **values: Any) -> dict[str, Any]:
    return {"name": name, "entry_point": "train.py", **values}


PYTORCH_2_3 = {"framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311"}
PYTORCH_2_2 = {"framework": "pytorch", "framework_version": "2.2.0", "py_version": "py310"}
TENSORFLOW = {"framework": "tensorflow", "framework_version": "2.14", "py_version": "py310"}
HUGGINGFACE = {"framework": "huggingface", "transformers_version": "4.36", "pytorch_version": "2.1",
               "py_version": "py310"}

STRATEGY_CASES = [
    Case("torch_distributed", _spec(
        "gpt-torchrun", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={"torch_distributed": {"enabled": True}}, hyperparameters=EVERY_JSON_TYPE,
    )),
    Case("torch_distributed on p5en (EFA variables added)", _spec(
        "gpt-p5en", **PYTORCH_2_3, instance_type="ml.p5en.48xlarge", instance_count=4,
        distribution={"torch_distributed": {"enabled": True}}, hyperparameters={"epochs": 1},
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
    Case("smdistributed modelparallel v2 (torch_distributed)", _spec(
        "gpt-smp-v2", **PYTORCH_2_2, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={
            "torch_distributed": {"enabled": True},
            "smdistributed": {"modelparallel": {"enabled": True, "parameters": {
                "hybrid_shard_degree": 16, "sm_activation_offloading": True, "tensor_parallel_degree": 1,
            }}},
        },
        hyperparameters={"epochs": 1},
    )),
    Case("mpi (Horovod, TensorFlow, custom MPI options)", _spec(
        "resnet-horovod", **TENSORFLOW, instance_type="ml.p3.16xlarge", instance_count=2,
        distribution={"mpi": {
            "enabled": True, "processes_per_host": 8,
            "custom_mpi_options": "-verbose --NCCL_DEBUG=INFO -x HOROVOD_HIERARCHICAL_ALLREDUCE=1",
        }},
        hyperparameters={"epochs": 10, "batch_size": 256},
    )),
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
    Case("parameter_server", _spec(
        "resnet-ps", **TENSORFLOW, instance_type="ml.p3.2xlarge", instance_count=4,
        distribution={"parameter_server": {"enabled": True}},
        hyperparameters={"epochs": 5},
    )),
    Case("multi_worker_mirrored_strategy", _spec(
        "resnet-mwms", **TENSORFLOW, instance_type="ml.g5.12xlarge", instance_count=2,
        distribution={"multi_worker_mirrored_strategy": {"enabled": True}},
    )),
    Case("none (single node)", _spec(
        "gpt-single", **PYTORCH_2_3, instance_type="ml.g5.2xlarge", hyperparameters=EVERY_JSON_TYPE,
    )),
    Case("none (TensorFlow: model_dir in S3)", _spec(
        "resnet-single", **TENSORFLOW, instance_type="ml.g5.2xlarge", hyperparameters={"epochs": 1},
    )),
]

FEATURE_CASES = [
    Case("spot with max_wait and checkpoints", _spec(
        "gpt-spot", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={"torch_distributed": {"enabled": True}},
        use_spot_instances=True, max_run=36000, max_wait=72000,
        checkpoint_s3_uri="s3://my-checkpoints/gpt-spot/run-1", checkpoint_local_path="/opt/ml/checkpoints",
    )),
    Case("platform checkpoints (checkpoints: true)", _spec(
        "gpt-ckpt", **PYTORCH_2_3, instance_type="ml.g5.12xlarge", checkpoints=True,
    )),
    Case("retries, warm pool, encryption, isolation, volume, max_run", _spec(
        "gpt-options", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={"torch_distributed": {"enabled": True}},
        max_retry_attempts=3, keep_alive_period_in_seconds=1800, encrypt_inter_container_traffic=True,
        enable_network_isolation=True, volume_size=500, max_run=7200, container_log_level=10,
        inputs={"train": "s3://my-datasets/tokens/train/"},  # the SDK appends its "code" channel after this one
    )),
    Case("metrics, environment, tags, output path and key", _spec(
        "gpt-observed", **PYTORCH_2_3, instance_type="ml.g5.2xlarge",
        metric_definitions=[{"Name": "train:loss", "Regex": "loss=([0-9\\.]+)"},
                            {"Name": "train:tokens_per_s", "Regex": "tok/s=([0-9\\.]+)"}],
        environment={"NCCL_DEBUG": "INFO", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
        tags={"team": "ml-platform", "cost-center": "1234"},
        output_path="s3://my-results/gpt-observed", output_kms_key="alias/training-output",
    )),
    Case("input channels: S3 (modes, sharding) and FSx", _spec(
        "gpt-inputs", **PYTORCH_2_3, instance_type="ml.p4d.24xlarge", instance_count=2,
        distribution={"torch_distributed": {"enabled": True}},
        inputs={
            "train": {"s3_data": "s3://my-datasets/tokens/train/", "distribution": "ShardedByS3Key",
                      "input_mode": "FastFile"},
            "validation": "datasets/tokens/validation/",
            "manifest": {"s3_data": "s3://my-datasets/manifests/train.manifest", "s3_data_type": "ManifestFile",
                         "content_type": "application/jsonlines", "compression": "Gzip", "input_mode": "Pipe"},
            "fsx": {"directory_path": "/datasets/tokens", "file_system_access_mode": "ro"},
        },
    )),
    Case("explicit image_uri", _spec(
        "gpt-custom-image", framework="pytorch",
        image_uri="763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker",
        instance_type="ml.p4d.24xlarge", instance_count=2, distribution={"torch_distributed": {"enabled": True}},
    )),
    Case("project-built image (repository)", _spec(
        "gpt-own-image", framework="pytorch", image={"repository": "gpt-trainer"},
        instance_type="ml.p5.48xlarge", instance_count=2, distribution={"torch_distributed": {"enabled": True}},
    )),
]

ALL_CASES = STRATEGY_CASES + FEATURE_CASES

# ---------------------------------------------------------------------------------------------------------------
# Where our request deliberately differs from the SDK's, and why. Nothing else may differ.
# ---------------------------------------------------------------------------------------------------------------

ALLOWED_DIFFERENCES = {
    "DebugHookConfig": "fit() adds the Debugger hook by default; it is optional, we leave it off: Step Functions "
                       "checks field names at deploy (FACTS.md section 4) and distributed jobs do not use it",
    "ProfilerConfig": "fit() adds the profiler config by default; optional, left off for the same reason",
    "AlgorithmSpecification.EnableSageMakerMetricsTimeSeries": "the SDK turns it on for PyTorch >= 1.3; optional, "
                                                               "left off for the same reason",
    "Environment: EFA variables": "the toolkit sets FI_PROVIDER/FI_EFA_USE_DEVICE_RDMA/RDMAV_FORK_SAFE only on its own "
                                  "list of instance types; we add them for EFA types it does not know (catalog.py)",
    "Tags: platform tags": "every job carries its workload and environment tags for cost reports and IAM scoping",
    "OutputDataConfig.KmsKeyId": "without output_kms_key in the spec we encrypt with the environment's KMS key; "
                                 "the SDK leaves it out (S3 default encryption)",
}


def _drop(request: dict[str, Any], dotted: str) -> Any:
    *parents, last = dotted.split(".")
    node = request
    for part in parents:
        node = node.get(part, {})
    return node.pop(last, None)


SDK_DEFAULT_FIELDS = ("DebugHookConfig", "ProfilerConfig", "AlgorithmSpecification.EnableSageMakerMetricsTimeSeries")


def reconcile(ours: dict[str, Any], theirs: dict[str, Any], spec: dict[str, Any],
              env: Environment) -> tuple[dict, dict, set[str]]:
    """Remove exactly the allowed differences, checking each is what its reason says.

    Returns both requests and the names (ALLOWED_DIFFERENCES keys) of the differences that applied.
    """
    ours, theirs = copy.deepcopy(ours), copy.deepcopy(theirs)
    applied: set[str] = set()
    for dotted in SDK_DEFAULT_FIELDS:
        assert _drop(ours, dotted) is None, f"{dotted} is meant to stay off in our request"
        if _drop(theirs, dotted) is not None:
            applied.add(dotted)

    efa = catalog.CATALOG[spec["instance_type"]].efa_environment()
    added = {k: v for k, v in efa.items() if k not in spec.get("environment", {})}
    ours_env = ours.get("Environment", {})
    assert {k: ours_env.get(k) for k in added} == added, "the catalog's EFA variables must be in Environment"
    for key in added:
        del ours_env[key]
        applied.add("Environment: EFA variables")
    if "Environment" in ours and not ours_env:
        del ours["Environment"]

    platform_tags = [{"Key": TAG_WORKLOAD, "Value": spec["name"]}, {"Key": TAG_ENVIRONMENT, "Value": env.name}]
    for tag in platform_tags:
        assert tag in ours.get("Tags", []), f"platform tag {tag} missing"
        ours["Tags"].remove(tag)
        applied.add("Tags: platform tags")
    if "Tags" in ours and not ours["Tags"]:
        del ours["Tags"]

    if "output_kms_key" not in spec:
        assert ours["OutputDataConfig"].pop("KmsKeyId") == VALUES[placeholders.KMS_KEY_ARN]
        applied.add("OutputDataConfig.KmsKeyId")
    return ours, theirs, applied


# ---------------------------------------------------------------------------------------------------------------
# Running both sides
# ---------------------------------------------------------------------------------------------------------------


def compiled(spec: dict[str, Any], env: Environment, code_dir: Path, **values: str) -> dict[str, Any]:
    workload = parse_workload(copy.deepcopy(spec), source=f"{spec['name']}.yaml", base_dir=code_dir)
    request = compile_request(workload, env)
    return placeholders.substitute(request, values_for(request, **values))


def sdk_arguments(spec: dict[str, Any], ours: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The estimator class, arguments and fit() channels for the same job, from the spec's SDK argument names.

    Values the platform supplies (role, network, code location, default output path and checkpoint location,
    FSx and data buckets, project image) are given to the SDK too, from the same deploy-time VALUES.
    """
    kwargs = {k: copy.deepcopy(v) for k, v in spec.items() if k in SDK_KEYS and k not in ("base_job_name",)}
    kwargs["source_dir"] = VALUES[placeholders.SOURCE_DIR_S3_URI]
    kwargs.setdefault("instance_count", 1)  # the SDK requires it; a spec may leave it at its default, 1
    kwargs["subnets"] = [VALUES[placeholders.TRAINING_SUBNET_ID]]
    kwargs["security_group_ids"] = [VALUES[placeholders.TRAINING_SECURITY_GROUP_ID]]
    kwargs.setdefault("output_path", ours["OutputDataConfig"]["S3OutputPath"])  # the environment's bucket
    if spec.get("checkpoints"):
        kwargs["checkpoint_s3_uri"] = ours["CheckpointConfig"]["S3Uri"]  # the environment's checkpoint bucket
    if "image" in spec:
        kwargs["image_uri"] = ours["AlgorithmSpecification"]["TrainingImage"]  # the project-built image
    if isinstance(spec.get("tags"), dict):
        kwargs["tags"] = [{"Key": k, "Value": v} for k, v in spec["tags"].items()]
    channels: dict[str, Any] = {}
    for name, channel in spec.get("inputs", {}).items():
        channel = {"s3_data": channel} if isinstance(channel, str) else dict(channel)
        if "directory_path" in channel:
            channels[name] = {
                "file_system_id": VALUES[placeholders.FILE_SYSTEM_ID], "file_system_type": "FSxLustre",
                "directory_path": f"/{FSX_MOUNT}{channel['directory_path']}",
                "file_system_access_mode": channel.get("file_system_access_mode", "ro"),
            }
            continue
        if not channel["s3_data"].startswith("s3://"):
            channel["s3_data"] = f"s3://{VALUES[placeholders.DATA_BUCKET]}/{channel['s3_data']}"
        channels[name] = channel
    return spec.get("framework", "pytorch"), kwargs, channels


COMPARED_FIELDS = (
    "TrainingJobName", "RoleArn", "HyperParameters", "AlgorithmSpecification", "ResourceConfig", "StoppingCondition",
    "EnableManagedSpotTraining", "CheckpointConfig", "RetryStrategy", "EnableInterContainerTrafficEncryption",
    "EnableNetworkIsolation", "InputDataConfig", "OutputDataConfig", "VpcConfig", "Environment", "Tags",
)


def assert_matches_sdk(spec: dict[str, Any], env: Environment, base_dir: Path, label: str) -> set[str]:
    """Compile and capture the same job; fail on any difference not allowed. Returns the allowances used."""
    ours = compiled(spec, env, base_dir)
    framework, kwargs, channels = sdk_arguments(spec, ours)
    theirs = sdk.capture_create_training_job(
        framework, job_name=ours["TrainingJobName"], inputs=channels or None, region=env.region, **kwargs,
    )

    # HyperParameters: identical, before any reconciling.
    assert ours["HyperParameters"] == theirs["HyperParameters"], _diff(
        ours["HyperParameters"], theirs["HyperParameters"],
    )

    ours, theirs, applied = reconcile(ours, theirs, spec, env)
    mismatches = [
        f"{name}:\n  ours: {ours.get(name)!r}\n  SDK:  {theirs.get(name)!r}"
        for name in COMPARED_FIELDS if ours.get(name) != theirs.get(name)
    ]
    unexplained = sorted(set(ours) ^ set(theirs))
    assert not mismatches and not unexplained, (
        f"{label}: differs from the SDK\n" + "\n".join(mismatches)
        + (f"\nfields only one side sends: {unexplained}" if unexplained else "")
    )
    return applied


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_request_matches_the_sdk(case: Case, dev: Environment, code_dir: Path) -> None:
    assert_matches_sdk(case.spec, dev, code_dir, case.id)


@pytest.mark.parametrize("path", workload_files(), ids=[p.stem for p in workload_files()])
def test_shipped_workload_matches_the_sdk(path: Path, dev: Environment) -> None:
    spec = yaml.safe_load(path.read_text())
    assert_matches_sdk(spec, dev, path.parent, path.name)


def _diff(ours: dict[str, str], theirs: dict[str, str]) -> str:
    lines = []
    for key in sorted(set(ours) | set(theirs)):
        if ours.get(key) != theirs.get(key):
            lines.append(f"  {key}: ours={ours.get(key)!r} SDK={theirs.get(key)!r}")
    return "HyperParameters differ from the SDK's:\n" + "\n".join(lines)


def test_every_allowed_difference_still_occurs(dev: Environment, code_dir: Path) -> None:
    """An allowance that no longer applies is stale: remove it (or it may hide a future regression)."""
    case = next(c for c in STRATEGY_CASES if c.id.startswith("torch_distributed on p5en"))
    assert assert_matches_sdk(case.spec, dev, code_dir, case.id) == set(ALLOWED_DIFFERENCES)


# ---------------------------------------------------------------------------------------------------------------
# Full service-model validation of every compiled request
# ---------------------------------------------------------------------------------------------------------------


def worst_case_values(spec_max_attempts: int) -> dict[str, str]:
    """Run-time values that make the job name as long as it can get: the highest attempt number."""
    return {placeholders.RUN_ID: "f" * len(RUN_ID), placeholders.ATTEMPT: str(spec_max_attempts)}


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_parity_case_passes_full_validation(case: Case, dev: Environment, code_dir: Path) -> None:
    request = compiled(case.spec, dev, code_dir)
    assert service_model.validate_request(request) == []


@pytest.mark.parametrize("case", STRATEGY_CASES[:3], ids=[c.id for c in STRATEGY_CASES[:3]])
def test_longest_allowed_base_job_name_makes_a_valid_63_character_name(
    case: Case, dev: Environment, code_dir: Path,
) -> None:
    """The spec admits a base_job_name only if the longest run-time name still fits 63 characters."""
    attempts = 10  # the most relaunches capacity_retry allows: two digits of attempt number
    longest_ok = None
    for length in range(63, 0, -1):
        spec = case.spec | {"base_job_name": "j" * length, "capacity_retry": {"max_attempts": attempts}}
        try:
            request = compiled(spec, dev, code_dir, **worst_case_values(attempts))
        except SpecError:
            continue
        longest_ok = request
        break
    assert longest_ok is not None
    assert len(longest_ok["TrainingJobName"]) == 63, longest_ok["TrainingJobName"]
    assert service_model.validate_request(longest_ok) == []


SHIPPED = workload_files()


@pytest.mark.parametrize("env_name", sorted(load_environments()))
@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_workloads_pass_full_validation(path: Path, env_name: str) -> None:
    env = load_environments()[env_name]
    workload = load_workload_file(path)
    request = compile_request(workload, env)
    values = values_for(request) | worst_case_values(workload.capacity_retry.max_attempts)
    values[placeholders.KMS_KEY_ARN] = f"arn:aws:kms:{env.region}:{env.account}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    filled = placeholders.substitute(request, values)
    assert service_model.validate_request(filled) == [], path.name


def test_some_workloads_are_shipped() -> None:
    if not SHIPPED:
        pytest.skip("no workload specs in training/workloads/ yet")
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


# ---------------------------------------------------------------------------------------------------------------
# What the SDK refuses, the spec refuses too (at synth, with the field to change)
# ---------------------------------------------------------------------------------------------------------------

SMP_V1_LAUNCHER = {"mpi": {"enabled": True, "processes_per_host": 8}}
REJECTED = [
    # (id, spec changes on top of a PyTorch 2.2.0 two-node p4d job, SDK message, spec field the problem names)
    ("two smdistributed strategies",
     {"distribution": {"smdistributed": {"dataparallel": {"enabled": True}, "modelparallel": {"enabled": True}}}},
     "more than 1 smdistributed strategy", "distribution.smdistributed"),
    ("torch_distributed on a CPU instance",
     {"instance_type": "ml.m5.xlarge", "distribution": {"torch_distributed": {"enabled": True}}},
     "only for GPU and Trainium", "distribution.torch_distributed"),
    ("mpi on Trainium",
     {"instance_type": "ml.trn1.32xlarge", "distribution": {"mpi": {"enabled": True}}},
     "not supported for Trainium", "distribution"),
    ("channel named code with network isolation",
     {"enable_network_isolation": True, "inputs": {"code": "s3://my-datasets/code/"}},
     "Duplicate channel code", "inputs.code"),
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
    ("torch_distributed with a short version",
     {"framework_version": "2.3", "py_version": "py311", "distribution": {"torch_distributed": {"enabled": True}}},
     "not supported by torch_distributed", "framework_version"),
    ("multi_worker_mirrored_strategy before TensorFlow 2.9",
     {"framework": "tensorflow", "framework_version": "2.8", "py_version": "py39", "instance_type": "ml.p3.16xlarge",
      "distribution": {"multi_worker_mirrored_strategy": {"enabled": True}}},
     "only supported from framework_version 2.9", "distribution.multi_worker_mirrored_strategy"),
]


@pytest.mark.parametrize(("changes", "sdk_message", "field_name"), [r[1:] for r in REJECTED],
                         ids=[r[0] for r in REJECTED])
def test_what_the_sdk_rejects_fails_synth(changes: dict, sdk_message: str, field_name: str, code_dir: Path) -> None:
    spec = _spec("rejected", **PYTORCH_2_2, instance_type="ml.p4d.24xlarge", instance_count=2) | changes
    framework, kwargs, channels = sdk_arguments(spec, {"OutputDataConfig": {"S3OutputPath": sdk.OUTPUT_PATH}})
    with pytest.raises(ValueError, match=sdk_message):
        sdk.capture_create_training_job(framework, job_name="rejected-1", inputs=channels or None, **kwargs)
    with pytest.raises(SpecError) as info:
        parse_workload(copy.deepcopy(spec), source="rejected.yaml", base_dir=code_dir)
    fields = [p.field for p in info.value.problems]
    assert field_name in fields, f"expected a problem at {field_name}, got:\n{info.value}"
