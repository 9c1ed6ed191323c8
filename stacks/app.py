"""The CDK app: one Stage per environment of cdk.json (`cdk deploy 'dev/*'`), platform stacks plus workloads.

`build_app` is the one way the app is assembled: `app.py` (what `cdk synth` runs) and the tests both call it, so
the tests check exactly what synth produces. Bad input (cdk.json, cached lookups, workload specs) stops it with
every problem listed, before any construct exists: nothing is synthesized half-way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from compiler.facts.summaries import WARNINGS_FILE
from compiler.inputs.environments import Environment
from compiler.inputs.files import write_text_atomically
from compiler.inputs.image_builds import ImageBuild
from compiler.inputs.project import Project
from compiler.pipeline import Compiled, compile_project
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
    stages: dict[str, PlatformStage]
    workload_stacks: dict[str, WorkloadStacks]
    compiled: Compiled

    @property
    def environments(self) -> dict[str, Environment]:
        return self.compiled.environments

    @property
    def images(self) -> dict[str, ImageBuild]:
        return self.compiled.images

    @property
    def warnings(self) -> list[str]:
        return self.compiled.warnings

    def synth(self) -> cdk.cx_api.CloudAssembly:
        """Synthesize, then record the compile's warnings beside the assembly's manifest (WARNINGS_FILE), written
        whole or not at all, for `trainctl summary` to read with the templates."""
        assembly = self.app.synth()
        write_text_atomically(Path(assembly.directory) / WARNINGS_FILE,
                              json.dumps({"warnings": self.warnings}, indent=2) + "\n")
        return assembly


def build_app(project: Project, *, outdir: str | None = None, only: Iterable[str] | None = None,
              context: Mapping[str, Any] | None = None, builtin_validation: bool = True) -> PlatformApp:
    """The CDK app with one PlatformStage per environment, cdk-nag AwsSolutions checks on every stack, and the guard
    that no stack owns a name an AWS service creates for itself (platform_constructs/service_names.py), and that
    every security group and rule description is one EC2 accepts (platform_constructs/rule_descriptions.py).

    Everything it reads from the project is checked and compiled first by the pipeline `trainctl validate` runs
    (`compile_project`, which raises one SpecError listing every problem, before any construct exists); the stacks
    are built from each environment's plan. `builtin_validation=False` turns off the CDK's own CloudFormation
    validation plugin (several seconds per synth), for callers that lint the templates themselves.
    """
    compiled = compile_project(project, only=only)
    app = cdk.App(context=dict(project.context() if context is None else context), outdir=outdir,
                  builtin_cloud_formation_validation=builtin_validation)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    stages: dict[str, PlatformStage] = {}
    workload_stacks: dict[str, WorkloadStacks] = {}
    for name, plan in compiled.plans.items():  # the environments `only` names (every one without it)
        stage = PlatformStage(app, plan, images=compiled.images, project_root=project.root)
        stages[name] = stage
        workload_stacks[name] = add_workload_stacks(stage, stage.platform, plan)
        for stack in [*stage.platform_stacks, *workload_stacks[name].stacks]:
            provider_roles_trust_this_account(stack)
            acknowledge_custom_resource_functions(stack)
            guard_service_names(stack)
            guard_rule_descriptions(stack)
    return PlatformApp(app=app, project=project, stages=stages, workload_stacks=workload_stacks, compiled=compiled)
