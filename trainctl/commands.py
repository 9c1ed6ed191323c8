"""`validate` and `render`: check every workload, and show the exact request a run would send."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from compiler.environments import load_environments
from compiler.errors import SpecError
from compiler.request import compile_request
from compiler.spec import load_all_workloads, load_workload

# Stands in for framework image URIs during `validate`, which must not import the SDK to stay fast;
# the image itself is resolved (and so checked) by `render` and by synth.
_IMAGE_STAND_IN = "111111111111.dkr.ecr.us-east-1.amazonaws.com/validate:stand-in"


def _full_validation(request: dict) -> list[str]:
    """The service model's full check (max, pattern, enum), with stand-in deploy-time values."""
    from compiler import service_model
    from compiler.placeholders import substitute
    from compiler.samples import sample_values

    return service_model.validate_request(substitute(request, sample_values(request)))


def validate(args: argparse.Namespace) -> int:
    try:
        envs = load_environments()
        workloads = load_all_workloads(Path(args.directory)) if args.directory else load_all_workloads()
    except SpecError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    problems: list[str] = []
    for workload in workloads:
        for warning in workload.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        for env in envs.values():
            try:
                request = compile_request(workload, env, training_image=_IMAGE_STAND_IN)
            except SpecError as exc:
                problems.extend(f"{p} [environment {env.name}]" for p in exc.problems)
                continue
            problems.extend(f"{workload.path.name}: request for {env.name}: {p}" for p in _full_validation(request))
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(f"{len(workloads)} workloads valid for {len(envs)} environments ({', '.join(envs)})")
    return 0


def render(args: argparse.Namespace) -> int:
    try:
        envs = load_environments()
        if args.env not in envs:
            print(f"unknown environment '{args.env}'; cdk.json declares {', '.join(envs)}", file=sys.stderr)
            return 2
        workload = load_workload(args.spec)
        for warning in workload.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        request = compile_request(workload, envs[args.env])
    except SpecError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    json.dump(request, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check every workload spec against every environment")
    p.add_argument("--directory", help="folder of workload YAML files (default: training/workloads)")
    p.set_defaults(func=validate)
    p = sub.add_parser("render", help="print the CreateTrainingJob request of a run started with empty input")
    p.add_argument("spec", help="a workload name or a path to a YAML spec")
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.set_defaults(func=render)
