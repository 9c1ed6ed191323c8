"""Which spec keys may differ per environment (`environments: {prod: {...}}`), and why the others may not.

What legitimately differs between environments is where and how big a job runs, with what data, image, keys and
limits: each account has its own registry, buckets, KMS keys and capacity. What must not differ is what the
workload *is*: its name (state machine, job names, IAM scope), its code and framework (dev must test what prod
runs), and the contract of a run (which values a run may pass). The overridden spec is then checked in full, like
the base, per environment (`compiler.spec.loading`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OVERRIDABLE = frozenset({
    # image: each account has its own registry (image_uri), or builds its own copy (image)
    "image_uri", "image",
    # compute and capacity
    "instance_type", "instance_count", "instance_groups", "max_instance_count", "volume_size", "volume_kms_key",
    "keep_alive_period_in_seconds", "training_plan", "instance_placement_config", "capacity_retry",
    # run limits and cost
    "max_run", "max_wait", "use_spot_instances", "max_retry_attempts", "checkpoints", "max_run_cost_usd",
    # data and values
    "inputs", "input_mode", "model_uri", "hyperparameters", "environment", "tags", "distribution",
    # secrets: each account has its own
    "secrets", "secrets_kms_key",
    # keys, traffic, observability
    "output_kms_key", "encrypt_inter_container_traffic", "unencrypted_traffic_reason", "container_log_level",
    "concurrent_runs", "enable_remote_debug", "remote_debug_reason", "enable_infra_check", "metric_definitions",
    "enable_sagemaker_metrics", "debugger_hook_config", "disable_profiler", "profiler_config",
    "tensorboard_output_config",
})

# Merged key by key over the base's mapping; every other key replaces the base's value.
MERGED = frozenset({"hyperparameters", "environment", "secrets", "tags", "capacity_retry"})

# Keys that stand for one another: overriding one side drops the other side from the base (an environment that names
# an image_uri runs that image, whatever `image` the base builds; instance_groups replace type and count).
ALTERNATIVES = (
    (frozenset({"image"}), frozenset({"image_uri"})),
    (frozenset({"instance_groups"}), frozenset({"instance_type", "instance_count"})),
)

_IDENTITY = ("is the workload's identity (its state machine, job names, S3 prefixes and IAM scope are named after it "
             "in every environment); write a second workload for a different one")
_CODE = ("is part of the code and framework the workload runs: dev must test what prod runs; write a second workload "
         "to try another")
_CONTRACT = ("is part of what a run may pass, reviewed once for every environment; change it in the spec itself")
WHY_NOT = {
    "name": _IDENTITY, "base_job_name": _IDENTITY, "description": _IDENTITY,
    "framework": _CODE, "framework_version": _CODE, "py_version": _CODE, "pytorch_version": _CODE,
    "tensorflow_version": _CODE, "transformers_version": _CODE, "entry_point": _CODE, "source_dir": _CODE,
    "dependencies": _CODE, "model_dir": _CODE, "checkpoint_local_path": _CODE, "container_entry_point": _CODE,
    "container_arguments": _CODE, "enable_network_isolation": _CODE, "network_isolation_off_reason": _CODE,
    "model_channel_name": _CODE,
    "training_repository_access_mode": _CODE, "disable_output_compression": _CODE,
    "enable_session_tag_chaining": _CODE,
    "choices": _CONTRACT,
    "environments": "cannot be nested: the block already is per environment",
}


def why_not(key: str) -> str:
    """The reason a key cannot be overridden, with what to do instead."""
    reason = WHY_NOT.get(key, "is not one of the keys that may differ per environment")
    return f"cannot differ per environment: {key} {reason}; overridable keys: {', '.join(sorted(OVERRIDABLE))}"


def apply(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The effective spec: `overrides` over `base` (mappings of MERGED keys merged, alternatives dropped)."""
    merged = dict(base)
    for one, other in ALTERNATIVES:
        for side, dropped in ((one, other), (other, one)):
            if side & set(overrides):
                for key in dropped - set(overrides):
                    merged.pop(key, None)
    for key, value in overrides.items():
        if key in MERGED and isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged
