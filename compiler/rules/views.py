"""What the rules that run after compilation read: plain data the pipeline hands them, no compiler machinery.

A rule below the state machine's layer cannot see its types, and should not: it reads the request as the template
will hold it, the definition as text, the names the definition needs and those the environment's stacks provide.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.inputs.environments import Environment
from compiler.inputs.image_builds import ImageBuild
from compiler.inputs.model import Workload
from compiler.inputs.sourcedir import Scan


@dataclass(frozen=True)
class InputsView:
    """The project's settings before any spec is read: its environments and the cached context (cdk.context.json)."""

    environments: Mapping[str, Environment]
    context: Mapping[str, Any]


@dataclass(frozen=True)
class CompiledView:
    """One workload compiled for one environment."""

    workload: Workload
    environment: Environment
    request: Mapping[str, Any]  # the primary CreateTrainingJob request, deploy-time values as `${Name}` placeholders
    definition: str  # the state machine's definition, as the template holds it
    deploy_time_names: frozenset[str]  # the `${Name}`s the definition needs
    provided_names: frozenset[str]  # the `${Name}`s the environment's stacks provide it
    bundle: Scan | None  # the code's files (None for an image-only job)
    project_root: Path
    template_bytes: int  # what it adds to its shard's template (stack_layout.workload_template_bytes)
    cost_checks: int  # the instance counts whose cost ceiling the definition checks (one per count a run may ask for)
    image_builds: Mapping[str, ImageBuild] = field(default_factory=dict)  # the images this project builds, by name


@dataclass(frozen=True)
class PlanView:
    """One environment with its compiled workloads (by name) and its plan's shards."""

    environment: Environment
    workloads: tuple[CompiledView, ...]
    shards: Mapping[int, tuple[int, ...]]  # the plan's shards: index -> what each of its workloads adds


@dataclass(frozen=True)
class ProjectView:
    """Every spec's workload as written (`base`, by name) and those each environment deploys (by environment)."""

    environments: Mapping[str, Environment]
    base: Mapping[str, Workload]
    by_environment: Mapping[str, Mapping[str, Workload]]
    spec_names: frozenset[str]  # the names of every spec read, valid or not
