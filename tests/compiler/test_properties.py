"""Property: any spec either compiles to a request SageMaker would accept, or fails with a SpecError.

Hypothesis generates spec mappings that are mostly plausible (real strategies, training instance types of the
service model, framework versions the SDK knows, every argument the spec accepts) with random mistakes mixed
in: values at and past SageMaker's limits, wrong types, unknown, refused and SDK v1 keys, combinations the SDK
refuses. Whatever comes in, `parse_workload` and the environment's rules followed by `compile_request` must
either return a request that passes the full service-model validation (after deploy-time values and the
longest run-time job name are filled in), or raise SpecError. Any other exception, or a request the service
would refuse, is a bug: a traceback or a failed deploy instead of a message that says what to change.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, event, find, given, note, settings
from hypothesis import strategies as st

from compiler.compilation.request import compile_request
from compiler.errors import SpecError
from compiler.facts import catalog, placeholders
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules import check_in_environment
from compiler.sdk import service_model
from compiler.spec import parse_workload
from tests import sdk_reference as sdk
from tests.project import ENVIRONMENTS

# 300 examples keep the suite quick (~3 s); SPEC_PROPERTY_EXAMPLES=20000 runs a deeper hunt (~2 min).
EXAMPLES = int(os.environ.get("SPEC_PROPERTY_EXAMPLES", "300"))
NO_FSX = dataclasses.replace(ENVIRONMENTS["dev"], name="nofsx", fsx=None)
OPEN = dataclasses.replace(ENVIRONMENTS["dev"], name="open", external_data_buckets=("my-datasets", "my-models"))
ALL_ENVIRONMENTS = [*ENVIRONMENTS.values(), NO_FSX, OPEN]
INSTANCE_TYPES = sorted(catalog.catalog())
DEV_KEY = "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"
OWN_IMAGE = "111111111111.dkr.ecr.us-east-1.amazonaws.com/gpt-trainer:v1"

# Real combinations the pinned SDK has images for, and a few it does not.
IMAGES = [
    {"framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311"},
    {"framework": "pytorch", "framework_version": "2.2.0", "py_version": "py310"},
    {"framework": "pytorch", "framework_version": "1.13.1", "py_version": "py39"},
    {"framework": "pytorch", "framework_version": "2.8.0", "py_version": "py312"},
    {"framework": "pytorch", "framework_version": "2.4.1", "py_version": "py311"},
    {"framework": "tensorflow", "framework_version": "2.14", "py_version": "py310"},
    {"framework": "tensorflow", "framework_version": "2.8", "py_version": "py39"},
    {"framework": "huggingface", "transformers_version": "4.36", "pytorch_version": "2.1", "py_version": "py310"},
    {"framework": "huggingface", "transformers_version": "4.36.0", "pytorch_version": "2.1.0", "py_version": "py310"},
    {"framework": "pytorch", "image_uri": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu"},
    {"framework": "pytorch", "image_uri": OWN_IMAGE, "framework_version": "2.3.0", "py_version": "py311"},
    {"framework": "pytorch", "image": {"repository": "gpt-trainer"}},
    {"framework": "pytorch", "image": {"repository": "gpt-trainer", "tag": "v1.2"}},
    {"image_uri": OWN_IMAGE},  # the generic Estimator
    {"image": {"repository": "gpt-trainer"}},
    # broken
    {"framework": "pytorch", "framework_version": "9.9.9", "py_version": "py311"},
    {"framework": "pytorch", "framework_version": "2.3.0", "py_version": "py27"},
    {"framework": "pytorch", "framework_version": "2.3.0"},
    {"framework": "jax", "framework_version": "0.4"},
    {"framework": "pytorch", "image_uri": "", "framework_version": "2.3.0", "py_version": "py311"},
    {"framework": "pytorch", "image": {"repository": "Bad Repo!"}},
    {"framework": "pytorch", "image": "gpt-trainer"},
    {"framework_version": "2.3.0", "py_version": "py311"},
    {"image_uri": "docker.io/library/python:3.11"},
    {"framework": "huggingface", "transformers_version": "4.36.0", "pytorch_version": "2.1", "py_version": "py310"},
]
PLAUSIBLE_IMAGES = 15

JSON_SCALARS = (st.none() | st.booleans() | st.integers(-(2**40), 2**40)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
ANYTHING = JSON_VALUES | st.just(float("nan")) | st.binary(max_size=4) | st.sets(st.integers(), max_size=2)


def texts(alphabet: str, min_size: int = 0, max_size: int = 20) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=min_size, max_size=max_size)


def edges(low: int, high: int) -> st.SearchStrategy[int]:
    """Integers on and just past the edges of a range, where off-by-one bugs live."""
    return st.sampled_from([low - 1, low, low + 1, high - 1, high, high + 1, -1, 0])


# --- plausible parts: what a careful user might write ---------------------------------------------------------

SMP_PARAMETERS = st.fixed_dictionaries({}, optional={
    "partitions": st.integers(1, 8),
    "microbatches": st.integers(1, 16),
    "placement_strategy": st.sampled_from(["spread", "cluster"]),
    "pipeline": st.sampled_from(["simple", "interleaved"]),
    "optimize": st.sampled_from(["speed", "memory"]),
    "ddp": st.booleans(),
})


@st.composite
def distributions(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from([
        "none", "torch_distributed", "smddp", "smp_v1", "smp_v2", "mpi", "pytorchddp", "parameter_server",
        "mwms",
    ]))
    if kind == "none":
        return draw(st.sampled_from([None, {}]))
    if kind == "torch_distributed":
        return {"torch_distributed": {"enabled": True}}
    if kind == "smddp":
        body: dict[str, Any] = {"enabled": True}
        if draw(st.booleans()):
            body["custom_mpi_options"] = draw(texts("-abcxyz =_", 0, 30))
        return {"smdistributed": {"dataparallel": body}}
    if kind == "smp_v1":
        mpi = {"enabled": True, "processes_per_host": draw(st.sampled_from([1, 4, 8]))}
        return {"smdistributed": {"modelparallel": {"enabled": True, "parameters": draw(SMP_PARAMETERS)}},
                "mpi": mpi}
    if kind == "smp_v2":
        parameters = draw(st.sampled_from([{}, {"hybrid_shard_degree": 8}]))
        return {"smdistributed": {"modelparallel": {"enabled": True, "parameters": parameters}},
                "torch_distributed": {"enabled": True}}
    if kind == "mpi":
        body = {"enabled": True}
        if draw(st.booleans()):
            body["processes_per_host"] = draw(st.integers(1, 8))
        if draw(st.booleans()):
            body["custom_mpi_options"] = draw(texts("-abcxyz =_", 0, 30))
        return {"mpi": body}
    return {{"pytorchddp": "pytorchddp", "parameter_server": "parameter_server",
             "mwms": "multi_worker_mirrored_strategy"}[kind]: {"enabled": True}}


@st.composite
def channels(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["s3 uri", "s3 prefix", "s3 dict", "fsx"]))
    if kind == "s3 uri":
        bucket = draw(st.sampled_from(["my-datasets", "my-models"]) | texts("abcdefghij-", 3, 20))
        return f"s3://{bucket}/" + draw(texts("abc/_-.", 0, 20))
    if kind == "s3 prefix":
        return draw(texts("abcdef_-", 1, 10)) + "/" + draw(texts("abcdef/_-.", 0, 20))
    if kind == "s3 dict":
        return draw(st.fixed_dictionaries({"s3_data": st.sampled_from(["s3://my-datasets/train/", "data/"])}, optional={
            "input_mode": st.sampled_from(["File", "Pipe", "FastFile"]),
            "distribution": st.sampled_from(["FullyReplicated", "ShardedByS3Key"]),
            "s3_data_type": st.sampled_from(["S3Prefix", "ManifestFile", "AugmentedManifestFile"]),
            "content_type": st.sampled_from(["application/x-parquet", "text/csv"]),
            "compression": st.sampled_from(["None", "Gzip"]),
            "record_wrapping": st.sampled_from(["None", "RecordIO"]),
            "attribute_names": st.lists(texts("abc-", 1, 8), min_size=1, max_size=3),
            "shuffle_config": st.fixed_dictionaries({"seed": st.integers(0, 2**31)}),
            "instance_groups": st.sampled_from([["train"], ["data"]]),
        }))
    return draw(st.fixed_dictionaries({"directory_path": texts("abc/._-", 1, 30)},
                                      optional={"file_system_access_mode": st.sampled_from(["ro", "rw"])}))


COLLECTIONS = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["weights", "gradients", "losses"])}, optional={
    "parameters": st.dictionaries(st.sampled_from(["save_interval", "save_steps"]), st.sampled_from(["1", "100"])),
}), max_size=3, unique_by=lambda c: c["name"])
INSTANCE_GROUPS = st.lists(st.fixed_dictionaries({
    "instance_group_name": st.sampled_from(["train", "data"]),
    "instance_type": st.sampled_from(["ml.p4d.24xlarge", "ml.g5.12xlarge", "ml.c5.18xlarge", "ml.p5.48xlarge"]),
    "instance_count": st.integers(1, 4),
}), min_size=1, max_size=2, unique_by=lambda g: g["instance_group_name"])
CHANNEL_NAMES = texts("abcdefgh.-_", 1, 10)
ENV_KEYS = st.from_regex(r"[A-Z_][A-Z0-9_]{0,15}", fullmatch=True)
COMMAND = st.lists(texts("abcdefgh-=/.", 1, 12), min_size=1, max_size=4)
PLAUSIBLE = {
    "instance_count": st.integers(1, 16),
    "volume_size": st.integers(1, 16384),
    "max_run": st.integers(3600, 5 * 24 * 3600),
    "distribution": distributions(),
    "hyperparameters": st.dictionaries(texts("abcdefgh_-.", 1, 12), JSON_VALUES, max_size=6),
    "environment": st.dictionaries(ENV_KEYS, st.text(max_size=20), max_size=5),
    "inputs": st.dictionaries(CHANNEL_NAMES, channels(), max_size=4),
    "use_spot_instances": st.booleans(),
    "max_wait": st.integers(3600, 28 * 24 * 3600),
    "checkpoints": st.booleans(),
    "checkpoint_local_path": st.just("/opt/ml/checkpoints"),
    "keep_alive_period_in_seconds": st.integers(0, 21600),
    "max_retry_attempts": st.integers(1, 30),
    "encrypt_inter_container_traffic": st.booleans(),
    "enable_network_isolation": st.booleans(),
    "metric_definitions": st.lists(st.fixed_dictionaries({
        "Name": texts("abc:_", 1, 10), "Regex": st.sampled_from(["loss=([0-9.]+)", "acc: (\\d+)", "loss=[0-9.]+"]),
    }), max_size=3, unique_by=lambda m: m["Name"]),
    "tags": st.dictionaries(texts("abc-_:", 1, 10), texts("abc -_", 0, 10), max_size=4),
    "base_job_name": st.from_regex(r"[a-z][a-z0-9]{0,40}(-[a-z0-9]{1,5}){0,2}", fullmatch=True),
    "output_kms_key": st.just(DEV_KEY),
    "volume_kms_key": st.just(DEV_KEY),
    "input_mode": st.sampled_from(["File", "FastFile"]),
    "container_log_level": st.sampled_from([10, 20, 30]),
    "capacity_retry": st.fixed_dictionaries({}, optional={
        "max_attempts": st.integers(0, 10), "wait_seconds": st.integers(1, 86400),
        "backoff_rate": st.floats(1, 10, allow_nan=False),
    }),
    "description": st.text(max_size=30),
    "debugger_hook_config": st.booleans() | st.fixed_dictionaries({}, optional={
        "container_local_output_path": st.just("/opt/ml/output/tensors"),
        "hook_parameters": st.dictionaries(st.sampled_from(["save_interval"]), st.just("100")),
        "collection_configs": COLLECTIONS,
    }),
    "disable_profiler": st.booleans(),
    "profiler_config": st.fixed_dictionaries({}, optional={
        "system_monitor_interval_millis": st.sampled_from([100, 500, 60000]), "disable_profiler": st.booleans(),
    }),
    "tensorboard_output_config": st.booleans() | st.fixed_dictionaries({}, optional={
        "container_local_output_path": st.just("/opt/ml/output/tensorboard")}),
    "enable_sagemaker_metrics": st.booleans(),
    "disable_output_compression": st.booleans(),
    "enable_infra_check": st.booleans(),
    "enable_remote_debug": st.booleans(),
    "enable_session_tag_chaining": st.booleans(),
    "training_repository_access_mode": st.just("Platform"),
    "container_entry_point": COMMAND,
    "container_arguments": COMMAND,
    "model_uri": st.sampled_from(["s3://my-models/gpt/model.tar.gz", "models/gpt/"]),
    "model_channel_name": st.sampled_from(["model", "pretrained"]),
    "dependencies": st.just(["lib/helpers"]),
    "training_plan": st.just("arn:aws:sagemaker:us-east-1:111111111111:training-plan/reserved"),
    "max_instance_count": st.integers(1, 32),
    "unencrypted_traffic_reason": st.just("measured a 20% throughput loss"),
    "model_dir": st.sampled_from([False, "/opt/ml/model"]),
    "instance_groups": INSTANCE_GROUPS,
}

# --- mistakes: each replaces or removes one thing --------------------------------------------------------------

BROKEN = {
    "name": st.sampled_from(["", "My_Workload", "a" * 41, "-gpt", "gpt--x"]) | st.text(max_size=45),
    "entry_point": st.sampled_from(["missing.py", "../train.py", "/abs/train.py", "", 3, "s3://b/train.py"]),
    "source_dir": st.sampled_from(["missing", "..", "/", "s3://b/src.tar.gz", "train.py"]),
    "instance_type": st.sampled_from(["ml.p9.48xlarge", "ml.p4d.24xl", "p4d.24xlarge", "", 7, "local_gpu"]),
    "instance_count": edges(1, 1000),
    "volume_size": edges(1, 16384),
    "max_run": edges(1, 28 * 24 * 3600),
    "max_wait": edges(1, 28 * 24 * 3600),
    "keep_alive_period_in_seconds": edges(0, 21600),
    "max_retry_attempts": edges(1, 30),
    "distribution": st.dictionaries(
        st.sampled_from(["torch_distributed", "mpi", "smdistributed", "horovod", "pytorchddp", "instance_groups",
                         "pytorchxla"]), ANYTHING, max_size=2,
    ) | st.fixed_dictionaries({"smdistributed": st.fixed_dictionaries({"modelparallel": st.fixed_dictionaries({
        "enabled": st.just(True), "parameters": st.dictionaries(st.sampled_from([
            "partitions", "microbatches", "pipeline", "placement_strategy", "optimize", "ddp", "horovod",
            "auto_partition", "default_partition", "memory_weight", "ddp_port"]), ANYTHING, max_size=4),
    })})}) | st.fixed_dictionaries({"mpi": st.just({"enabled": True}),
                                    "instance_groups": st.sampled_from([["train"], ["nope"], [], "train"])}),
    "hyperparameters": st.dictionaries(
        st.sampled_from(["sagemaker_program", "mp_parameters", "model_dir", "k" * 257, ""]) | texts("ab", 1, 3),
        JSON_VALUES | st.sampled_from(["x" * 2497, "x" * 2499, ["y" * 1250, "z" * 1250], "a\nb", "${Bad}"]),
        max_size=3,
    ) | st.dictionaries(texts("abcdefgh", 1, 8), st.integers(), min_size=96, max_size=101),
    "environment": st.dictionaries(
        texts("ABZ_09-a.é", 0, 6), st.text(max_size=5) | st.sampled_from(["v" * 512, "v" * 513, 1, True]), max_size=3,
    ) | st.dictionaries(ENV_KEYS, st.just("1"), min_size=97, max_size=101),
    "inputs": st.dictionaries(
        st.sampled_from(["code", "model", "c" * 65, "a/b", "", "with space"]) | CHANNEL_NAMES, channels() | ANYTHING,
        max_size=3,
    ) | st.fixed_dictionaries({"x": st.fixed_dictionaries({"directory_path": st.sampled_from(["", "/", "/../x"])})})
    | st.fixed_dictionaries({"x": st.fixed_dictionaries({"s3_data": st.just("data/"), "target_attribute_name":
                                                         st.just("y")})})
    | st.fixed_dictionaries({"x": st.sampled_from([
        {"s3_data": "data/", "content_type": "a\nb"}, {"s3_data": "data/", "attribute_names": ["a\nb"]},
        {"s3_data": "data/", "instance_groups": ["nope"]}, {"s3_data": "data/", "shuffle_config": {"seed": -1}},
        {"directory_path": "/a\nb"}, {"directory_path": "/d", "content_type": "x" * 300}])})
    | st.dictionaries(CHANNEL_NAMES, st.just("data/"), min_size=19, max_size=21),
    "checkpoint_s3_uri": st.sampled_from(["s3://my-checkpoints/run", "s3://", "gs://x/y", "s3://b"]),
    "metric_definitions": st.lists(st.fixed_dictionaries({
        "Name": texts("abc:_", 0, 3) | st.just("n" * 256),
        "Regex": st.sampled_from(["loss", "([", "x" * 501, "", "(a)", "(a)\n"]),
    }), min_size=1, max_size=2) | st.lists(st.just({"Name": "m", "Regex": "(m)"}), min_size=40, max_size=41),
    "tags": st.dictionaries(texts("abc-_:é#", 0, 10) | st.sampled_from(["aws:x", "k" * 129]),
                            texts("abc -_#", 0, 10) | st.just("v" * 257), max_size=3)
    | st.dictionaries(texts("abcdefgh", 1, 8), st.just("v"), min_size=47, max_size=48),
    "base_job_name": texts("abcdef0123-_", 1, 64),
    "output_path": st.sampled_from(["/tmp/out", "s3://", "s3://b", "gs://x", "s3://my-results/gpt"]),
    "output_kms_key": st.sampled_from(["bad key", "", "alias/ok", "arn:aws:kms:eu-west-1:111111111111:key/x"]),
    "volume_kms_key": st.sampled_from(["bad key", "alias/ok"]),
    "input_mode": st.sampled_from(["Fast", "file", "Pipe"]),
    "container_log_level": st.sampled_from([-1, 60, "INFO"]),
    "capacity_retry": st.fixed_dictionaries({}, optional={
        "max_attempts": edges(0, 10), "wait_seconds": edges(1, 86400), "backoff_rate": st.floats(-1, 12),
        "fallback_instance_types": st.lists(st.sampled_from([*INSTANCE_TYPES[:20], "ml.nope"]), max_size=3),
    }),
    "framework": st.sampled_from(["jax", "", None]),
    "debugger_hook_config": st.sampled_from([
        {"s3_output_path": "s3://x/y"}, {"collection_configs": [{}]}, "yes", {"container_local_output_path": "/a\nb"},
        {"hook_parameters": {"k": 1}}, {"collection_configs": [{"name": "w", "parameters": {"k": ["x"]}}]},
        {"collection_configs": [{"name": "w"}, {"name": "w"}]}, {"hook_parameters": {f"k{i}": "v" for i in range(21)}},
    ]),
    "profiler_config": st.sampled_from([{"s3_output_path": "s3://x/y"}, {"framework_profile_params": {}},
                                        {"system_monitor_interval_millis": 0}, True]),
    "tensorboard_output_config": st.sampled_from([{"s3_output_path": "s3://x/y"}, {"x": 1}, "on"]),
    "instance_groups": st.just([]) | st.lists(st.fixed_dictionaries({}, optional={
        "instance_group_name": st.sampled_from(["train", "", 3]), "instance_type": st.sampled_from(["ml.nope", 1]),
        "instance_count": edges(1, 10)}), max_size=2),
    "training_repository_access_mode": st.sampled_from(["Vpc", "platform"]),
    "training_plan": st.sampled_from(["undeclared", "arn:aws:sagemaker:us-east-1:1:training-plan/x"]),
    "container_entry_point": st.sampled_from([[], [""], "python", ["x" * 300], ["python", "a\nb"]]),
    "container_arguments": st.sampled_from([[], ["a\nb"], [3]]),
    "checkpoint_local_path": st.sampled_from(["checkpoints", "", "/opt/ml/checkpoints", "/a\nb"]),
    "model_uri": st.sampled_from(["s3://unknown-bucket/m", "file:///m", "/abs"]),
    "model_channel_name": st.sampled_from(["", "bad name", "code"]),
    "dependencies": st.sampled_from([["missing"], ["/etc"], "lib"]),
    "instance_placement_config": st.sampled_from([{"EnableMultipleJobs": "yes"}, [], {"Nope": 1}]),
    "max_instance_count": edges(1, 1000),
    "model_dir": st.sampled_from(["s3://b/model", "relative", True]),
}
WRONG_KEYS = ["instance_cout", "role", "subnets", "foo", "hyperparameter", "train_instance_count", "distributions",
              "env", "rules", "git_config", "compiler_config", "image_name", "sagemaker_session", "job_name"]


def _shape(spec: dict[str, Any]) -> None:
    """What a careful user keeps consistent: spot rules, one sizing form, code for framework estimators."""
    if spec.get("use_spot_instances"):
        spec.setdefault("max_wait", spec.get("max_run", 86400) + 600)
        spec["checkpoints"] = True
        spec.pop("keep_alive_period_in_seconds", None)
        spec.pop("training_plan", None)
    else:
        spec.pop("max_wait", None)
    if "instance_groups" in spec:
        spec.pop("instance_type", None)
        spec.pop("instance_count", None)
        spec.pop("max_instance_count", None)
    if not spec.get("checkpoints"):
        spec.pop("checkpoint_local_path", None)
    if spec.get("framework") != "tensorflow":
        spec.pop("model_dir", None)
    if "source_dir" in spec:
        spec.pop("dependencies", None)


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    """A plausible spec, then zero to three mistakes (none about half the time)."""
    spec: dict[str, Any] = {"name": draw(st.sampled_from(["gpt", "gpt-small", "resnet-50", "a" * 30])),
                            "entry_point": "train.py", "instance_type": draw(st.sampled_from(INSTANCE_TYPES))}
    if draw(st.booleans()):
        spec["source_dir"] = "src"
    spec.update(draw(st.sampled_from(IMAGES[:PLAUSIBLE_IMAGES])))
    if "framework" not in spec and draw(st.booleans()):
        spec.pop("entry_point")
        spec.pop("source_dir", None)
    keys = draw(st.lists(st.sampled_from(sorted(PLAUSIBLE)), unique=True, max_size=8))
    for key in keys:
        spec[key] = draw(PLAUSIBLE[key])
    _shape(spec)

    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))):
        mistake = draw(st.sampled_from(["broken value", "wrong type", "unknown key", "missing key", "bad image"]))
        if mistake == "broken value":
            key = draw(st.sampled_from(sorted(BROKEN)))
            spec[key] = draw(BROKEN[key])
        elif mistake == "wrong type":
            spec[draw(st.sampled_from(sorted(spec)))] = draw(ANYTHING)
        elif mistake == "unknown key":
            spec[draw(st.sampled_from(WRONG_KEYS))] = draw(ANYTHING)
        elif mistake == "missing key":
            spec.pop(draw(st.sampled_from(sorted(spec))))
        else:
            for key in ("framework", "framework_version", "py_version", "image_uri", "image", "transformers_version",
                        "pytorch_version"):
                spec.pop(key, None)
            spec.update(draw(st.sampled_from(IMAGES[PLAUSIBLE_IMAGES:])))
    return spec


@pytest.fixture(scope="module")
def code_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("project")
    (directory / "train.py").write_text("print('training')\n")
    (directory / "src").mkdir()
    (directory / "src" / "train.py").write_text("print('training')\n")
    (directory / "lib" / "helpers").mkdir(parents=True)
    (directory / "lib" / "helpers" / "__init__.py").write_text("")
    return directory


def longest_values(request: dict[str, Any], max_attempts: int) -> dict[str, str]:
    """Deploy-time values, and the run-time ones that make the longest job name this spec can produce."""
    return sdk.deploy_values(request, **{
        placeholders.RUN_ID: "f" * len(sdk.RUN_ID), placeholders.ATTEMPT: str(max_attempts),
    })


def accepted(spec: dict[str, Any], env: Environment, code_dir: Path) -> Workload:
    """What validate and synth accept: the spec's checks, then the environment's (raises SpecError)."""
    workload = parse_workload(copy.deepcopy(spec), source="random.yaml", spec_dir=code_dir, project_root=code_dir)
    findings = Findings(workload.source)
    check_in_environment(workload, env, findings)
    if findings.problems:
        raise SpecError(findings.problems)
    return workload


def assert_valid_request(workload: Workload, env: Environment) -> None:
    request = compile_request(workload, env)
    filled = placeholders.substitute(request, longest_values(request, workload.capacity_retry.max_attempts))
    problems = service_model.validate_request(filled)
    assert problems == [], "compiled a request SageMaker would refuse:\n" + "\n".join(problems)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs(), env=st.sampled_from(ALL_ENVIRONMENTS))
def test_every_spec_compiles_to_a_valid_request_or_fails_with_a_spec_error(
    spec: dict[str, Any], env: Environment, code_dir: Path,
) -> None:
    note(f"spec: {spec!r}\nenvironment: {env.name}")
    try:
        workload = accepted(spec, env, code_dir)
    except SpecError as exc:
        event("rejected with a SpecError")
        assert exc.problems, "a SpecError must carry at least one problem"
        for problem in exc.problems:
            assert problem.message.strip(), f"empty message for {problem.field}"
        return
    event("compiled")
    assert_valid_request(workload, env)


# A few hand-picked specs next to the random ones: each must be accepted, so the property above is not
# passing only because everything is rejected.
@pytest.mark.parametrize("spec", [
    {"name": "gpt", "entry_point": "train.py", "instance_type": "ml.g5.2xlarge", **IMAGES[0]},
    {"name": "gpt", "entry_point": "train.py", "instance_type": "ml.p4d.24xlarge", "instance_count": 2, **IMAGES[1],
     "distribution": {"smdistributed": {"dataparallel": {"enabled": True}}}, "use_spot_instances": True,
     "max_wait": 90000, "checkpoints": True, "inputs": {"train": "gpt/data/", "fsx": {"directory_path": "/gpt"}}},
    {"name": "resnet", "entry_point": "train.py", "instance_type": "ml.p3.16xlarge", "instance_count": 2,
     **IMAGES[5], "distribution": {"mpi": {"enabled": True, "processes_per_host": 8}}},
    {"name": "bench", "image_uri": OWN_IMAGE, "instance_type": "ml.c5.xlarge", "hyperparameters": {"n": 2}},
    {"name": "hetero", "entry_point": "train.py", "source_dir": "src", **IMAGES[1], "instance_groups": [
        {"instance_group_name": "train", "instance_type": "ml.p4d.24xlarge", "instance_count": 2},
        {"instance_group_name": "data", "instance_type": "ml.c5.18xlarge", "instance_count": 1}],
     "distribution": {"mpi": {"enabled": True}, "instance_groups": ["train"]}, "debugger_hook_config": True,
     "profiler_config": {"system_monitor_interval_millis": 500}, "tensorboard_output_config": True},
], ids=["single", "smddp-spot-fsx", "tf-mpi", "generic", "hetero-observed"])
def test_plausible_specs_are_accepted(spec: dict[str, Any], code_dir: Path) -> None:
    assert_valid_request(accepted(spec, ENVIRONMENTS["dev"], code_dir), ENVIRONMENTS["dev"])


def _accepted(spec: dict[str, Any], code_dir: Path) -> bool:
    try:
        accepted(spec, OPEN, code_dir)
    except SpecError:
        return False
    return True


def test_generator_produces_both_outcomes(code_dir: Path) -> None:
    """Keeps the property honest: the generator yields specs that are accepted and specs that are rejected."""
    quick = settings(max_examples=300, database=None, phases=[Phase.generate])
    find(specs(), lambda spec: _accepted(spec, code_dir), settings=quick)
    find(specs(), lambda spec: not _accepted(spec, code_dir), settings=quick)
