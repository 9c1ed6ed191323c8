"""Validation rules as small named units (see `registry`); importing this package registers all of them."""

from __future__ import annotations

from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules import (  # noqa: F401 - registers rules
    algorithms,
    bundle,
    compute,
    distribution,
    environment,
    foreign_images,
    fsx_datasets,
    grants,
    isolation,
    layout,
    limits,
    model_dir,
    names,
    paths,
    python_source,
    remote_debug,
    request,
    requirements,
    run,
    s3_datasets,
    s3_prefixes,
    schedule,
    scikit_learn,
    secret_refs,
    secrets,
    zones,
)
from compiler.rules.registry import (
    COMPILED_RULES,
    ENVIRONMENT_RULES,
    INPUTS_RULES,
    PLAN_RULES,
    PROJECT_RULES,
    WORKLOAD_RULES,
)
from compiler.rules.views import CompiledView, InputsView, PlanView, ProjectView


def check_inputs(view: InputsView, findings: Findings) -> None:
    for rule in INPUTS_RULES:
        rule(view, findings)


def check_workload(workload: Workload, findings: Findings) -> None:
    for rule in WORKLOAD_RULES:
        rule(workload, findings)


def check_in_environment(workload: Workload, env: Environment, findings: Findings) -> None:
    for rule in ENVIRONMENT_RULES:
        rule(workload, env, findings)


def check_compiled(view: CompiledView, findings: Findings) -> None:
    for rule in COMPILED_RULES:
        rule(view, findings)


def check_plan(view: PlanView, findings: Findings) -> None:
    for rule in PLAN_RULES:
        rule(view, findings)


def check_project(view: ProjectView, findings: Findings) -> None:
    for rule in PROJECT_RULES:
        rule(view, findings)
