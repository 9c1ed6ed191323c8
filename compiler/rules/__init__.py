"""Validation rules as small named units (see `registry`); importing this package registers all of them."""

from __future__ import annotations

from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules import (  # noqa: F401 - registers rules
    compute,
    distribution,
    environment,
    foreign_images,
    fsx_datasets,
    isolation,
    limits,
    paths,
    run,
    schedule,
    secret_refs,
    secrets,
)
from compiler.rules.registry import ENVIRONMENT_RULES, WORKLOAD_RULES


def check_workload(workload: Workload, findings: Findings) -> None:
    for rule in WORKLOAD_RULES:
        rule(workload, findings)


def check_in_environment(workload: Workload, env: Environment, findings: Findings) -> None:
    for rule in ENVIRONMENT_RULES:
        rule(workload, env, findings)
