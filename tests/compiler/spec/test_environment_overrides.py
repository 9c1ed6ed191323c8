"""Per-environment overrides (issue 25): each environment's spec is checked in full, like the base.

The test environments (the repository's cdk.json): dev is account 111111111111 in us-east-1 with SCRATCH_2 FSx,
prod 222222222222 in us-west-2, production.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.compilation.request import compile_request
from compiler.errors import SpecError
from compiler.inputs.project import Project
from compiler.spec import Loaded, load_workloads
from compiler.state_machine import spec_for
from tests.project import ROOT

BASE: dict[str, Any] = {
    "name": "ovr", "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311",
    "entry_point": "train.py", "source_dir": "..", "instance_type": "ml.p4d.24xlarge", "instance_count": 2,
    "distribution": {"torch_distributed": {"enabled": True}}, "checkpoints": True,
    "hyperparameters": {"epochs": 3, "model": "gpt-125m"},
    "capacity_retry": {"max_attempts": 2, "wait_seconds": 60},
}
PROD_IMAGE = "222222222222.dkr.ecr.us-west-2.amazonaws.com/trainer:1.0"
FOREIGN = "999999999999.dkr.ecr.us-west-2.amazonaws.com/team/trainer"
DIGEST = "sha256:" + "0123456789abcdef" * 4


def project(root: Path, specs: list[dict[str, Any]], cdk_change: Any = None) -> Project:
    """A throwaway project: the repository's cdk.json and zone cache, a train.py, and the specs."""
    (root / "workloads").mkdir(parents=True, exist_ok=True)
    for name in ("cdk.json", "cdk.context.json"):
        shutil.copy(ROOT / name, root / name)
    if cdk_change is not None:
        data = json.loads((root / "cdk.json").read_text())
        cdk_change(data["context"]["training-platform:environments"])
        (root / "cdk.json").write_text(json.dumps(data))
    (root / "train.py").write_text("print('training')\n")
    for raw in specs:
        (root / "workloads" / f"{raw['name']}.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    return Project(root)


def load(root: Path, environments: dict[str, Any], **changes: Any) -> Loaded:
    raw = {k: v for k, v in {**BASE, **changes}.items() if v is not ...}  # ... removes a key
    proj = project(root, [{**raw, "environments": environments}])
    return load_workloads(proj, proj.environments())


def refused(root: Path, environments: dict[str, Any], **changes: Any) -> list[str]:
    with pytest.raises(SpecError) as info:
        load(root, environments, **changes)
    return [str(p) for p in info.value.problems]


def test_an_image_uri_overridden_in_prod_is_the_image_prod_runs(tmp_path: Path) -> None:
    loaded = load(tmp_path, {"dev": {}, "prod": {"image_uri": PROD_IMAGE}})
    proj = Project(tmp_path)
    envs = proj.environments()
    prod = compile_request(loaded.by_environment["prod"]["ovr"], envs["prod"])
    dev = compile_request(loaded.by_environment["dev"]["ovr"], envs["dev"])
    assert prod["AlgorithmSpecification"]["TrainingImage"] == PROD_IMAGE
    # dev keeps the framework's own image, resolved for its region
    assert dev["AlgorithmSpecification"]["TrainingImage"].startswith("763104351884.dkr.ecr.us-east-1.amazonaws.com/"
                                                                     "pytorch-training:2.3.0-gpu-py311")


def test_a_foreign_image_by_tag_in_prod_is_refused_there_only(tmp_path: Path) -> None:
    problems = refused(tmp_path, {"dev": {}, "prod": {"image_uri": FOREIGN + ":1.0"}})
    [problem] = problems
    assert "image_uri" in problem and "[environment prod]" in problem
    assert f"{FOREIGN}@sha256:<64 hex digits>" in problem


def test_a_foreign_image_pinned_by_digest_in_prod_passes(tmp_path: Path) -> None:
    loaded = load(tmp_path, {"prod": {"image_uri": f"{FOREIGN}@{DIGEST}"}})
    assert loaded.by_environment["prod"]["ovr"].image.uri == f"{FOREIGN}@{DIGEST}"  # type: ignore[union-attr]


def test_an_image_of_another_region_is_refused_in_that_environment(tmp_path: Path) -> None:
    problems = refused(tmp_path, {"prod": {"image_uri": "222222222222.dkr.ecr.us-east-1.amazonaws.com/trainer:1.0"}})
    assert any("image_uri" in p and "us-west-2" in p and "[environment prod]" in p for p in problems), problems


def test_an_overridden_instance_type_is_checked_like_the_base(tmp_path: Path) -> None:
    problems = refused(tmp_path, {"dev": {"instance_type": "ml.p9.48xlarge"}})
    assert any(p.startswith("workloads/ovr.yaml: instance_type") and "[environment dev]" in p for p in problems), \
        problems


def test_an_overridden_count_beyond_max_instance_count_is_refused(tmp_path: Path) -> None:
    problems = refused(tmp_path, {"dev": {"instance_count": 3, "max_instance_count": 2}})
    assert any("max_instance_count" in p and "[environment dev]" in p for p in problems), problems


def test_fallback_types_merge_into_the_bases_capacity_retry(tmp_path: Path) -> None:
    loaded = load(tmp_path, {"prod": {"capacity_retry": {"fallback_instance_types": ["ml.p4de.24xlarge"]}}})
    retry = loaded.by_environment["prod"]["ovr"].capacity_retry
    assert retry.fallback_instance_types == ("ml.p4de.24xlarge",)
    assert (retry.max_attempts, retry.wait_seconds) == (2, 60)  # the base's, kept


def test_an_overridden_fallback_type_is_checked_like_the_primary(tmp_path: Path) -> None:
    problems = refused(tmp_path, {"prod": {"capacity_retry": {"fallback_instance_types": ["ml.m5.xlarge"]}}})
    assert any("capacity_retry.fallback_instance_types" in p and "[environment prod]" in p for p in problems), problems


def test_hyperparameters_merge_and_max_run_replaces(tmp_path: Path) -> None:
    loaded = load(tmp_path, {"dev": {"hyperparameters": {"epochs": 1}, "max_run": 3600}, "prod": {}})
    dev, prod = loaded.by_environment["dev"]["ovr"], loaded.by_environment["prod"]["ovr"]
    assert dict(dev.hyperparameters) == {"epochs": 1, "model": "gpt-125m"}
    assert (dev.max_run, prod.max_run) == (3600, 86400)


def test_max_run_is_held_to_sagemakers_limit_per_environment(tmp_path: Path) -> None:
    assert load(tmp_path, {"dev": {"max_run": 2419200}}).by_environment["dev"]["ovr"].max_run == 2419200  # 28 days
    problems = refused(tmp_path / "2", {"dev": {"max_run": 2419201}})
    assert any("max_run" in p and "[environment dev]" in p for p in problems), problems


def test_inputs_replace_per_environment(tmp_path: Path) -> None:
    loaded = load(tmp_path, {"dev": {"inputs": {"train": "ovr/small/"}},
                             "prod": {"inputs": {"train": {"file_system_type": "FSxLustre",
                                                           "directory_path": "/ovr"}}}},
                  inputs={"train": "ovr/full/"})
    assert [c.kind for c in loaded.by_environment["dev"]["ovr"].inputs] == ["s3"]
    assert [c.kind for c in loaded.by_environment["prod"]["ovr"].inputs] == ["fsx"]


def test_a_project_image_replaced_by_an_image_uri_in_prod(tmp_path: Path) -> None:
    loaded = load(tmp_path, {"dev": {}, "prod": {"image_uri": PROD_IMAGE}}, framework_version=...,
                  py_version=..., image={"repository": "gpt-trainer"})
    assert loaded.by_environment["prod"]["ovr"].image.uri == PROD_IMAGE  # type: ignore[union-attr]
    assert loaded.by_environment["dev"]["ovr"].image.repository == "gpt-trainer"  # type: ignore[union-attr]


@pytest.mark.parametrize(("key", "value", "why"), [
    ("name", "other", "identity"),
    ("framework", "tensorflow", "dev must test what prod runs"),
    ("entry_point", "other.py", "dev must test what prod runs"),
    ("framework_version", "2.4.0", "dev must test what prod runs"),
    ("choices", {"model": ["a"]}, "reviewed once for every environment"),
    ("environments", {}, "cannot be nested"),
])
def test_keys_that_must_not_differ_are_refused_with_the_reason(tmp_path: Path, key: str, value: Any, why: str) -> None:
    problems = refused(tmp_path, {"dev": {key: value}})
    [problem] = [p for p in problems if f"environments.dev.{key}" in p]
    assert "cannot differ per environment" in problem and why in problem and "image_uri" in problem


def test_the_cost_ceiling_differs_per_environment_and_is_checked_there(tmp_path: Path) -> None:
    # 2 x ml.p4d.24xlarge at 37.688 USD per instance-hour (us-east-1, dev's region) for 3600 s: 75.376 USD
    loaded = load(tmp_path, {"dev": {"max_run_cost_usd": 75.38}, "prod": {}}, max_run=3600)
    assert loaded.by_environment["dev"]["ovr"].max_run_cost_usd == 75.38
    assert loaded.by_environment["prod"]["ovr"].max_run_cost_usd is None
    problems = refused(tmp_path / "2", {"dev": {"max_run_cost_usd": 75.37}}, max_run=3600)
    assert any(p.startswith("workloads/ovr.yaml: max_run_cost_usd") and "[environment dev]" in p
               and "raise max_run_cost_usd to at least 75.38" in p for p in problems), problems
    # prod is us-west-2, whose prices the repository does not hold: its ceiling cannot be enforced
    problems = refused(tmp_path / "3", {"dev": {}, "prod": {"max_run_cost_usd": 1000}}, max_run=3600)
    assert [p for p in problems if "max_run_cost_usd" in p] == [
        "workloads/ovr.yaml: max_run_cost_usd: no verified us-west-2 prices for ml.p4d.24xlarge (the repository has no "
        "compiler/facts/data/prices/us-west-2.json): run `trainctl prices --region us-west-2` with credentials and commit "
        "the file, so the ceiling cannot be enforced there; or remove max_run_cost_usd [environment prod]"]


# --- merged keys, stated as the compiled request (issue 33) -----------------------------------------------------
# docs/workload-spec.md, "Per-environment shape": "An environment's keys replace the base's; `hyperparameters`,
# `environment`, `tags` and `capacity_retry` are merged key by key (so `prod: {capacity_retry:
# {fallback_instance_types: [...]}}` keeps the base's `max_attempts`); one of them left empty (`dev:
# {hyperparameters:}`) is refused rather than dropping all of the base's." Values as the SDK sends them: every
# hyperparameter json.dumps'd (FACTS.md section 1: strings quoted, ints bare); ml.p4d.24xlarge is on the training
# toolkit's own EFA lists (sagemaker-training 5.1.4, SM_EFA_NCCL_INSTANCES and SM_EFA_RDMA_INSTANCES), so its
# Environment holds the spec's variables only; the platform's two tags follow the spec's (docs/workload-spec.md,
# "What differs from the SDK's request on purpose").

MERGING: dict[str, Any] = {
    "hyperparameters": {"epochs": 3, "model": "gpt-125m", "optimizer": {"name": "adamw", "lr": 0.001}},
    "environment": {"NCCL_DEBUG": "WARN", "HF_HOME": "/tmp/hf"},
    "tags": {"team": "ml", "cost-center": "42"},
    "capacity_retry": {"max_attempts": 2, "wait_seconds": 60, "fallback_instance_types": ["ml.p4de.24xlarge"]},
}
DEV_OVERRIDES: dict[str, Any] = {
    "hyperparameters": {"epochs": 1, "max_steps": 100, "optimizer": {"lr": 0.01}},
    "environment": {"NCCL_DEBUG": "INFO", "EXTRA": "1"},
    "tags": {"cost-center": "dev-7", "stage": "dev"},
    "capacity_retry": {"wait_seconds": 30},
}


def user_hyperparameters(request: dict[str, Any]) -> dict[str, str]:
    """The spec's hyperparameters as sent (the SDK's own sagemaker_* keys left out)."""
    return {k: v for k, v in request["HyperParameters"].items() if not k.startswith("sagemaker_")}


def by_key(tags: list[dict[str, str]]) -> list[dict[str, str]]:
    return sorted(tags, key=lambda tag: tag["Key"])  # CreateTrainingJob's Tags are a set: order carries nothing


def test_merged_keys_are_merged_key_by_key_into_the_compiled_request(tmp_path: Path) -> None:
    loaded = load(tmp_path, {"dev": DEV_OVERRIDES, "prod": {}}, **MERGING)
    envs = Project(tmp_path).environments()
    dev = compile_request(loaded.by_environment["dev"]["ovr"], envs["dev"])
    prod = compile_request(loaded.by_environment["prod"]["ovr"], envs["prod"])

    # one level deep: a base name the environment does not give keeps its value; a mapping value is replaced whole
    assert user_hyperparameters(dev) == {"epochs": "1", "model": '"gpt-125m"', "optimizer": '{"lr": 0.01}',
                                         "max_steps": "100"}
    assert dev["Environment"] == {"NCCL_DEBUG": "INFO", "HF_HOME": "/tmp/hf", "EXTRA": "1"}
    assert by_key(dev["Tags"]) == [
        {"Key": "cost-center", "Value": "dev-7"}, {"Key": "stage", "Value": "dev"}, {"Key": "team", "Value": "ml"},
        {"Key": "training-platform:environment", "Value": "dev"}, {"Key": "training-platform:workload", "Value": "ovr"}]

    # prod: {} deploys the base as written
    assert user_hyperparameters(prod) == {"epochs": "3", "model": '"gpt-125m"',
                                          "optimizer": '{"name": "adamw", "lr": 0.001}'}
    assert prod["Environment"] == {"NCCL_DEBUG": "WARN", "HF_HOME": "/tmp/hf"}
    assert by_key(prod["Tags"]) == [
        {"Key": "cost-center", "Value": "42"}, {"Key": "team", "Value": "ml"},
        {"Key": "training-platform:environment", "Value": "prod"}, {"Key": "training-platform:workload", "Value": "ovr"}]

    # capacity_retry: dev's wait_seconds over the base's max_attempts and fallback types
    dev_machine = spec_for(loaded.by_environment["dev"]["ovr"], envs["dev"])
    prod_machine = spec_for(loaded.by_environment["prod"]["ovr"], envs["prod"])
    assert (dev_machine.capacity_relaunches, dev_machine.capacity_wait_seconds) == (2, 30)
    assert (prod_machine.capacity_relaunches, prod_machine.capacity_wait_seconds) == (2, 60)
    assert [v.instance_type for v in dev_machine.variants] == ["ml.p4d.24xlarge", "ml.p4de.24xlarge"]


def test_a_merged_key_left_empty_is_refused_and_an_empty_mapping_keeps_the_base(tmp_path: Path) -> None:
    problems = refused(tmp_path, {"dev": {"hyperparameters": None}}, **MERGING)
    assert [p for p in problems if "environments.dev.hyperparameters" in p] == [
        "workloads/ovr.yaml: environments.dev.hyperparameters: is empty, which would drop every one of the base's "
        "hyperparameters in dev; name the entries that differ, or leave hyperparameters out to keep the base's"]
    loaded = load(tmp_path / "2", {"dev": {"environment": {}, "tags": {}}}, **MERGING)
    dev = compile_request(loaded.by_environment["dev"]["ovr"], Project(tmp_path / "2").environments()["dev"])
    assert dev["Environment"] == {"NCCL_DEBUG": "WARN", "HF_HOME": "/tmp/hf"}
    assert {"Key": "team", "Value": "ml"} in dev["Tags"] and {"Key": "cost-center", "Value": "42"} in dev["Tags"]
