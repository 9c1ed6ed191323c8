"""A workload's facts for people reviewing a change: what runs, on what, at what list price.

The CDK layer writes this summary into each state machine's template metadata, so `trainctl review` can compare
workloads between two synthesized revisions without importing either revision's compiler, and the review summary
reads the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.compilation import cost_ceiling, strategies
from compiler.compilation.images import image_uri
from compiler.compilation.stack_layout import SHARD_STACK_PREFIX
from compiler.facts import catalog
from compiler.inputs.environments import Environment
from compiler.inputs.model import ProjectImage, Workload

METADATA_KEY = "training-platform:workload"


def is_workload_machine(stack: str, resource: Mapping[str, Any]) -> bool:
    """Whether a template resource is a workload's state machine: it carries the workload summary, or (a template
    from before the summaries) sits in a workload shard stack. The platform's own (the job reaper) is neither."""
    if resource.get("Type") != "AWS::StepFunctions::StateMachine":
        return False
    return METADATA_KEY in (resource.get("Metadata") or {}) or stack.startswith(SHARD_STACK_PREFIX)


def workload_summary(workload: Workload, env: Environment, *, training_image: str | None = None) -> dict[str, Any]:
    """The summary of a workload in an environment; `training_image`: its image as the pipeline resolved it (without
    one, it is resolved here)."""
    compute = workload.compute
    image = workload.image
    return {
        "name": workload.name,
        "environment": env.name,
        "instances": [{"type": g.instance_type, "count": g.instance_count, **({"group": g.name} if g.name else {})}
                      for g in compute.groups],
        "gpus": sum(g.instance.accelerators * g.instance_count for g in compute.groups),
        "efa": all(g.instance.has_efa for g in compute.groups),
        "fallback_instance_types": list(workload.capacity_retry.fallback_instance_types),
        "max_instance_count": workload.instance_count_ceiling,
        "image": f"{image.repository} (built by this project)" if isinstance(image, ProjectImage)
        else training_image or image_uri(workload, env.region),
        "strategy": strategies.launch_plan(workload).name,
        "hyperparameters": dict(workload.hyperparameters),
        "inputs": [f"{c.name}: FSx {c.directory_path}" if c.kind == "fsx" else f"{c.name}: S3 {c.s3_data}"
                   for c in workload.inputs],
        "cost_per_hour_usd": compute.hourly_cost(env.region),  # on-demand: with spot, the most an hour costs
        **({"spot": True} if workload.use_spot_instances else {}),  # only where true: other templates stay as they were
        "prices": catalog.price_source(env.region),
        "fallback_cost_per_hour_usd": fallback_costs(workload, env.region),
        **ceiling_summary(workload, env.region),
        "max_run": workload.max_run,
    }


def ceiling_summary(workload: Workload, region: str) -> dict[str, Any]:
    """The per-run cost ceiling and the spec's own worst case at the region's prices (None: no ceiling, or a type
    without a price there), for `trainctl review`."""
    priced = workload.max_run_cost_usd is not None and not cost_ceiling.unpriced(workload, region)
    return {"max_run_cost_usd": workload.max_run_cost_usd,
            "worst_case_run_usd": round(float(cost_ceiling.worst_case(workload, region)), 2) if priced else None}


def fallback_costs(workload: Workload, region: str) -> dict[str, float | None]:
    """List price per hour of the job on each fallback instance type (same instance count), None where unknown."""
    count = workload.compute.groups[0].instance_count
    return {t: catalog.hourly_cost(t, count, region)
            for t in workload.capacity_retry.fallback_instance_types}
