"""Property: any spec either compiles to a request SageMaker would accept, or fails with a SpecError.

Hypothesis generates spec mappings that are mostly plausible (real strategies, catalogued instance types,
framework versions the SDK knows) with random mistakes mixed in: values at and past SageMaker's limits,
wrong types, unknown keys, combinations the SDK refuses. Whatever comes in, `parse_workload` followed by
`compile_request` must either return a request that passes the full service-model validation (after
deploy-time values and the longest run-time job name are filled in), or raise SpecError. Any other
exception, or a request the service would refuse, is a bug: a traceback or a failed deploy instead of a
message that says what to change.
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

from tests import sdk_reference as sdk
from compiler import catalog, placeholders, service_model
from compiler.environments import Environment, load_environments
from compiler.errors import SpecError
from compiler.request import compile_request
from compiler.spec import parse_workload

ENVIRONMENTS = load_environments()
EXAMPLES = int(os.environ.get("SPEC_PROPERTY_EXAMPLES", "200"))
NO_FSX = dataclasses.replace(ENVIRONMENTS["dev"], name="nofsx", fsx=None)

# Real combinations the pinned SDK has images for, and a few it does not.
IMAGES = [
    {"framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311"},
    {"framework": "pytorch", "framework_version": "2.2.0", "py_version": "py310"},
    {"framework": "pytorch", "framework_version": "1.13.1", "py_version": "py39"},
    {"framework": "pytorch", "framework_version": "2.8.0", "py_version": "py312"},
    {"framework": "tensorflow", "framework_version": "2.14", "py_version": "py310"},
    {"framework": "tensorflow", "framework_version": "2.8", "py_version": "py39"},
    {"framework": "huggingface", "transformers_version": "4.36", "pytorch_version": "2.1", "py_version": "py310"},
    {"framework": "pytorch", "image_uri": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu"},
    {"framework": "pytorch", "image": {"repository": "gpt-trainer"}},
    {"framework": "pytorch", "image": {"repository": "gpt-trainer", "tag": "v1.2"}},
    # broken
    {"framework": "pytorch", "framework_version": "9.9.9", "py_version": "py311"},
    {"framework": "pytorch", "framework_version": "2.3.0", "py_version": "py27"},
    {"framework": "pytorch", "framework_version": "2.3.0"},
    {"framework": "jax", "framework_version": "0.4"},
    {"framework": "pytorch", "image_uri": "", "framework_version": "2.3.0", "py_version": "py311"},
    {"framework": "pytorch", "image": {"repository": "Bad Repo!"}},
    {"framework": "pytorch", "image": "gpt-trainer"},
]

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
        return {"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"hybrid_shard_degree": 8}}},
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
        return "s3://" + draw(texts("abcdefghij-", 3, 20)) + "/" + draw(texts("abc/_-.", 0, 20))
    if kind == "s3 prefix":
        return draw(texts("abcdef_-", 1, 10)) + "/" + draw(texts("abcdef/_-.", 0, 20))
    if kind == "s3 dict":
        return draw(st.fixed_dictionaries({"s3_data": st.just("s3://my-datasets/train/")}, optional={
            "input_mode": st.sampled_from(["File", "Pipe", "FastFile"]),
            "distribution": st.sampled_from(["FullyReplicated", "ShardedByS3Key"]),
            "s3_data_type": st.sampled_from(["S3Prefix", "ManifestFile", "AugmentedManifestFile"]),
            "content_type": st.sampled_from(["application/x-parquet", "text/csv"]),
            "compression": st.sampled_from(["None", "Gzip"]),
        }))
    return draw(st.fixed_dictionaries({"directory_path": texts("abc/._-", 1, 30)},
                                      optional={"file_system_access_mode": st.sampled_from(["ro", "rw"])}))


CHANNEL_NAMES = texts("abcdefgh.-_", 1, 10)
ENV_KEYS = st.from_regex(r"[A-Z_][A-Z0-9_]{0,15}", fullmatch=True)
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
        "Name": texts("abc:_", 1, 10), "Regex": st.sampled_from(["loss=([0-9.]+)", "acc: (\\d+)"]),
    }), max_size=3),
    "tags": st.dictionaries(texts("abc-_:", 1, 10), texts("abc -_", 0, 10), max_size=4),
    "base_job_name": st.from_regex(r"[a-z][a-z0-9]{0,40}(-[a-z0-9]{1,5}){0,2}", fullmatch=True),
    "output_path": st.just("s3://my-results/gpt"),
    "output_kms_key": st.sampled_from(["alias/training", "arn:aws:kms:us-east-1:111111111111:key/abcd"]),
    "input_mode": st.sampled_from(["File", "FastFile"]),
    "container_log_level": st.sampled_from([10, 20, 30]),
    "capacity_retry": st.fixed_dictionaries({}, optional={
        "max_attempts": st.integers(0, 10), "wait_seconds": st.integers(1, 86400),
        "backoff_rate": st.floats(1, 10, allow_nan=False),
    }),
    "description": st.text(max_size=30),
}

# --- mistakes: each replaces or removes one thing --------------------------------------------------------------

BROKEN = {
    "name": st.sampled_from(["", "My_Workload", "a" * 41, "-gpt", "gpt--x"]) | st.text(max_size=45),
    "entry_point": st.sampled_from(["missing.py", "../train.py", "/abs/train.py", "", 3]),
    "instance_type": st.sampled_from(["ml.p9.48xlarge", "ml.p4d.24xl", "p4d.24xlarge", "", 7]),
    "instance_count": edges(1, 1000),
    "volume_size": edges(1, 16384),
    "max_run": edges(1, 28 * 24 * 3600),
    "max_wait": edges(1, 28 * 24 * 3600),
    "keep_alive_period_in_seconds": edges(0, 21600),
    "max_retry_attempts": edges(1, 30),
    "distribution": st.dictionaries(
        st.sampled_from(["torch_distributed", "mpi", "smdistributed", "horovod", "pytorchddp"]), ANYTHING, max_size=2,
    ) | st.fixed_dictionaries({"smdistributed": st.fixed_dictionaries({"modelparallel": st.fixed_dictionaries({
        "enabled": st.just(True), "parameters": st.dictionaries(st.sampled_from([
            "partitions", "microbatches", "pipeline", "placement_strategy", "optimize", "ddp", "horovod",
            "auto_partition", "default_partition", "memory_weight", "ddp_port"]), ANYTHING, max_size=4),
    })})}),
    "hyperparameters": st.dictionaries(
        st.sampled_from(["sagemaker_program", "mp_parameters", "model_dir", "k" * 257, ""]) | texts("ab", 1, 3),
        JSON_VALUES | st.sampled_from(["x" * 2497, "x" * 2499, ["y" * 1250, "z" * 1250], "a\nb"]), max_size=3,
    ) | st.dictionaries(texts("abcdefgh", 1, 8), st.integers(), min_size=96, max_size=101),
    "environment": st.dictionaries(
        texts("ABZ_09-a.é", 0, 6), st.text(max_size=5) | st.sampled_from(["v" * 512, "v" * 513, 1, True]), max_size=3,
    ) | st.dictionaries(ENV_KEYS, st.just("1"), min_size=97, max_size=101),
    "inputs": st.dictionaries(
        st.sampled_from(["code", "c" * 65, "a/b", "", "with space"]) | CHANNEL_NAMES, channels() | ANYTHING,
        max_size=3,
    ) | st.fixed_dictionaries({"x": st.fixed_dictionaries({"directory_path": st.sampled_from(["", "/", "/../x"])})})
    | st.dictionaries(CHANNEL_NAMES, st.just("data/"), min_size=19, max_size=21),
    "checkpoint_s3_uri": st.sampled_from(["s3://my-checkpoints/run", "s3://", "gs://x/y", "s3://b"]),
    "checkpoint_local_path": st.sampled_from(["checkpoints", "", "/opt/ml/checkpoints"]),
    "metric_definitions": st.lists(st.fixed_dictionaries({
        "Name": texts("abc:_", 0, 3) | st.just("n" * 256),
        "Regex": st.sampled_from(["loss", "([", "x" * 501, "", "(a)"]),
    }), min_size=1, max_size=2) | st.lists(st.just({"Name": "m", "Regex": "(m)"}), min_size=40, max_size=41),
    "tags": st.dictionaries(texts("abc-_:é#", 0, 10) | st.sampled_from(["aws:x", "k" * 129]),
                            texts("abc -_#", 0, 10) | st.just("v" * 257), max_size=3)
    | st.dictionaries(texts("abcdefgh", 1, 8), st.just("v"), min_size=47, max_size=48),
    "base_job_name": texts("abcdef0123-_", 1, 64),
    "output_path": st.sampled_from(["/tmp/out", "s3://", "s3://b", "gs://x"]),
    "output_kms_key": st.sampled_from(["bad key", "", "alias/ok"]),
    "input_mode": st.sampled_from(["Fast", "file", "Pipe"]),
    "container_log_level": st.sampled_from([-1, 60, "INFO"]),
    "capacity_retry": st.fixed_dictionaries({}, optional={
        "max_attempts": edges(0, 10), "wait_seconds": edges(1, 86400), "backoff_rate": st.floats(-1, 12),
    }),
    "framework": st.sampled_from(["jax", "", None]),
}


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    """A plausible spec, then zero to three mistakes (none about half the time)."""
    spec: dict[str, Any] = {"name": draw(st.sampled_from(["gpt", "gpt-small", "resnet-50", "a" * 30])),
                            "entry_point": "train.py",
                            "instance_type": draw(st.sampled_from(sorted(catalog.CATALOG)))}
    spec.update(draw(st.sampled_from(IMAGES[:10])))
    keys = draw(st.lists(st.sampled_from(sorted(PLAUSIBLE)), unique=True, max_size=8))
    for key in keys:
        spec[key] = draw(PLAUSIBLE[key])
    if spec.get("use_spot_instances"):  # a careful user follows the SDK's spot rules
        spec.setdefault("max_wait", spec.get("max_run", 86400) + draw(st.integers(0, 3600)))
        spec["checkpoints"] = True
        spec.pop("keep_alive_period_in_seconds", None)
    else:
        spec.pop("max_wait", None)

    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))):
        mistake = draw(st.sampled_from(["broken value", "wrong type", "unknown key", "missing key", "bad image"]))
        if mistake == "broken value":
            key = draw(st.sampled_from(sorted(BROKEN)))
            spec[key] = draw(BROKEN[key])
        elif mistake == "wrong type":
            spec[draw(st.sampled_from(sorted(spec)))] = draw(ANYTHING)
        elif mistake == "unknown key":
            spec[draw(st.sampled_from(["instance_cout", "role", "subnets", "foo", "hyperparameter"]))] = draw(ANYTHING)
        elif mistake == "missing key":
            spec.pop(draw(st.sampled_from(sorted(spec))))
        else:
            for key in ("framework_version", "py_version", "image_uri", "image", "transformers_version",
                        "pytorch_version"):
                spec.pop(key, None)
            spec.update(draw(st.sampled_from(IMAGES[10:])))
    return spec


@pytest.fixture(scope="module")
def code_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("code")
    (directory / "train.py").write_text("print('training')\n")
    return directory


def longest_values(request: dict[str, Any], max_attempts: int) -> dict[str, str]:
    """Deploy-time values, and the run-time ones that make the longest job name this spec can produce."""
    return sdk.deploy_values(request, **{
        placeholders.RUN_ID: "f" * len(sdk.RUN_ID), placeholders.ATTEMPT: str(max_attempts),
    })


# 200 examples keep the suite quick (~10 s); SPEC_PROPERTY_EXAMPLES=5000 runs a deeper hunt.
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs(), env=st.sampled_from([*ENVIRONMENTS.values(), NO_FSX]))
def test_every_spec_compiles_to_a_valid_request_or_fails_with_a_spec_error(
    spec: dict[str, Any], env: Environment, code_dir: Path,
) -> None:
    note(f"spec: {spec!r}\nenvironment: {env.name}")
    try:
        workload = parse_workload(spec, source="random.yaml", base_dir=code_dir)
        request = compile_request(workload, env)
    except SpecError as exc:
        event("rejected with a SpecError")
        assert exc.problems, "a SpecError must carry at least one problem"
        for problem in exc.problems:
            assert problem.message.strip(), f"empty message for {problem.field}"
        return
    event("compiled")
    filled = placeholders.substitute(request, longest_values(request, workload.capacity_retry.max_attempts))
    problems = service_model.validate_request(filled)
    assert problems == [], "compiled a request SageMaker would refuse:\n" + "\n".join(problems)


# A few hand-picked specs next to the random ones: each must be accepted, so the property above is not
# passing only because everything is rejected.
@pytest.mark.parametrize("spec", [
    {"name": "gpt", "entry_point": "train.py", "instance_type": "ml.g5.2xlarge", **IMAGES[0]},
    {"name": "gpt", "entry_point": "train.py", "instance_type": "ml.p4d.24xlarge", "instance_count": 2, **IMAGES[1],
     "distribution": {"smdistributed": {"dataparallel": {"enabled": True}}}, "use_spot_instances": True,
     "max_wait": 90000, "checkpoints": True, "inputs": {"train": "data/", "fsx": {"directory_path": "/d"}}},
    {"name": "resnet", "entry_point": "train.py", "instance_type": "ml.p3.16xlarge", "instance_count": 2,
     **IMAGES[4], "distribution": {"mpi": {"enabled": True, "processes_per_host": 8}}},
])
def test_plausible_specs_are_accepted(spec: dict[str, Any], code_dir: Path) -> None:
    workload = parse_workload(spec, source="ok.yaml", base_dir=code_dir)
    request = compile_request(workload, ENVIRONMENTS["dev"])
    filled = placeholders.substitute(request, longest_values(request, workload.capacity_retry.max_attempts))
    assert service_model.validate_request(filled) == []


def _accepted(spec: dict[str, Any], code_dir: Path) -> bool:
    try:
        parse_workload(copy.deepcopy(spec), source="random.yaml", base_dir=code_dir)
    except SpecError:
        return False
    return True


def test_generator_produces_both_outcomes(code_dir: Path) -> None:
    """Keeps the property honest: the generator yields specs that are accepted and specs that are rejected."""
    quick = settings(max_examples=300, database=None, phases=[Phase.generate])
    find(specs(), lambda spec: _accepted(spec, code_dir), settings=quick)
    find(specs(), lambda spec: not _accepted(spec, code_dir), settings=quick)
