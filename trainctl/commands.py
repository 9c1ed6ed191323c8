"""`validate` and `render`: check every workload against every environment, and show one run's exact request."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from compiler import service_model
from compiler import state_machine as sm
from compiler.environments import Environment, zone_problems
from compiler.errors import SpecError
from compiler.model import Workload
from compiler.placeholders import RUN_ID_LENGTH, substitute
from compiler.request import compile_request
from compiler.samples import sample_values
from compiler.spec import load_workload, load_workloads
from compiler.stack_layout import layout_problems
from trainctl.common import project_of


def full_validation(request: dict[str, Any], env: Environment, attempt: int = 0) -> list[str]:
    """The service model's full check (max, pattern, enum) with realistic deploy-time values for the environment.

    The run id is the longest the state machine makes and the attempt the highest it reaches, so the job name is
    checked at its longest.
    """
    values = sample_values(request, region=env.region, account=env.account, RunId="f" * RUN_ID_LENGTH,
                           Attempt=str(attempt))
    return service_model.validate_request(substitute(request, values))


def check_compiled(workloads: list[Workload], env: Environment) -> list[str]:
    """Compile each request and state machine, check the requests against SageMaker's model and the stacks' sizes."""
    problems: list[str] = []
    definitions: dict[str, str] = {}
    for workload in workloads:
        request = compile_request(workload, env)
        problems += [f"{workload.source}: request for {env.name}: {p}"
                     for p in full_validation(request, env, workload.capacity_retry.max_attempts)]
        definitions[workload.name] = sm.definition_string(sm.build_definition(sm.spec_for(workload, env)))
    return problems + [str(p) for p in layout_problems(env, definitions)]


def validate(args: argparse.Namespace) -> int:
    project = project_of(args)
    envs = project.environments()
    zones = zone_problems(project.context(), envs)
    if zones:
        raise SpecError(zones)
    loaded = load_workloads(project, envs, Path(args.directory).resolve() if args.directory else None)
    for warning in loaded.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    problems = [p for env in envs.values() for p in check_compiled(loaded.workloads(env.name), env)]
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    counts = ", ".join(f"{name}: {len(loaded.workloads(name))}" for name in envs)
    print(f"{len(loaded.specs)} workloads valid for {len(envs)} environments ({counts})")
    return 0


def render(args: argparse.Namespace) -> int:
    project = project_of(args, args.spec)
    envs = project.environments()
    if args.env not in envs:
        print(f"unknown environment '{args.env}'; cdk.json declares {', '.join(envs)}", file=sys.stderr)
        return 2
    env = envs[args.env]
    workload = load_workload(project, args.spec, env)
    for warning in workload.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.state_machine:
        document: Any = sm.build_definition(sm.spec_for(workload, env))
    else:
        document = compile_request(workload, env)
        problems = full_validation(document, env, workload.capacity_retry.max_attempts)
        if problems:
            print("\n".join(f"{workload.source}: request for {env.name}: {p}" for p in problems), file=sys.stderr)
            return 1
    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check every workload spec against every environment")
    p.add_argument("--directory", help="folder of workload YAML files (default: workloads/)")
    p.set_defaults(func=validate)
    p = sub.add_parser("render", help="print the CreateTrainingJob request of a run started with empty input")
    p.add_argument("spec", help="a workload name or a path to a YAML spec")
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.add_argument("--state-machine", action="store_true", help="print the state machine's definition instead")
    p.set_defaults(func=render)
