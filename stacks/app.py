"""The CDK app: one Stage per environment of cdk.json (`cdk deploy 'dev/*'`), platform stacks plus workloads.

`build_app` is the one way the app is assembled: `app.py` (what `cdk synth` runs) and the tests both call it, so
the tests check exactly what synth produces. Bad input (cdk.json, cached lookups, workload specs) stops it with
every problem listed, before any construct exists: nothing is synthesized half-way.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from compiler.errors import SpecError
from compiler.inputs.environments import Environment
from compiler.inputs.image_builds import ImageBuild
from compiler.inputs.project import Project
from compiler.pipeline import Compiled, compile_project
from compiler.spec import Loaded
from platform_constructs.checkov import acknowledge_custom_resource_functions
from platform_constructs.rule_descriptions import guard_rule_descriptions
from platform_constructs.service_names import guard_service_names
from platform_constructs.trust import provider_roles_trust_this_account
from stacks.platform import PlatformStage
from stacks.workloads import WorkloadStacks, add_workload_stacks


@dataclass
class PlatformApp:
    """The assembled app, with what the tests and the CLI read from it."""

    app: cdk.App
    project: Project
    environments: dict[str, Environment]
    images: dict[str, ImageBuild]
    loaded: Loaded
    stages: dict[str, PlatformStage]
    workload_stacks: dict[str, WorkloadStacks]
    compiled: Compiled

    def synth(self) -> cdk.cx_api.CloudAssembly:
        return self.app.synth()


def check_inputs(project: Project) -> Compiled:
    """Everything synth reads from the project, checked and compiled by the pipeline `trainctl validate` runs;
    raises SpecError listing every problem."""
    return compile_project(project)


def build_app(project: Project, *, outdir: str | None = None, only: Iterable[str] | None = None,
              context: Mapping[str, Any] | None = None, builtin_validation: bool = True) -> PlatformApp:
    """The CDK app with one PlatformStage per environment, cdk-nag AwsSolutions checks on every stack, and the guard
    that no stack owns a name an AWS service creates for itself (platform_constructs/service_names.py), and that
    every security group and rule description is one EC2 accepts (platform_constructs/rule_descriptions.py).

    `builtin_validation=False` turns off the CDK's own CloudFormation validation plugin (several seconds per
    synth), for callers that lint the templates themselves.
    """
    compiled = check_inputs(project)
    envs, images, loaded = compiled.environments, compiled.images, compiled.loaded
    app = cdk.App(context=dict(project.context() if context is None else context), outdir=outdir,
                  builtin_cloud_formation_validation=builtin_validation)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    wanted = set(only) if only is not None else set(envs)
    stages: dict[str, PlatformStage] = {}
    workload_stacks: dict[str, WorkloadStacks] = {}
    for name, env in envs.items():
        if name not in wanted:
            continue
        workloads = compiled.workloads(name)
        stage = PlatformStage(app, env, images=images, workloads=workloads,
                              project_root=project.root)
        stages[name] = stage
        workload_stacks[name] = add_workload_stacks(stage, stage.platform, workloads)
        for stack in [*stage.platform_stacks, *workload_stacks[name].stacks]:
            provider_roles_trust_this_account(stack)
            acknowledge_custom_resource_functions(stack)
            guard_service_names(stack)
            guard_rule_descriptions(stack)
    return PlatformApp(app=app, project=project, environments=envs, images=images, loaded=loaded, stages=stages,
                       workload_stacks=workload_stacks, compiled=compiled)


def main(project: Project) -> int:
    """`cdk synth`'s entry (app.py): synthesize, or print what to fix and exit 1 (never a traceback)."""
    try:
        platform = build_app(project)
    except SpecError as error:
        print(f"cdk synth stopped: fix these settings first\n{error}", file=sys.stderr)
        return 1
    for warning in platform.loaded.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    platform.synth()
    return 0
