"""What the checks read, gathered once before they run: the environment, its images and compiled workloads, the
synthesized assembly's folder and AWS access. Only the environment's own workloads are compiled, by the pipeline
validate and synth run (every spec is still checked against every environment), on the command's one reading of
cdk.json."""

from __future__ import annotations

from pathlib import Path

from compiler.errors import SpecError
from compiler.inputs.environments import Environment
from compiler.inputs.project import Project
from compiler.pipeline import compile_project
from trainctl.preflight.checks import Aws, Context


def context(project: Project, env: Environment, cdk_out: Path, profile: str | None) -> Context:
    """The checks' context; workloads that do not compile are one `compile_error` the checks that need them report."""
    ctx = Context(env=env, aws=Aws(env, profile), cdk_out=cdk_out)
    try:
        compiled = compile_project(project, only=[env.name])
        ctx.images, ctx.compiled = compiled.images, compiled.workloads(env.name)
    except SpecError as error:
        first = f", first: {error.problems[0]}" if error.problems else ""
        ctx.compile_error = f"{len(error.problems)} problem(s){first}"
    return ctx
