"""What the checks read, gathered once before they run: the environment, its images and compiled workloads, the
synthesized assembly's folder and AWS access. Only the environment's own workloads are compiled, each by the pipeline
`render` runs (`compiler.pipeline.compile_one`), on the command's one reading of cdk.json."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from compiler.errors import SpecError
from compiler.inputs.environments import Environment
from compiler.inputs.project import Project
from compiler.pipeline import CompiledWorkload, compile_one, project_images
from compiler.spec import load_workloads
from trainctl.preflight.checks import Aws, Context


def compile_environment(project: Project, env: Environment, images: Collection[str]) -> list[CompiledWorkload]:
    """The workloads that deploy to `env`, compiled for it, by name; one SpecError with every problem found.

    Every spec is loaded against every environment (its `environments` block may name any of them), as validate
    loads them; only `env`'s workloads are compiled."""
    loaded = load_workloads(project, project.environments(), images=images)
    paths = {spec.source: spec.path for spec in loaded.specs}
    compiled, problems = [], []
    for workload in loaded.workloads(env.name):
        try:
            compiled.append(compile_one(project, str(paths[workload.source]), env.name))
        except SpecError as error:
            problems += error.problems
    if problems:
        raise SpecError(list(dict.fromkeys(problems)))
    return compiled


def context(project: Project, env: Environment, cdk_out: Path, profile: str | None) -> Context:
    """The checks' context; workloads that do not compile are one `compile_error` the checks that need them report."""
    ctx = Context(env=env, aws=Aws(env, profile), cdk_out=cdk_out)
    try:
        ctx.images = project_images(project, {env.name: env})
        ctx.compiled = compile_environment(project, env, list(ctx.images))
    except SpecError as error:
        first = f", first: {error.problems[0]}" if error.problems else ""
        ctx.compile_error = f"{len(error.problems)} problem(s){first}"
    return ctx
