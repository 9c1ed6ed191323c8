"""`validate` and `render`: check every workload against every environment, and show one run's exact request.

Both run the compile pipeline synth runs (`compiler.pipeline`), so what synth refuses, they refuse.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler.errors import Problem, SpecError, warning_line
from compiler.inputs.environments import Environment
from compiler.pipeline import compile_one, compile_project
from compiler.spec import workload_files
from compiler.spec.loading import SpecFile
from trainctl.common.arguments import path_text
from trainctl.common.lookup import environment, project_of


def validate(args: argparse.Namespace) -> int:
    project = project_of(args)
    compiled = compile_project(project, directory=_directory(args.directory))
    for warning in compiled.warnings:
        print(warning_line(warning), file=sys.stderr)
    envs = compiled.environments
    counts = ", ".join(f"{name}: {len(compiled.workloads(name))}" for name in envs)
    print(f"{len(compiled.loaded.specs)} workloads valid for {len(envs)} environments ({counts})")
    for line in skipped_lines(compiled.loaded.specs, envs):
        print(line)
    return 0


def skipped_lines(specs: list[SpecFile], envs: Mapping[str, Environment]) -> list[str]:
    """Per environment, the workloads that do not deploy there and why: a new environment gets only some of them."""
    lines = []
    for env in envs.values():
        blocks = sorted(s.name for s in specs if not s.deploys_to(env) and s.environments is not None)
        defaults = sorted(s.name for s in specs if not s.deploys_to(env) and s.environments is None)
        reasons = ([f"{', '.join(blocks)} (their environments: blocks do not name {env.name}; add `{env.name}: {{}}` "
                    "there to deploy one)"] if blocks else []) + \
                  ([f"{', '.join(defaults)} (not in its default_workloads in cdk.json)"] if defaults else [])
        if reasons:
            lines.append(f"  {env.name} skips {'; and '.join(reasons)}")
    return lines


def _directory(text: str | None) -> Path | None:
    """`--directory`: a folder of specs (relative to the working directory); one with none is a mistake to say."""
    if text is None:
        return None
    folder = Path(text).resolve()
    if not folder.is_dir():
        raise SpecError(Problem("", "--directory", f"{text} is not a folder; name the folder of workload YAML files"))
    if not workload_files(folder):
        raise SpecError(Problem("", "--directory", f"{text} holds no workload spec (*.yaml, *.yml)"))
    return folder


def render(args: argparse.Namespace) -> int:
    project = project_of(args, args.spec)
    env = environment(project, args.env)
    compiled = compile_one(project, args.spec, env.name)
    for warning in (*compiled.workload.warnings, *compiled.warnings):
        print(warning_line(warning), file=sys.stderr)
    document: Any = json.loads(compiled.definition) if args.state_machine else compiled.request
    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check every workload spec against every environment")
    p.add_argument("--directory", type=path_text, help="folder of workload YAML files (default: workloads/)")
    p.set_defaults(func=validate)
    p = sub.add_parser("render", help="print the CreateTrainingJob request of a run started with empty input")
    p.add_argument("spec", help="a workload name or a path to a YAML spec")
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.add_argument("--state-machine", action="store_true", help="print the state machine's definition instead")
    p.set_defaults(func=render)
