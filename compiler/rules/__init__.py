"""Validation rules as small named units (see `registry`); importing this package registers all of them."""

from __future__ import annotations

from compiler.environments import Environment
from compiler.model import Workload
from compiler.reader import Findings
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
