"""Workload stacks: one `TrainingWorkload` (execution role, state machine, its role) per workload, in stable shards.

Per environment: the `Runs` stack (shared by every state machine), `Workloads00` .. `Workloads<shards-1>`
(stateless; `compiler.compilation.stack_layout` says which workload goes where, from the environment's `workload_shards`), and
`Monitoring` (dashboards and the capacity alarm; more `MonitoringNN` stacks past a few hundred workloads).
Only shards that hold a workload become stacks; a shard that empties leaves the app, and `cdk deploy` leaves its stack
deployed (`trainctl review` lists it with the commands that delete it: trainctl/review/names.py).
Source bundles are one asset per distinct bundle per stack. Synth stops, naming the setting, when a shard nears
CloudFormation's limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
import jsii
from constructs import Construct, IValidation

from compiler import state_machine as sm
from compiler.compilation import schedules
from compiler.compilation.stack_layout import MAX_STACK_RESOURCES, shard_of, shard_problem, shard_stack_name, shard_template_bytes
from compiler.errors import Problem, SpecError
from compiler.facts.placeholders import (
    EXECUTION_ROLE_ARN,
    SOURCE_DIR_FILE_NAME,
    SOURCE_DIR_S3_URI,
    TRAINING_SECURITY_GROUP_ID,
)
from compiler.inputs.model import Code
from compiler.pipeline import CompiledWorkload
from platform_constructs.schedule import WorkloadSchedule
from platform_constructs.source_bundle import SourceBundle, write_bundle
from platform_constructs.workload import TrainingWorkload, WorkloadPlatform
from stacks.monitoring import MonitoringStack, add_monitoring_stacks
from stacks.runs import RunsStack

if TYPE_CHECKING:
    from stacks.platform import PlatformResources


def source_file_name(bundle: SourceBundle) -> str:
    """The tarball object's name, which a network-isolated job finds under /opt/ml/input/data/code/.

    The default stack synthesizer names file assets `<hash>.<ext>` at a literal key; a synthesizer that makes the key
    a deploy-time token would break that path, so it stops synth instead.
    """
    key = bundle.object_key
    if cdk.Token.is_unresolved(key):
        raise SpecError(Problem("stacks/workloads.py", "SourceDirFileName", "the source tarball's S3 key is only known "
                                "at deploy time; use the default stack synthesizer (literal asset keys)"))
    return key.rsplit("/", 1)[-1]


def _bundle_key(code: Code) -> tuple[Any, ...]:
    return (code.source_dir, code.entry_point_path, code.dependencies)


class WorkloadsStack(cdk.Stack):
    """One shard of an environment's workloads."""

    def __init__(self, scope: Construct, index: int, *, platform: PlatformResources, runs: RunsStack,
                 workloads: Sequence[CompiledWorkload], build_dir: Path, project_root: Path, **kwargs: Any) -> None:
        env = platform.env
        super().__init__(scope, shard_stack_name(index), description=f"Training workloads ({env.name}): {len(workloads)} state "
                         "machines, one shard of the environment's workloads", **kwargs)
        self.workloads: dict[str, TrainingWorkload] = {}
        self.settings = env
        definitions: list[str] = []
        shared = WorkloadPlatform(
            data_bucket=platform.storage.data_bucket, output_bucket=platform.storage.output_bucket,
            checkpoint_bucket=platform.storage.checkpoint_bucket, key=platform.key,
            image_repositories={n: i.repository.repository_arn for n, i in platform.images.items()},
            shared_execution_policies=platform.training_jobs.policies,
            shared_state_machine_policies=runs.state_machine_policies, run_log_group=runs.log_group,
            network=platform.network,
        )
        base = platform.substitutions() | {sm.NOTIFICATION_TOPIC_ARN: runs.topic.topic_arn}
        bundles: dict[tuple[Any, ...], SourceBundle] = {}
        self.node.add_validation(_SizeGuard(self))
        for compiled in sorted(workloads, key=lambda w: w.name):
            workload = compiled.workload
            values = dict(base)
            bundle = None
            if workload.code is not None:
                key = _bundle_key(workload.code)
                if key not in bundles:
                    path = write_bundle(workload.code, project_root, build_dir)
                    bundles[key] = SourceBundle(self, f"Source{len(bundles)}", path=path)
                bundle = bundles[key]
                values[SOURCE_DIR_S3_URI] = bundle.s3_uri
                values[SOURCE_DIR_FILE_NAME] = source_file_name(bundle)
            self._check_substitutions(compiled, values)  # compiled once, by the pipeline validate runs
            construct = TrainingWorkload(self, workload.name, compiled=compiled, platform=shared, source=bundle,
                                         substitutions=values)
            construct.add_failed_runs_alarm(runs.topic)
            if workload.schedule is not None and workload.schedule.applies_to(env.name):
                WorkloadSchedule(construct, "Schedule", workload=workload, environment=env.name,
                                 state_machine_arn=construct.state_machine_arn).node.add_dependency(construct.state_machine)
            self.workloads[workload.name] = construct
            definitions.append(compiled.definition)
        self.template_bytes = shard_template_bytes(definitions) + sum(
            schedules.layout_bytes([c.workload for c in workloads], env.name).values())
        problem = shard_problem(env, index, len(workloads), self.template_bytes)
        if problem is not None:  # `validate` says the same, before any construct exists
            raise SpecError(problem)

    @staticmethod
    def _check_substitutions(compiled: CompiledWorkload, values: dict[str, str]) -> None:
        """The stacks give every deploy-time value the pipeline found the definition needs (it checked the names)."""
        needed = compiled.deploy_time_names - {EXECUTION_ROLE_ARN, TRAINING_SECURITY_GROUP_ID}  # made per workload
        missing = sorted(needed - set(values))
        if missing:
            raise SpecError(Problem(compiled.workload.source, "inputs/image", "needs " + ", ".join(missing) + ", which "
                                    f"environment '{compiled.environment.name}' does not provide (an FSx channel "
                                    "without a file system, or an image repository this project does not build?)"))


@jsii.implements(IValidation)
class _SizeGuard:
    """Fails synth when a shard nears CloudFormation's resource limit, saying what to change.

    Template size is checked as the shard is built (and by `validate`); the resource count is known only here.
    """

    def __init__(self, stack: WorkloadsStack):
        self.stack = stack

    def validate(self) -> list[str]:
        stack = self.stack
        resources = len([c for c in stack.node.find_all() if isinstance(c, cdk.CfnResource)])
        if resources <= MAX_STACK_RESOURCES:
            return []
        return [f"{stack.stack_name} has {resources} resources (limit {MAX_STACK_RESOURCES} of CloudFormation's 500): "
                f"raise {stack.settings.name}.workload_shards in cdk.json above {stack.settings.workload_shards}"]


@dataclass
class WorkloadStacks:
    """The Runs stack and the workload shards of one environment."""

    runs: RunsStack
    shards: list[WorkloadsStack] = field(default_factory=list)
    monitoring: list[MonitoringStack] = field(default_factory=list)

    @property
    def stacks(self) -> list[cdk.Stack]:
        return [self.runs, *self.shards, *self.monitoring]

    def workload(self, name: str) -> TrainingWorkload:
        for shard in self.shards:
            if name in shard.workloads:
                return shard.workloads[name]
        raise KeyError(name)

    def stack_of(self) -> dict[str, str]:
        """Which stack holds which workload."""
        return {name: shard.node.id for shard in self.shards for name in shard.workloads}


def add_workload_stacks(stage: Construct, platform: PlatformResources, workloads: Sequence[CompiledWorkload], *,
                        build_dir: Path | None = None) -> WorkloadStacks:
    """The Runs stack and the workload shards of one environment."""
    env = platform.env
    runs = RunsStack(stage, "Runs", settings=env, removal_policy=platform.removal_policy,
                     termination_protection=env.production)
    result = WorkloadStacks(runs=runs)
    groups: dict[int, list[CompiledWorkload]] = {}
    for workload in workloads:
        groups.setdefault(shard_of(workload.name, env.workload_shards), []).append(workload)
    for index in sorted(groups):
        result.shards.append(WorkloadsStack(
            stage, index, platform=platform, runs=runs, workloads=groups[index],
            build_dir=build_dir or platform.project_root / "build" / "sourcedirs", project_root=platform.project_root,
        ))
    result.monitoring = add_monitoring_stacks(
        stage, settings=env, topic=runs.topic,
        workloads=[(w.workload, w.state_machine_arn) for shard in result.shards for w in shard.workloads.values()])
    return result


