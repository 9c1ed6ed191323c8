"""XGBoost and scikit-learn script mode, and SageMaker's built-in algorithms, compile to what the real SDK sends.

The same two-sided check as tests/compiler/compilation/test_sdk_parity.py (`assert_matches_sdk`: our compiled request
against the real `sagemaker==2.257.7` estimator's `fit()`, captured offline): `framework: xgboost` is the SDK's
`XGBoost`, `framework: sklearn` its `SKLearn`, and `image: {algorithm, version}` the generic `Estimator` on
`image_uris.retrieve(algorithm, region, version)`, as the SageMaker Developer Guide writes it. Cases come from the SDK's
and the guide's documentation and from public repositories, each naming its source; each is checked in every region
the shipped environments train in. What either estimator refuses, the spec refuses naming the field; so does what the
guide says an algorithm cannot take.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from compiler.compilation.request import compile_request
from compiler.errors import SpecError
from compiler.facts import algorithms
from compiler.sdk import service_model
from compiler.spec import read_spec_file
from tests import sdk_reference as sdk
from tests.compiler.compilation.test_sdk_parity import (
    DEV,
    Case,
    accepted,
    assert_matches_sdk,
    compiled,
    worst_case_values,
)
from tests.project import ENVIRONMENTS, PROJECT, SHIPPED

# dev (us-east-1) and the same environment in prod's region (us-west-2): the algorithm registries differ per region.
WEST = dataclasses.replace(DEV, name="west", region=ENVIRONMENTS["prod"].region)
REGIONS = (DEV, WEST)


@pytest.fixture(scope="module")
def code_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project: train.py beside the specs and a source_dir `src` holding train.py."""
    directory = tmp_path_factory.mktemp("project")
    (directory / "train.py").write_text("print('training')\n")
    (directory / "src").mkdir()
    (directory / "src" / "train.py").write_text("print('training')\n")
    return directory


def _spec(name: str, **values: Any) -> dict[str, Any]:
    return {"name": name, "entry_point": "train.py", "source_dir": "src", **values}


# The guide's XGBoost hyperparameters (xgboost.html, "Use XGBoost as a framework" / "as a built-in algorithm"), all
# strings as the guide writes them.
GUIDE_XGBOOST_HYPERPARAMETERS = {"max_depth": "5", "eta": "0.2", "gamma": "4", "min_child_weight": "6",
                                 "subsample": "0.7", "verbosity": "1", "objective": "reg:squarederror",
                                 "num_round": "50"}
LIBSVM_CHANNELS = {"train": {"s3_data": "s3://my-datasets/abalone/train/", "content_type": "libsvm"},
                   "validation": {"s3_data": "s3://my-datasets/abalone/validation/", "content_type": "libsvm"}}

XGBOOST_CASES = [
    # docs.aws.amazon.com/sagemaker/latest/dg/xgboost.html, "Use XGBoost as a framework" (SDK v2 tab)
    Case("SageMaker Developer Guide: XGBoost 1.2-2 as a framework, libsvm channels", _spec(
        "xgb-guide", framework="xgboost", framework_version="1.2-2", hyperparameters=GUIDE_XGBOOST_HYPERPARAMETERS,
        instance_count=1, instance_type="ml.m5.2xlarge", inputs=LIBSVM_CHANNELS,
    )),
    # aws/sagemaker-python-sdk doc/frameworks/xgboost/using_xgboost.rst, "Create an Estimator" (train_instance_count and
    # train_instance_type written in v2 names); 1.0-1 images are CPU only, tagged 1.0-1-cpu-py3
    Case("sagemaker-python-sdk docs: XGBoost 1.0-1 (a cpu-py3 tag), one ml.m5.2xlarge", _spec(
        "xgb-sdk-docs", framework="xgboost", framework_version="1.0-1", entry_point="train.py",
        hyperparameters={"num_round": 50, "max_depth": 5, "eta": 0.2, "objective": "reg:squarederror"},
        instance_count=1, instance_type="ml.m5.2xlarge", inputs={"train": "s3://my-datasets/abalone/train/"},
    )),
    # aws/amazon-sagemaker-examples introduction_to_amazon_algorithms/xgboost_abalone/
    # xgboost_abalone_dist_script_mode.ipynb: distributed script mode, two instances
    Case("amazon-sagemaker-examples: XGBoost 1.2-1 script mode on two ml.m5.2xlarge", _spec(
        "xgb-abalone-dist", framework="xgboost", framework_version="1.2-1", entry_point="train.py",
        hyperparameters={**GUIDE_XGBOOST_HYPERPARAMETERS, "verbosity": "2"}, instance_count=2,
        instance_type="ml.m5.2xlarge", inputs=LIBSVM_CHANNELS,
    )),
    # The pinned SDK's newest XGBoost (sagemaker 2.257.7 image_uri_config/xgboost.json): 3.0-5, sharded input, GPUs,
    # checkpoints kept across a spot interruption, py_version written out
    Case("XGBoost 3.0-5 on two GPU instances, sharded input, spot with checkpoints", _spec(
        "xgb-gpu", framework="xgboost", framework_version="3.0-5", py_version="py3", instance_type="ml.g5.2xlarge",
        instance_count=2, use_spot_instances=True, max_wait=7200, max_run=3600, checkpoints=True,
        checkpoint_local_path="/opt/ml/checkpoints", hyperparameters={"tree_method": "gpu_hist", "num_round": 200},
        inputs={"train": {"s3_data": "datasets/tabular/train/", "distribution": "ShardedByS3Key",
                          "content_type": "text/csv"}},
    ), warns=("instance_type",)),  # two GPU nodes without EFA: the platform's warning, true of any framework
    # The SDK takes instance groups for XGBoost and resolves its image without an instance type
    Case("XGBoost 1.7-1 on a heterogeneous cluster (the image resolved without an instance type)", {
        "name": "xgb-groups", "framework": "xgboost", "framework_version": "1.7-1", "entry_point": "train.py",
        "instance_groups": [{"instance_group_name": "a", "instance_type": "ml.m5.xlarge", "instance_count": 1},
                            {"instance_group_name": "b", "instance_type": "ml.c5.xlarge", "instance_count": 2}],
    }),
]

SKLEARN_CASES = [
    # aws/sagemaker-python-sdk doc/frameworks/sklearn/using_sklearn.rst, "Create an Estimator" (v2 names)
    Case("sagemaker-python-sdk docs: SKLearn 0.20.0 on ml.m4.xlarge, train and test", {
        "name": "sk-sdk-docs", "framework": "sklearn", "entry_point": "train.py", "instance_type": "ml.m4.xlarge",
        "framework_version": "0.20.0", "hyperparameters": {"epochs": 20, "batch-size": 64, "learning-rate": 0.1},
        "inputs": {"train": "s3://my-datasets/path/to/my/training/data",
                   "test": "s3://my-datasets/path/to/my/test/data"},
    }),
    # Satya-git-hub/mobile_price_prediction_api_AWS pipelines/training_pipeline.py (checkpoints: true added, which the
    # platform requires beside spot)
    Case("mobile_price_prediction_api_AWS: SKLearn 0.23-1 with spot, a base job name", _spec(
        "sk-rf", framework="sklearn", framework_version="0.23-1", instance_count=1, instance_type="ml.m5.large",
        base_job_name="RF-custom-sklearn", hyperparameters={"n_estimators": 100, "random_state": 0},
        use_spot_instances=True, max_wait=7200, max_run=3600, checkpoints=True,
        inputs={"train": "s3://my-datasets/mobile/train.csv", "test": "s3://my-datasets/mobile/test.csv"},
    )),
    # The pinned SDK's newest scikit-learn (image_uri_config/sklearn.json): 1.4-2, metrics from the log
    Case("SKLearn 1.4-2 with py_version written out and a metric", _spec(
        "sk-latest", framework="sklearn", framework_version="1.4-2", py_version="py3", instance_type="ml.m5.xlarge",
        metric_definitions=[{"Name": "validation:accuracy", "Regex": "accuracy=([0-9.]+)"}],
        inputs={"train": "datasets/tabular/train/"},
    )),
]

ALGORITHM_CASES = [
    # aws/amazon-sagemaker-examples introduction_to_amazon_algorithms/linear_learner_mnist/linear_learner_mnist.ipynb:
    # image_uris.retrieve(region=..., framework="linear-learner"), no version (the catalog's only one)
    Case("amazon-sagemaker-examples: linear learner on MNIST, no version", {
        "name": "ll-mnist", "image": {"algorithm": "linear-learner"}, "instance_count": 1,
        "instance_type": "ml.c4.xlarge",
        "hyperparameters": {"feature_dim": 784, "predictor_type": "binary_classifier", "mini_batch_size": 200},
        "inputs": {"train": "s3://my-datasets/mnist/train/recordio-pb-data"},
    }),
    # docs.aws.amazon.com/sagemaker/latest/dg/xgboost.html, "Use XGBoost as a built-in algorithm" (SDK v2 tab)
    Case("SageMaker Developer Guide: XGBoost 1.2-2 as a built-in algorithm, volume_size 5", {
        "name": "xgb-algo", "image": {"algorithm": "xgboost", "version": "1.2-2"},
        "hyperparameters": {k: v for k, v in GUIDE_XGBOOST_HYPERPARAMETERS.items() if k != "verbosity"},
        "instance_count": 1, "instance_type": "ml.m5.2xlarge", "volume_size": 5, "inputs": LIBSVM_CHANNELS,
    }),
    # docs.aws.amazon.com/sagemaker/latest/dg/randomcutforest.html, Input/Output interface: the train channel sharded,
    # CSV without a label column; hyperparameters as the guide's RCF hyperparameters page names them
    Case("SageMaker Developer Guide: Random Cut Forest, train ShardedByS3Key, text/csv;label_size=0", {
        "name": "rcf", "image": {"algorithm": "randomcutforest", "version": "1"}, "instance_count": 2,
        "instance_type": "ml.m4.xlarge", "hyperparameters": {"feature_dim": 1, "num_samples_per_tree": 512,
                                                             "num_trees": 50},
        "inputs": {"train": {"s3_data": "datasets/taxi/train/", "content_type": "text/csv;label_size=0",
                             "distribution": "ShardedByS3Key"}},
    }),
    # aws/amazon-sagemaker-examples introduction_to_amazon_algorithms/blazingtext_word2vec_text8/
    # blazingtext_word2vec_text8.ipynb: batch_skipgram on two CPU instances (booleans as the generic Estimator's str())
    Case("amazon-sagemaker-examples: BlazingText batch_skipgram on two ml.c4.2xlarge", {
        "name": "bt-text8", "image": {"algorithm": "blazingtext"}, "instance_count": 2,
        "instance_type": "ml.c4.2xlarge", "volume_size": 5, "max_run": 360000, "input_mode": "File",
        "hyperparameters": {"mode": "batch_skipgram", "epochs": 5, "min_count": 5, "sampling_threshold": 0.0001,
                            "learning_rate": 0.05, "window_size": 5, "vector_dim": 100, "negative_samples": 5,
                            "batch_size": 11, "evaluation": True, "subwords": False},
        "inputs": {"train": {"s3_data": "s3://my-datasets/text8/", "distribution": "FullyReplicated",
                             "content_type": "text/plain", "s3_data_type": "S3Prefix"}},
    }),
    # k-means on two instances, the train channel sharded (k-means.html recommends ShardedByS3Key), CSV in File mode
    Case("k-means on two instances, sharded CSV", {
        "name": "kmeans", "image": {"algorithm": "kmeans", "version": "1"}, "instance_count": 2,
        "instance_type": "ml.m5.xlarge", "hyperparameters": {"k": 10, "feature_dim": 784},
        "inputs": {"train": {"s3_data": "datasets/mnist/train/", "distribution": "ShardedByS3Key",
                             "content_type": "text/csv"},
                   "test": {"s3_data": "datasets/mnist/test/", "content_type": "text/csv"}},
    }),
    # image classification on GPUs with a model channel (incremental training), Pipe mode
    Case("image classification on a GPU, Pipe mode, model_uri for incremental training", {
        "name": "ic", "image": {"algorithm": "image-classification", "version": "1"}, "instance_count": 2,
        "instance_type": "ml.p3.2xlarge", "input_mode": "Pipe", "model_uri": "s3://my-models/ic/model.tar.gz",
        "hyperparameters": {"num_classes": 257, "num_training_samples": 15420, "epochs": 2},
        "inputs": {"train": {"s3_data": "s3://my-datasets/caltech/train/", "content_type": "application/x-recordio"},
                   "validation": {"s3_data": "s3://my-datasets/caltech/validation/",
                                  "content_type": "application/x-recordio"}},
    }, warns=("instance_type",)),
]

CASES = XGBOOST_CASES + SKLEARN_CASES + ALGORITHM_CASES
IDS = [c.id for c in CASES]


@pytest.mark.parametrize("env", REGIONS, ids=[e.region for e in REGIONS])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_request_matches_the_sdk(case: Case, env: Any, code_dir: Path) -> None:
    assert_matches_sdk(case.spec, env, code_dir, case.id)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_is_accepted_with_exactly_its_warnings(case: Case, code_dir: Path) -> None:
    workload = accepted(case.spec, case.env, code_dir)
    warned = {w.split(": ", 2)[1] for w in workload.warnings}
    assert warned == set(case.warns), workload.warnings


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_passes_full_validation(case: Case, code_dir: Path) -> None:
    request = compiled(case.spec, case.env, code_dir, **worst_case_values(3))
    assert service_model.validate_request(request) == []


def test_algorithm_registries_differ_per_region(code_dir: Path) -> None:
    """The point of naming an algorithm once: each region gets its own registry's image, as the SDK's catalog says."""
    spec = next(c.spec for c in ALGORITHM_CASES if c.spec["name"] == "ll-mnist")
    images = {env.region: compiled(spec, env, code_dir)["AlgorithmSpecification"]["TrainingImage"] for env in REGIONS}
    expected = {env.region: sdk.algorithm_image_uri(spec["image"], env.region, spec["instance_type"])
                for env in REGIONS}
    assert images == expected
    assert len({uri.split(".", 1)[0] for uri in images.values()}) == 2, images


def test_the_guides_retrieve_without_an_instance_type_names_the_same_image() -> None:
    """The platform resolves an algorithm with the job's instance type (so CPU-only images refuse GPU types, as the
    SDK's catalog does); for every algorithm and version the guide's call, without one, names the same image."""
    sagemaker = sdk._sagemaker()
    for name in algorithms.names():
        config = sdk_reference_catalog(name)
        for version in config:
            if version in algorithms.ALGORITHMS[name].deprecated_versions:
                continue
            plain = sagemaker.image_uris.retrieve(name, DEV.region, version=version)
            typed = sdk.algorithm_image_uri({"algorithm": name, "version": version}, DEV.region, "ml.m5.xlarge")
            assert plain == typed, (name, version)


def sdk_reference_catalog(name: str) -> list[str]:
    """The versions of the algorithm's training images, as the pinned SDK's own reader of its catalog lists them
    (image_uris.config_for_framework; the XGBoost file keeps them under `training`)."""
    config = sdk._sagemaker().image_uris.config_for_framework(name)
    return list((config.get("training") or config).get("versions") or ())


def test_every_documented_algorithm_is_in_the_sdks_catalog() -> None:
    """Each algorithm of compiler/facts/algorithms.py is a training image of the pinned SDK's catalog, and each of
    its channel lists is what the guide's table gives (a required prefix, no repeats)."""
    for name, algorithm in algorithms.ALGORITHMS.items():
        assert sdk_reference_catalog(name), name
        assert 1 <= algorithm.required <= len(algorithm.channels), name
        assert len(set(algorithm.channels)) == len(algorithm.channels), name
        assert algorithm.source.startswith("https://docs.aws.amazon.com/sagemaker/latest/dg/"), name


# ---------------------------------------------------------------------------------------------------------------
# Shipped workloads in every environment they deploy to
# ---------------------------------------------------------------------------------------------------------------

TABULAR_SHIPPED = [p for p in SHIPPED if p.stem.startswith(("xgboost-", "sklearn-", "linear-learner-"))]


def test_each_kind_is_shipped() -> None:
    kinds = set()
    for path in TABULAR_SHIPPED:
        spec = read_spec_file(path, PROJECT).base
        kinds.add(spec.get("framework") or ("algorithm" if "algorithm" in (spec.get("image") or {}) else None))
    assert kinds == {"xgboost", "sklearn", "algorithm"}


@pytest.mark.parametrize("path", TABULAR_SHIPPED, ids=[p.stem for p in TABULAR_SHIPPED])
@pytest.mark.parametrize("env_name", sorted(ENVIRONMENTS))
def test_shipped_workload_matches_the_sdk_in_every_environment(path: Path, env_name: str) -> None:
    spec_file = read_spec_file(path, PROJECT)
    env = ENVIRONMENTS[env_name]
    assert spec_file.deploys_to(env), f"{path.name} does not deploy to {env_name}"
    assert_matches_sdk(spec_file.for_environment(env_name), env, path.parent, f"{path.name} in {env_name}",
                       PROJECT.root)


# ---------------------------------------------------------------------------------------------------------------
# What the XGBoost and SKLearn estimators refuse, the spec refuses (same field)
# ---------------------------------------------------------------------------------------------------------------

XGB = {"framework": "xgboost", "framework_version": "1.7-1", "instance_type": "ml.m5.xlarge", "instance_count": 1}
SK = {"framework": "sklearn", "framework_version": "1.2-1", "instance_type": "ml.m5.xlarge", "instance_count": 1}
GROUPS = [{"instance_group_name": "a", "instance_type": "ml.m5.xlarge", "instance_count": 1}]

SDK_REJECTED = [
    # (id, spec, SDK message, field)
    ("XGBoost py37", {**XGB, "py_version": "py37"}, "Unsupported Python version", "py_version"),
    ("XGBoost 1.1-1", {**XGB, "framework_version": "1.1-1"}, "XGBoost 1.1 is not supported", "framework_version"),
    ("XGBoost a version the catalog lacks", {**XGB, "framework_version": "1.7"}, "Unsupported xgboost version",
     "framework_version"),
    ("XGBoost 0.90-1 on a GPU (CPU-only images)", {**XGB, "framework_version": "0.90-1",
                                                   "instance_type": "ml.p3.2xlarge"},
     "Unsupported processor: gpu", "framework_version"),
    ("XGBoost without framework_version", {k: v for k, v in XGB.items() if k != "framework_version"},
     "missing 1 required positional argument: 'framework_version'", "framework_version"),
    ("SKLearn on two instances", {**SK, "instance_count": 2}, "does not support distributed training",
     "instance_count"),
    ("SKLearn on instance groups", {**{k: v for k, v in SK.items() if k not in ("instance_type", "instance_count")},
                                    "instance_groups": GROUPS},
     "cannot be set when instance_groups is set", "instance_groups"),
    ("SKLearn py36", {**SK, "py_version": "py36"}, "only supports Python 3", "py_version"),
    ("SKLearn on a GPU type its own list refuses, with an image of its own",
     {**SK, "instance_type": "ml.p3.8xlarge",
      "image_uri": "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3"},
     "not supported", "instance_type"),
    ("SKLearn on any GPU type (CPU-only images)", {**SK, "instance_type": "ml.g5.2xlarge"},
     "Unsupported processor: gpu", "framework_version"),
    ("SKLearn without framework_version", {k: v for k, v in SK.items() if k != "framework_version"},
     "framework_version or py_version was None", "framework_version"),
]


@pytest.mark.parametrize(("spec", "sdk_message", "field_name"), [r[1:] for r in SDK_REJECTED],
                         ids=[r[0] for r in SDK_REJECTED])
def test_what_the_sdk_rejects_fails_synth(spec: dict[str, Any], sdk_message: str, field_name: str,
                                          code_dir: Path) -> None:
    spec = _spec("rejected", **spec)
    request: dict[str, Any] = {"OutputDataConfig": {"S3OutputPath": sdk.OUTPUT_PATH}, "AlgorithmSpecification": {}}
    framework, kwargs, channels = sdk.estimator_arguments(spec, request, code_dir, DEV.region)
    with pytest.raises((ValueError, TypeError, AttributeError), match=sdk_message):
        sdk.capture_create_training_job(framework, job_name="rejected-1", inputs=channels or None, **kwargs)
    with pytest.raises(SpecError) as info:
        accepted(spec, DEV, code_dir)
    assert field_name in [p.field for p in info.value.problems], str(info.value)


# What the SDK takes without a word but would hurt: refused, naming the key (the SDK drops `distribution` for both
# estimators; XGBoost 1 and latest are the deprecated 0.72 algorithm image, which runs no script).
SILENT = [
    ("XGBoost distribution", {**XGB, "distribution": {"mpi": {"enabled": True}}}, "distribution", "rabit_run"),
    ("SKLearn distribution", {**SK, "distribution": {"mpi": {"enabled": True}}}, "distribution", "one instance"),
    ("XGBoost 1", {**XGB, "framework_version": "1"}, "framework_version", "xgboost-72.html"),
    ("XGBoost latest", {**XGB, "framework_version": "latest"}, "framework_version", "0.72"),
    ("XGBoost model_dir", {**XGB, "model_dir": "/opt/ml/model"}, "model_dir", "TensorFlow estimator argument"),
    ("XGBoost pytorch_version", {**XGB, "pytorch_version": "2.1"}, "pytorch_version", "HuggingFace"),
    ("SKLearn max_instance_count", {**SK, "max_instance_count": 2}, "max_instance_count", "one instance"),
    ("image_uri_region", {**XGB, "image_uri_region": "us-west-2"}, "image_uri_region", "own region"),
]


@pytest.mark.parametrize(("spec", "field_name", "words"), [r[1:] for r in SILENT], ids=[r[0] for r in SILENT])
def test_what_the_sdk_drops_or_would_hurt_fails_synth(spec: dict[str, Any], field_name: str, words: str,
                                                      code_dir: Path) -> None:
    with pytest.raises(SpecError) as info:
        accepted(_spec("silent", **spec), DEV, code_dir)
    messages = [p.message for p in info.value.problems if p.field == field_name]
    assert messages and words in messages[0], str(info.value)


def test_the_sdk_really_drops_distribution_and_takes_xgboost_1(code_dir: Path) -> None:
    """Why the refusals above are needed: the SDK sends the same request with and without distribution, and resolves
    XGBoost 1 to the legacy xgboost repository (not sagemaker-xgboost)."""
    arguments = {"entry_point": "train.py", "source_dir": sdk.SOURCE_DIR, "framework_version": "1.7-1",
                 "instance_type": "ml.m5.xlarge", "instance_count": 2}
    plain = sdk.capture_create_training_job("xgboost", job_name="drop-1", **arguments)
    with_distribution = sdk.capture_create_training_job("xgboost", job_name="drop-1", distribution={
        "mpi": {"enabled": True}}, **arguments)
    assert plain == with_distribution
    legacy = sdk.capture_create_training_job("xgboost", job_name="drop-1", **(arguments | {"framework_version": "1"}))
    assert legacy["AlgorithmSpecification"]["TrainingImage"].endswith("/xgboost:1")


# ---------------------------------------------------------------------------------------------------------------
# Built-in algorithms: each documented rule at its boundary
# ---------------------------------------------------------------------------------------------------------------

def _algorithm(name: str, **values: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": "algo", "image": {"algorithm": name, "version": "1"}, "instance_count": 1,
                            "instance_type": "ml.m5.xlarge", "inputs": {"train": "datasets/tabular/train/"}}
    return spec | values


ALGORITHM_REFUSALS = [
    # (id, spec, field, words)
    ("LDA on two instances", _algorithm("lda", instance_count=2), "instance_count", "single instance"),
    ("Object2Vec ceiling of two", _algorithm("object2vec", max_instance_count=2), "max_instance_count",
     "single instance"),
    ("BlazingText skipgram on two", _algorithm("blazingtext", instance_count=2, hyperparameters={"mode": "skipgram"}),
     "instance_count", "batch_skipgram"),
    ("BlazingText batch_skipgram on two GPUs", _algorithm("blazingtext", instance_count=2,
                                                          instance_type="ml.p3.2xlarge",
                                                          hyperparameters={"mode": "batch_skipgram"}),
     "instance_count", "CPU"),
    ("LDA on a GPU", _algorithm("lda", instance_type="ml.p3.2xlarge"), "instance_type", "CPU instances only"),
    ("seq2seq on a CPU", _algorithm("seq2seq", inputs={c: f"datasets/s2s/{c}/" for c in ("train", "validation",
                                                                                          "vocab")}),
     "instance_type", "GPU instances only"),
    ("IP Insights in Pipe mode", _algorithm("ipinsights", input_mode="Pipe"), "input_mode", "File mode"),
    ("linear learner in FastFile mode (a channel's own)", _algorithm("linear-learner", inputs={
        "train": {"s3_data": "datasets/tabular/train/", "input_mode": "FastFile"}}), "inputs.train.input_mode",
     "File or Pipe"),
    ("linear learner channel 'training'", _algorithm("linear-learner", inputs={"training": "datasets/t/"}),
     "inputs.training", "train, validation, test"),
    ("linear learner without train", _algorithm("linear-learner", inputs={"validation": "datasets/t/"}), "inputs",
     "needs the channel train"),
    ("seq2seq without vocab", _algorithm("seq2seq", instance_type="ml.p3.2xlarge", inputs={
        "train": "datasets/s2s/train/", "validation": "datasets/s2s/validation/"}), "inputs", "vocab"),
    ("linear learner with a model channel", _algorithm("linear-learner", model_uri="s3://my-models/ll/"),
     "model_uri", "does not read"),
    ("factorization machines on CSV", _algorithm("factorization-machines", inputs={
        "train": {"s3_data": "datasets/fm/", "content_type": "text/csv"}}), "inputs.train.content_type",
     "application/x-recordio-protobuf"),
    ("k-means CSV in Pipe mode", _algorithm("kmeans", input_mode="Pipe", inputs={
        "train": {"s3_data": "datasets/km/", "content_type": "text/csv"}}), "inputs.train.content_type",
     "File mode only"),
    ("RCF train not sharded", _algorithm("randomcutforest"), "inputs.train.distribution", "ShardedByS3Key"),
    ("an entry point", _algorithm("linear-learner", entry_point="train.py"), "entry_point", "runs its own code"),
    ("a distribution", _algorithm("linear-learner", distribution={"mpi": {"enabled": True}}), "distribution",
     "distributes its work itself"),
    ("framework beside it", _algorithm("linear-learner", framework="pytorch", framework_version="2.3.0",
                                       py_version="py311"), "framework", "remove framework"),
    ("XGBoost 1 as an algorithm", _algorithm("xgboost"), "image.version", "deprecated"),
    ("XGBoost without a version", _algorithm("xgboost", image={"algorithm": "xgboost"}), "image.version",
     "1.7-1"),
    ("an algorithm the guide does not list", _algorithm("linear_learner", image={"algorithm": "linear_learner"}),
     "image.algorithm", "did you mean 'linear-learner'"),
    ("an algorithm named as the framework", {"name": "algo", "framework": "linear-learner", "instance_count": 1,
                                             "instance_type": "ml.m5.xlarge"}, "framework",
     "image: {algorithm: linear-learner"),
]


@pytest.mark.parametrize(("spec", "field_name", "words"), [r[1:] for r in ALGORITHM_REFUSALS],
                         ids=[r[0] for r in ALGORITHM_REFUSALS])
def test_what_an_algorithm_cannot_take_fails_synth(spec: dict[str, Any], field_name: str, words: str,
                                                   code_dir: Path) -> None:
    with pytest.raises(SpecError) as info:
        accepted(spec, DEV, code_dir)
    messages = [p.message for p in info.value.problems if p.field == field_name]
    assert messages and words in messages[0], str(info.value)


ALGORITHM_ACCEPTED = [
    # the boundary of each refusal above, accepted (with the warnings the guide's recommendations give)
    ("LDA on one instance", _algorithm("lda"), ()),
    ("BlazingText batch_skipgram on two CPUs", _algorithm("blazingtext", instance_count=2,
                                                          hyperparameters={"mode": "batch_skipgram"}), ()),
    ("k-means CSV in File mode", _algorithm("kmeans", inputs={
        "train": {"s3_data": "datasets/km/", "content_type": "text/csv"}}), ()),
    ("k-means recordIO in Pipe mode", _algorithm("kmeans", input_mode="Pipe", inputs={
        "train": {"s3_data": "datasets/km/", "content_type": "application/x-recordio-protobuf"}}), ()),
    ("RCF train sharded", _algorithm("randomcutforest", inputs={
        "train": {"s3_data": "datasets/rcf/", "distribution": "ShardedByS3Key"}}), ()),
    ("RCF on a GPU (warned: unused)", _algorithm("randomcutforest", instance_type="ml.p3.2xlarge", inputs={
        "train": {"s3_data": "datasets/rcf/", "distribution": "ShardedByS3Key"}}), ("instance_type",)),
    ("k-NN on a multi-GPU type (warned: one GPU used)", _algorithm("knn", instance_type="ml.p3.8xlarge"),
     ("instance_type",)),
    ("linear learner validation sharded (warned)", _algorithm("linear-learner", inputs={
        "train": "datasets/t/", "validation": {"s3_data": "datasets/v/", "distribution": "ShardedByS3Key"}}),
     ("inputs.validation.distribution",)),
    ("semantic segmentation with its four channels and a model", _algorithm(
        "semantic-segmentation", instance_type="ml.p3.2xlarge", model_uri="s3://my-models/ss/model.tar.gz",
        inputs={c: f"datasets/ss/{c}/" for c in ("train", "validation", "train_annotation", "validation_annotation")}),
     ()),
]


@pytest.mark.parametrize(("spec", "warns"), [r[1:] for r in ALGORITHM_ACCEPTED], ids=[r[0] for r in ALGORITHM_ACCEPTED])
def test_what_an_algorithm_takes_compiles(spec: dict[str, Any], warns: tuple[str, ...], code_dir: Path) -> None:
    workload = accepted(spec, DEV, code_dir)
    assert {w.split(": ", 2)[1] for w in workload.warnings} == set(warns), workload.warnings
    request = compile_request(workload, DEV)
    assert "HyperParameters" not in request or all(not k.startswith("sagemaker_") for k in request["HyperParameters"])


def test_an_algorithm_missing_from_a_region_is_refused_there(code_dir: Path) -> None:
    """The SDK's catalog publishes LDA in fewer regions than linear learner: in one of those, the SDK refuses, and so
    does the spec (naming image and the region), while linear learner resolves there."""
    from compiler.sdk import sdk_rules

    def regions(name: str) -> set[str]:
        config = sdk_rules.image_uri_config_file(name)
        assert config is not None
        return set(config["versions"]["1"]["registries"])

    region = sorted(regions("linear-learner") - regions("lda"))[0]
    far = dataclasses.replace(DEV, name="far", region=region)
    with pytest.raises(ValueError, match="Unsupported region"):
        sdk.algorithm_image_uri({"algorithm": "lda", "version": "1"}, region, "ml.m5.xlarge")
    with pytest.raises(SpecError) as info:
        accepted(_algorithm("lda"), far, code_dir)
    assert any(p.field == "image" and region in p.message for p in info.value.problems), str(info.value)
    assert not [p for p in _problems(_algorithm("linear-learner"), far, code_dir) if p.field == "image"]


def _problems(spec: dict[str, Any], env: Any, code_dir: Path) -> list[Any]:
    try:
        accepted(spec, env, code_dir)
    except SpecError as error:
        return list(error.problems)
    return []


# ---------------------------------------------------------------------------------------------------------------
# Trust and the network: the algorithm registries are AWS's, and each environment may pull from them
# ---------------------------------------------------------------------------------------------------------------

# The guide's registry of linear learner and the other tabular algorithms, by region ("Common parameters for built-in
# algorithms": Factorization Machines, IP Insights, k-means, k-NN, Linear Learner, Object2Vec, NTM, PCA, RCF).
GUIDE_ALGORITHM_REGISTRIES = {"us-east-1": "382416733822", "us-west-2": "174872318107"}


@pytest.mark.parametrize("env", REGIONS, ids=[e.region for e in REGIONS])
def test_the_algorithm_registries_are_trusted_by_tag(env: Any, code_dir: Path) -> None:
    """An image_uri of an algorithm registry, by tag (as the guide writes it), passes the foreign image rule like a
    Deep Learning Container: the accounts come from the SDK's catalog, and they are the guide's."""
    account = GUIDE_ALGORITHM_REGISTRIES[env.region]
    uri = f"{account}.dkr.ecr.{env.region}.amazonaws.com/linear-learner:1"
    spec = {"name": "ll-by-uri", "image_uri": uri, "instance_count": 1, "instance_type": "ml.m5.xlarge",
            "hyperparameters": {"predictor_type": "binary_classifier"}, "inputs": {"train": "datasets/t/"}}
    accepted(spec, env, code_dir)
    algorithm = {"algorithm": "linear-learner", "version": "1"}
    assert sdk.algorithm_image_uri(algorithm, env.region, "ml.m5.xlarge") == uri


def test_the_environments_pull_the_algorithm_repositories() -> None:
    """The shipped linear learner's repository is in each environment's list of ECR repositories its jobs pull from
    (the ECR endpoint policy), in that environment's region and account."""
    from compiler.pipeline import compile_project

    compiled = compile_project(PROJECT)
    for name, env in ENVIRONMENTS.items():
        account = GUIDE_ALGORITHM_REGISTRIES[env.region]
        arn = f"arn:aws:ecr:{env.region}:{account}:repository/linear-learner"
        assert arn in compiled.plan(name).pulled_repositories, name
