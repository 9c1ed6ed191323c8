"""Rules about what a job runs on: EFA for multi-node jobs, volume keys, fallback types, the override ceiling."""

from __future__ import annotations

import dataclasses

from compiler.compilation import strategies
from compiler.facts import catalog
from compiler.inputs.model import DISTRIBUTED_FRAMEWORKS, Compute, InstanceGroup, Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import workload_rule
from compiler.sdk import sdk_instances


def training_groups(w: Workload) -> tuple[InstanceGroup, ...]:
    """The groups that run the training processes: those `distribution.instance_groups` names, else all."""
    named = w.distribution.get("instance_groups")
    groups = w.compute.groups
    if w.compute.instance_groups and isinstance(named, list) and named:
        return tuple(g for g in groups if g.name in named)
    return groups


@workload_rule
def multi_node_jobs_use_efa(w: Workload, f: Findings) -> None:
    """Accelerated training nodes talk over EFA; a heterogeneous cluster's data-loading groups do not need it, and
    CPU-only nodes (a parameter server, the platform's smoke test) exchange too little for it to matter."""
    training = training_groups(w)
    nodes = sum(g.instance_count for g in training)
    if nodes <= 1:
        return
    warned: set[str] = set()
    for group in training:
        accelerated_group = group.instance.has_gpu or group.instance.is_trainium
        if accelerated_group and not group.instance.has_efa and group.instance_type not in warned:
            warned.add(group.instance_type)  # two groups of one type: one warning
            f.warn("instance_type" if not w.compute.instance_groups else "instance_groups", f"{nodes} training nodes "
                   f"with {group.instance_type}, which has no EFA: inter-node traffic goes over TCP; pick an EFA type "
                   "(e.g. ml.p4d.24xlarge, ml.p5.48xlarge) for multi-node jobs")
    accelerated = w.instance.has_gpu or w.instance.is_trainium
    if accelerated and not w.distribution and w.framework in DISTRIBUTED_FRAMEWORKS:
        f.warn("distribution", f"{w.instance_count} accelerated nodes but no distribution strategy: each host runs the "
               "entry point alone; set torch_distributed (or another strategy)")


@workload_rule
def the_toolkit_keeps_its_efa_provider(w: Workload, f: Findings) -> None:
    """A spec's own FI_PROVIDER that the training toolkit replaces in the container would be silently ignored: say
    so. sagemaker-training 5.1.4 sets FI_PROVIDER=efa itself under torchrun and mpirun on its EFA types
    (torch_distributed.py `_setup`, mpi.py `-x FI_PROVIDER=efa`) and under SMDDP's mpirun on every type
    (smdataparallel.py `-x FI_PROVIDER=efa`); a spec that says efa itself loses nothing."""
    if (w.environment or {}).get("FI_PROVIDER", "efa") == "efa" or w.framework not in DISTRIBUTED_FRAMEWORKS:
        return
    plan = strategies.launch_plan(w).name
    everywhere = plan == "smddp"
    on_efa_types = plan in ("torch_distributed", "mpi") or plan.startswith("smp-v")
    types = [g.instance_type for g in w.compute.groups if everywhere
             or (on_efa_types and g.instance_type in catalog.TOOLKIT_SETS_EFA_PROVIDER)]
    if types:
        f.warn("environment.FI_PROVIDER", f"the training toolkit sets FI_PROVIDER=efa itself on {', '.join(types)} "
               f"under {plan}, replacing {(w.environment or {})['FI_PROVIDER']!r} in the container; remove it, or start the "
               "processes yourself (a custom image or the generic estimator) to choose the provider")


@workload_rule
def volume_key_where_volumes_take_one(w: Workload, f: Findings) -> None:
    if w.compute.volume_kms_key is None:
        return
    for group in w.compute.groups:
        if not sdk_instances.supports_volume(group.instance_type):
            f.problem("volume_kms_key", f"{group.instance_type} keeps its volume on local NVMe storage, which SageMaker "
                      "encrypts itself and for which it refuses VolumeKmsKeyId; remove volume_kms_key")


@workload_rule
def override_ceiling_covers_the_spec(w: Workload, f: Findings) -> None:
    if w.max_instance_count is None:
        return
    if w.compute.instance_groups:
        f.problem("max_instance_count", "runs cannot change the size of a heterogeneous cluster; remove "
                  "max_instance_count (or describe the groups per environment)")
    elif w.max_instance_count < w.instance_count:
        f.problem("max_instance_count", f"must be at least instance_count ({w.instance_count})")


def with_instance_type(w: Workload, instance_type: str) -> Workload:
    """The workload as it runs on a fallback type: same count, everything else unchanged."""
    compute: Compute = dataclasses.replace(w.compute, instance_type=instance_type)
    return dataclasses.replace(w, compute=compute)


@workload_rule
def fallbacks_compile_like_the_primary(w: Workload, f: Findings) -> None:
    """Each fallback type passes every distribution rule the primary passes, on the same kind of accelerator."""
    fallbacks = w.capacity_retry.fallback_instance_types
    if not fallbacks:
        return
    if w.compute.instance_groups:
        f.problem("capacity_retry.fallback_instance_types", "fallback types replace the single instance_type; a "
                  "heterogeneous cluster cannot fall back (remove them or use instance_type)")
        return
    primary = w.instance
    for index, kind in enumerate(fallbacks):
        where = f"capacity_retry.fallback_instance_types[{index}]"
        other = catalog.get(kind)
        if kind == w.instance_type or kind in fallbacks[:index]:
            f.problem(where, f"{kind} is already tried before it; list each type once, after the primary")
            continue
        if other.accelerator is not primary.accelerator:
            f.problem(where, f"{kind} has {other.accelerator.value} accelerators while {w.instance_type} has "
                      f"{primary.accelerator.value}: the image and the code are built for one kind; pick a type of the "
                      "same kind")
            continue

        def report(field: str, message: str, where: str = where, kind: str = kind) -> None:
            f.problem(where, f"on {kind}: {field}: {message}")

        strategies.check(with_instance_type(w, kind), report, lambda *_: None)
        if w.instance_count > 1 and primary.has_efa and not other.has_efa:
            f.warn(where, f"{kind} has no EFA: this {w.instance_count}-node job would run over TCP there")
