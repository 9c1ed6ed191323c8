"""Every argument of the pinned SDK's estimators is accounted for by the spec, and every refusal says why.

`compiler.inputs.spec.keys` sorts the SageMaker Python SDK v2 estimators' arguments into those the spec accepts with the
SDK's meaning (SDK_ARGUMENTS) and those the platform refuses with a sentence (REFUSED); a platform key may stand
in for an SDK argument (PLATFORM_REPLACES below). The tables are checked against the installed SDK itself, so an
SDK upgrade that adds an argument fails here until someone decides what the spec does with it. The SDK v1 names
(RENAMED) are the ones the SDK still renames, and the names it swallows in **kwargs (LOOKALIKES) really are
ignored by it without a word: a spec naming either is refused with the right name.
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

import pytest

from compiler.errors import SpecError
from compiler.inputs.spec.keys import LOOKALIKES, PLATFORM_KEYS, REFUSED, RENAMED, SDK_ARGUMENTS, known_keys
from compiler.sdk import sdk_rules
from tests import sdk_reference as sdk

# Platform keys that replace an SDK argument outright (the argument itself then needs no entry of its own).
# None today: checkpoint_s3_uri is refused with a reason that points to `checkpoints: true`, output_path and the
# network are the platform's with no key at all.
PLATFORM_REPLACES: dict[str, str] = {}

ESTIMATOR_CLASSES = ("sagemaker.estimator.EstimatorBase", "sagemaker.estimator.Estimator",
                     "sagemaker.estimator.Framework", "sagemaker.pytorch.PyTorch", "sagemaker.tensorflow.TensorFlow",
                     "sagemaker.huggingface.HuggingFace", "sagemaker.xgboost.XGBoost", "sagemaker.sklearn.SKLearn")
# Values the SDK accepts for each lookalike (what a user would have written).
LOOKALIKE_VALUES: dict[str, Any] = {
    "env": {"NCCL_DEBUG": "INFO"}, "environment_variables": {"NCCL_DEBUG": "INFO"}, "job_name": "gpt",
    "hyperparams": {"epochs": 3}, "hyper_parameters": {"epochs": 3}, "metrics": [{"Name": "loss", "Regex": "l=(.*)"}],
    "instance": "ml.p4d.24xlarge", "spot": True, "max_runtime": 3600, "volume_size_in_gb": 100, "wait": True,
    "logs": "All", "experiment_config": {"ExperimentName": "gpt"}, "enable_sagemaker_metrics_time_series": True,
    # an AWS workshop's PyTorch(requirements_file="requirements.txt") (aws-samples/sagemaker-distributed-training-workshop
    # workshops/building-rag-workflows-with-sagemaker-and-bedrock/03-02_fine-tuning-embedding)
    "requirements_file": "requirements.txt", "requirements": "requirements.txt",
    # SDK v1's TensorFlow legacy arguments, as AWS's older notebooks pass them (amazon-sagemaker-examples
    # archived/managed_spot_training_tensorflow_estimator: training_steps=1000, evaluation_steps=100)
    "script_mode": True, "training_steps": 1000, "evaluation_steps": 100, "checkpoint_path": "s3://bucket/ckpt",
    "region": "us-east-1",
}


def _class(dotted: str) -> type:
    sdk._sagemaker()
    module, _, name = dotted.rpartition(".")
    return getattr(__import__(module, fromlist=[name]), name)


def sdk_parameters() -> dict[str, set[str]]:
    """Each estimator argument of the pinned SDK, with the classes that take it (no self, no **kwargs)."""
    found: dict[str, set[str]] = {}
    for dotted in ESTIMATOR_CLASSES:
        for name, parameter in inspect.signature(_class(dotted).__init__).parameters.items():
            if name != "self" and parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
                found.setdefault(name, set()).add(dotted.rsplit(".", 1)[1])
    return found


def test_every_sdk_argument_is_accepted_refused_or_replaced() -> None:
    tables = {"SDK_ARGUMENTS": SDK_ARGUMENTS, "REFUSED": set(REFUSED), "PLATFORM_REPLACES": set(PLATFORM_REPLACES)}
    problems = []
    for name, classes in sorted(sdk_parameters().items()):
        homes = [table for table, names in tables.items() if name in names]
        if len(homes) != 1:
            problems.append(f"{name} ({', '.join(sorted(classes))}): in {homes or 'no table'}")
    assert not problems, "each SDK argument belongs in exactly one table:\n" + "\n".join(problems)


def test_the_tables_name_only_sdk_arguments() -> None:
    """Nothing accepted or refused as an SDK argument that the SDK does not take (a name it swallows is a lookalike)."""
    parameters = set(sdk_parameters())
    assert SDK_ARGUMENTS - parameters == set()
    assert set(REFUSED) - parameters == set()
    assert set(PLATFORM_REPLACES.values()) <= set(PLATFORM_KEYS)


def test_key_tables_do_not_overlap() -> None:
    tables = [SDK_ARGUMENTS, set(PLATFORM_KEYS), set(REFUSED), set(RENAMED), set(LOOKALIKES)]
    for index, table in enumerate(tables):
        for other in tables[index + 1:]:
            assert not table & other, table & other


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_refused_reasons_are_sentences(key: str) -> None:
    reason = REFUSED[key]
    assert len(reason.split()) >= 6, reason
    assert reason == reason.strip() and not reason.endswith("."), reason  # the style of every spec message


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_each_refused_argument_is_refused_with_its_reason(key: str, make: Any) -> None:
    with pytest.raises(SpecError) as info:
        make(**{key: "x"})
    messages = [p.message for p in info.value.problems if p.field == key]
    assert messages == [REFUSED[key]], str(info.value)


# --------------------------------------------------------------------------------------------------- SDK v1 names


def sdk_renames() -> set[tuple[str, str]]:
    """Every (old, new) pair the SDK's estimators pass to `deprecations.renamed_kwargs`."""
    pairs = set()
    for module in ("estimator.py", "fw_utils.py", "pytorch/estimator.py", "tensorflow/estimator.py",
                   "huggingface/estimator.py", "xgboost/estimator.py", "sklearn/estimator.py"):
        tree = ast.parse((sdk_rules.sdk_root() / module).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "renamed_kwargs":
                old, new = node.args[0], node.args[1]
                if isinstance(old, ast.Constant) and isinstance(new, ast.Constant):
                    pairs.add((old.value, new.value))
    return pairs


def test_renamed_names_are_the_sdks_own_renames() -> None:
    assert set(RENAMED.items()) == sdk_renames()
    assert set(RENAMED.values()) <= SDK_ARGUMENTS


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED.items()))
def test_each_sdk_v1_name_is_refused_naming_the_v2_name(old: str, new: str, rejects: Any) -> None:
    text = rejects(old, "SDK v1 name", f"write {new}", **{old: 2})
    assert re.search(rf"\b{new}\b", text)


def test_v1_names_are_refused_even_beside_the_v2_name(rejects: Any) -> None:
    """The SDK would let the v1 value win over the v2 one without a word (`renamed_kwargs`): refuse, not merge."""
    rejects("train_instance_count", "instance_count", train_instance_count=4, instance_count=2)


# --------------------------------------------------------------------------------------------------- lookalikes


def test_env_suggests_environment(rejects: Any) -> None:
    rejects("env", "did you mean 'environment'", "ignores `env` silently", env={"NCCL_DEBUG": "INFO"})


@pytest.mark.parametrize("key", sorted(LOOKALIKES))
def test_each_lookalike_is_refused_with_its_explanation(key: str, rejects: Any) -> None:
    right, why = LOOKALIKES[key]
    rejects(key, *([f"did you mean '{right}'?"] if right else []), why, **{key: LOOKALIKE_VALUES[key]})
    assert right == "" or right in known_keys()


def test_every_lookalike_is_silently_ignored_by_the_sdk() -> None:
    """What makes a lookalike dangerous: the SDK takes it in **kwargs and sends exactly what it sends without it."""
    arguments = {"entry_point": "train.py", "framework_version": "2.3.0", "py_version": "py311",
                 "instance_type": "ml.g5.2xlarge", "instance_count": 1, "hyperparameters": {"epochs": 1}}
    baseline = sdk.capture_create_training_job("pytorch", job_name="lookalike-1", **arguments)
    assert set(LOOKALIKE_VALUES) == set(LOOKALIKES)
    for key, value in LOOKALIKE_VALUES.items():
        request = sdk.capture_create_training_job("pytorch", job_name="lookalike-1",
                                                  arguments=arguments | {key: value})
        assert request == baseline, f"the SDK does not ignore {key}: the spec should not call it a lookalike"


def test_unknown_key_lists_the_platform_keys(rejects: Any) -> None:
    rejects("zzzzzz", "unknown key", *sorted(PLATFORM_KEYS)[:3], zzzzzz=1)


def test_typo_of_a_refused_key_suggests_it(rejects: Any) -> None:
    """A typo lands on the refused name, whose own message then explains the refusal."""
    rejects("output_pth", "did you mean 'output_path'", output_pth="s3://x/y")

