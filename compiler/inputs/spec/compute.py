"""What a job runs on: one instance type and count, or instance groups (a heterogeneous cluster), and its volume.

Instance types are every training type of botocore's SageMaker model; facts about them come from the catalog.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.inputs.model import MAX_INSTANCE_COUNT, VOLUME_SIZE_GB, Compute, InstanceGroup
from compiler.inputs.reader import Reader, describe, suggest
from compiler.sdk import service_model
from compiler.sdk.limits import limits

MAX_VOLUME_GB = 16384  # EBS's largest volume; botocore states only the minimum
_GROUP_KEYS = {"instance_group_name", "instance_type", "instance_count"}


def check_instance_type(r: Reader, key: str, value: Any) -> str | None:
    """A training instance type of botocore's model, with the close name suggested for a typo."""
    if value in ("local", "local_gpu"):
        r.problem(key, "local mode runs on this machine, not through the platform: use `trainctl run-local`")
        return None
    if not isinstance(value, str):
        r.problem(key, f"must be an instance type such as ml.p4d.24xlarge, not {describe(value)}")
        return None
    known = limits().instance_types
    if value in known:
        return value
    close = suggest(value, known, cutoff=0.7)
    hint = f"did you mean '{close}'? " if close else ""
    r.problem(key, f"'{value}' is not a SageMaker training instance type; {hint}see TrainingInstanceType in the "
              "SageMaker API reference")
    return None


def _groups(r: Reader) -> tuple[InstanceGroup, ...]:
    raw = r.raw.get("instance_groups")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        r.problem("instance_groups", "must be a list of {instance_group_name, instance_type, instance_count}")
        return ()
    if len(raw) > limits().instance_groups_max:
        r.problem("instance_groups", f"{len(raw)} groups; SageMaker allows {limits().instance_groups_max}")
    groups = []
    for index, item in enumerate(raw):
        where = f"instance_groups[{index}]"
        if not isinstance(item, Mapping):
            r.problem(where, "must be a mapping {instance_group_name, instance_type, instance_count}")
            continue
        g = Reader(item, r.findings, prefix=f"{r.prefix}{where}.")
        g.unknown_keys(_GROUP_KEYS)
        name = g.string("instance_group_name", required=True, max_length=limits().instance_group_name_max)
        if name is not None and not g.shaped("instance_group_name", name, "InstanceGroupName"):
            name = None
        kind = check_instance_type(g, "instance_type", item.get("instance_type")) if "instance_type" in item else None
        if "instance_type" not in item:
            g.problem("instance_type", "is required")
        count = g.integer("instance_count", low=1, high=MAX_INSTANCE_COUNT, required=True, unit="instances")
        if name and kind and count:
            groups.append(InstanceGroup(name, kind, count))
    names = [g.name for g in groups]
    for name in sorted({n for n in names if names.count(n) > 1}):
        r.problem("instance_groups", f"group name {name!r} is used twice")
    return tuple(groups)


def read_compute(r: Reader) -> Compute | None:
    """The compute part, or None when the spec has no usable instance type."""
    groups = _groups(r)
    instance_type = None
    if r.has("instance_type"):
        instance_type = check_instance_type(r, "instance_type", r.raw["instance_type"])
    count = r.integer("instance_count", low=1, high=MAX_INSTANCE_COUNT, unit="instances")
    if groups and (r.has("instance_type") or r.has("instance_count")):
        r.problem("instance_groups", "instance_count and instance_type cannot be set with instance_groups (as in the "
                  "SDK); describe every node in the groups")
    elif not groups and not r.has("instance_groups"):
        if not r.has("instance_type"):
            r.problem("instance_type", "is required (or instance_groups for a heterogeneous cluster)")
        count = 1 if count is None and not r.has("instance_count") else count
    placement = r.raw.get("instance_placement_config")
    if placement is not None:
        problems = service_model.validate_shape(placement, "InstancePlacementConfig") \
            if isinstance(placement, Mapping) else ["must be a mapping"]
        for line in problems:
            r.problem("instance_placement_config", f"{line} (SageMaker's InstancePlacementConfig, e.g. "
                      "{EnableMultipleJobs: true, PlacementSpecifications: [{UltraServerId: ..., InstanceCount: 2}]})")
    compute = Compute(
        instance_type=None if groups else instance_type, instance_count=None if groups else count,
        instance_groups=groups,
        volume_size=r.integer("volume_size", low=1, high=MAX_VOLUME_GB, default=VOLUME_SIZE_GB, unit="GB"),
        volume_kms_key=r.string("volume_kms_key", max_length=2048),
        keep_alive_period_in_seconds=r.integer("keep_alive_period_in_seconds", low=0, high=limits().keep_alive_max,
                                               unit="seconds"),
        training_plan=r.string("training_plan", max_length=2048),
        instance_placement_config=placement if isinstance(placement, Mapping) else None,
    )
    if not groups and (compute.instance_type is None or compute.instance_count is None):
        return None
    return compute
