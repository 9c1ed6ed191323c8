"""Property: any plausible spec the platform accepts compiles to the request the real SDK sends for the same call.

test_sdk_parity.py holds the hand-written cases, each from a source; tests/compiler/test_properties.py checks that any
spec, however broken, compiles to a request the service model takes or fails with a SpecError. Neither asks the SDK
about the combinations nobody wrote down: a strategy with spot, a warm pool and a channel in Pipe mode, an image
resolved for an instance type no case names. Here Hypothesis combines the property test's plausible arguments (every
argument the spec takes, the SDK's real frameworks, versions and instance types) with the tabular estimators, the
built-in algorithms and channels that read granted datasets; whatever `accepted` (the spec's rules and the
environment's) lets through must pass `assert_matches_sdk`: identical HyperParameters and every other field equal,
except the differences test_sdk_parity.py allows, each with its reason. A refused spec is skipped here (refusals have
their own tests); the property fails if too few are accepted to mean anything (Hypothesis's filter health check).

`sagemaker==2.257.7` runs offline as in test_sdk_parity.py (tests/sdk_reference.py: stubbed client, no network).
150 examples take about 8 s; SDK_PARITY_PROPERTY_EXAMPLES=2000 runs a deeper hunt (about 2 minutes).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from compiler.errors import SpecError
from tests.compiler import test_properties as plausible_parts
from tests.compiler.compilation.test_sdk_parity import DATASETS, DEV, ENCRYPTING, accepted, assert_matches_sdk

EXAMPLES = int(os.environ.get("SDK_PARITY_PROPERTY_EXAMPLES", "150"))

# The property test's plausible images (frameworks, versions, project images, the generic Estimator), and what it
# leaves out: script-mode XGBoost and scikit-learn, built-in algorithms by name, the pinned SDK's newest versions.
IMAGES = [*plausible_parts.IMAGES[:plausible_parts.PLAUSIBLE_IMAGES],
          {"framework": "pytorch", "framework_version": "2.8.0", "py_version": "py312"},
          {"framework": "pytorch", "framework_version": "2.5.1", "py_version": "py311"},
          {"framework": "tensorflow", "framework_version": "2.16", "py_version": "py310"},
          {"framework": "huggingface", "transformers_version": "4.56.2", "pytorch_version": "2.8.0",
           "py_version": "py312"},
          {"framework": "xgboost", "framework_version": "1.7-1"},
          {"framework": "xgboost", "framework_version": "3.0-5", "py_version": "py3"},
          {"framework": "sklearn", "framework_version": "1.2-1"},
          {"framework": "sklearn", "framework_version": "1.4-2", "py_version": "py3"},
          {"image": {"algorithm": "xgboost", "version": "1.7-1"}},
          {"image": {"algorithm": "linear-learner"}},
          {"image": {"algorithm": "kmeans", "version": "1"}}]


@st.composite
def granted_channels(draw: st.DrawFn, workload: str) -> Any:
    """A channel that reads what the environment lets the workload read: a dataset, its own prefix, an external
    bucket, or a directory of the file system; as a plain prefix or with TrainingInput's options."""
    where = draw(st.sampled_from([f"datasets/{name}/" for name in sorted(DATASETS)] + [
        f"{workload}/data/", "s3://my-datasets/train/", "s3://my-models/base/"]))
    kind = draw(st.sampled_from(["prefix", "options", "fsx"]))
    if kind == "prefix":
        return where
    if kind == "fsx":
        return draw(st.fixed_dictionaries({"directory_path": st.sampled_from(["/datasets/tokens", f"/{workload}"])},
                                          optional={"file_system_access_mode": st.just("ro")}))
    return draw(st.fixed_dictionaries({"s3_data": st.just(where)}, optional={
        "input_mode": st.sampled_from(["File", "Pipe", "FastFile"]),
        "distribution": st.sampled_from(["FullyReplicated", "ShardedByS3Key"]),
        "content_type": st.sampled_from(["text/csv", "application/x-recordio-protobuf", "libsvm"]),
        "compression": st.sampled_from(["None", "Gzip"]),
        "record_wrapping": st.sampled_from(["None", "RecordIO"]),
        "shuffle_config": st.fixed_dictionaries({"seed": st.integers(0, 2**31)}),
    }))


@st.composite
def plausible_specs(draw: st.DrawFn) -> dict[str, Any]:
    """A spec a careful user might write: an image, up to ten plausible arguments, channels that are granted, and the
    reasons the platform asks for beside the switches it needs one for."""
    name = draw(st.sampled_from(["gpt", "gpt-small", "resnet-50"]))
    spec: dict[str, Any] = {"name": name, "entry_point": "train.py",
                            "instance_type": draw(st.sampled_from(plausible_parts.INSTANCE_TYPES))}
    if draw(st.booleans()):
        spec["source_dir"] = "src"
    spec.update(copy.deepcopy(draw(st.sampled_from(IMAGES))))
    if "algorithm" in str(spec.get("image")) or ("framework" not in spec and draw(st.booleans())):
        spec.pop("entry_point")
        spec.pop("source_dir", None)
    keys = draw(st.lists(st.sampled_from(sorted(plausible_parts.PLAUSIBLE)), unique=True, max_size=10))
    for key in keys:
        spec[key] = draw(plausible_parts.PLAUSIBLE[key])
    if "inputs" in spec:
        spec["inputs"] = draw(st.dictionaries(st.sampled_from(["train", "validation", "test", "tokens"]),
                                              granted_channels(name), min_size=1, max_size=3))
    plausible_parts._shape(spec)
    if spec.get("enable_network_isolation") is False:
        spec["network_isolation_off_reason"] = "reads HF_TOKEN from Secrets Manager at start"
    if spec.get("enable_remote_debug"):
        spec["remote_debug_reason"] = "investigating a hang in the collective"
    return spec


# The property test's project (train.py, a source_dir `src`, a dependency folder `lib/helpers`): the same specs' files.
code_dir = plausible_parts.code_dir


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=plausible_specs(), env=st.sampled_from([DEV, ENCRYPTING]))
def test_accepted_spec_compiles_to_what_the_sdk_sends(spec: dict[str, Any], env: Any, code_dir: Path) -> None:
    note(f"spec: {spec!r}\nenvironment: {env.name}")
    try:
        accepted(copy.deepcopy(spec), env, code_dir)
    except SpecError:
        assume(False)
    assert_matches_sdk(spec, env, code_dir, f"random spec in {env.name}")
