"""Workload stacks: one `TrainingWorkload` (execution role, state machine, its role) per workload, in stable shards.

Per environment: the `Runs` stack (shared by every state machine), `Workloads00` .. `Workloads<shards-1>`
(stateless; the plan's shards, `compiler.pipeline.EnvironmentPlan`, say which workload goes where, from the
environment's `workload_shards`), and `Monitoring` (dashboards and the capacity alarm; more `MonitoringNN` stacks past a
few hundred workloads). Only shards that hold a workload become stacks; a shard that empties leaves the app, and `cdk
deploy` leaves its stack deployed (`trainctl review` lists it with the commands that delete it).
Source bundles are one asset per distinct bundle per stack. The pipeline checked every shard's template size before
any construct exists; the resource count, known only on the constructs, fails synth here, naming the setting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
import jsii
from constructs import Construct, IValidation

from compiler import state_machine as sm
from compiler.compilation.stack_layout import MAX_STACK_RESOURCES
from compiler.facts.placeholders import SOURCE_DIR_FILE_NAME, SOURCE_DIR_S3_URI
from compiler.inputs.environments import Environment
from compiler.pipeline import Bundle, EnvironmentPlan, Shard
from platform_constructs import stack_resources
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
    a deploy-time token would break that path, so that fails synth (`_LiteralAssetKeys`).
    """
    return bundle.object_key.rsplit("/", 1)[-1]


class WorkloadsStack(cdk.Stack):
    """One shard of an environment's workloads."""

    def __init__(self, scope: Construct, shard: Shard, *, env: Environment, shared: WorkloadPlatform,
                 substitutions: dict[str, str], runs: RunsStack, bundle_file: Callable[[Bundle], Path],
                 **kwargs: Any) -> None:
        """`shared` and `substitutions`: what every shard of the environment takes from its platform and Runs
        stacks (read once for them all by `add_workload_stacks`)."""
        super().__init__(scope, shard.stack_name, description=f"Training workloads ({env.name}): {len(shard.workloads)} "
                         "state machines, one shard of the environment's workloads", **kwargs)
        self.workloads: dict[str, TrainingWorkload] = {}
        self.settings = env
        self.template_bytes = shard.template_bytes
        bundles: dict[int, SourceBundle] = {}  # by the plan's bundle: one asset each in this stack
        self.node.add_validation(_SizeGuard(self))
        self.node.add_validation(_LiteralAssetKeys(bundles))
        for compiled in shard.workloads:
            workload = compiled.workload
            values = dict(substitutions)
            bundle = self._bundle(compiled.code, bundles, bundle_file) if compiled.code is not None else None
            if bundle is not None:
                values[SOURCE_DIR_S3_URI] = bundle.s3_uri
                values[SOURCE_DIR_FILE_NAME] = source_file_name(bundle)
            construct = TrainingWorkload(self, workload.name, compiled=compiled, platform=shared, source=bundle,
                                         substitutions=values)
            construct.add_failed_runs_alarm(runs.topic)
            if compiled.schedule is not None:
                WorkloadSchedule(construct, "Schedule", workload=workload, environment=env.name, facts=compiled.schedule,
                                 state_machine_arn=construct.state_machine_arn).node.add_dependency(construct.state_machine)
            self.workloads[workload.name] = construct

    def _bundle(self, code: Bundle, bundles: dict[int, SourceBundle],
                bundle_file: Callable[[Bundle], Path]) -> SourceBundle:
        """The stack's asset of a plan bundle, made on its first use here (`Source0`, `Source1`, ... in that order)."""
        if code.index not in bundles:
            bundles[code.index] = SourceBundle(self, f"Source{len(bundles)}", path=bundle_file(code))
        return bundles[code.index]


@jsii.implements(IValidation)
class _SizeGuard:
    """Fails synth when a shard nears CloudFormation's resource limit, saying what to change.

    Template size is checked by the compile pipeline, before any construct exists (the plan rule
    every_shard_fits_its_template, which `validate` runs too); the resource count is known only here.
    """

    def __init__(self, stack: WorkloadsStack):
        self.stack = stack

    def validate(self) -> list[str]:
        stack = self.stack
        resources = stack_resources.of(stack).count
        if resources <= MAX_STACK_RESOURCES:
            return []
        return [f"{stack.stack_name} has {resources} resources (limit {MAX_STACK_RESOURCES} of CloudFormation's 500): "
                f"raise {stack.settings.name}.workload_shards in cdk.json above {stack.settings.workload_shards}"]


@jsii.implements(IValidation)
class _LiteralAssetKeys:
    """Fails synth when a source bundle's S3 key is a deploy-time token (a synthesizer other than the default): a
    network-isolated job finds its code by the key's file name, which must be known when the definition is written."""

    def __init__(self, bundles: dict[int, SourceBundle]):
        self.bundles = bundles

    def validate(self) -> list[str]:
        return [f"{b.node.path}: the source tarball's S3 key is only known at deploy time; use the default stack "
                "synthesizer (literal asset keys)" for b in self.bundles.values() if cdk.Token.is_unresolved(b.object_key)]


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


def add_workload_stacks(stage: Construct, platform: PlatformResources, plan: EnvironmentPlan, *,
                        build_dir: Path | None = None) -> WorkloadStacks:
    """The Runs stack and the workload shards of one environment, as its plan lays them out."""
    env = platform.env
    runs = RunsStack(stage, "Runs", settings=env, removal_policy=platform.removal_policy,
                     termination_protection=env.production)
    result = WorkloadStacks(runs=runs)
    directory = build_dir or platform.project_root / "build" / "sourcedirs"
    files: dict[int, Path] = {}

    def bundle_file(code: Bundle) -> Path:
        """The plan bundle's tarball, packed once for all the environment's shards that ship it."""
        if code.index not in files:
            files[code.index] = write_bundle(code.scan, directory)
        return files[code.index]

    # Read once for every shard: each read of a construct's attribute is a call into the CDK's JavaScript.
    storage = platform.storage
    shared = WorkloadPlatform(
        data_bucket_arn=storage.data_bucket.bucket_arn, output_bucket_arn=storage.output_bucket.bucket_arn,
        checkpoint_bucket_arn=storage.checkpoint_bucket.bucket_arn, key_arn=platform.key.key_arn,
        image_repositories={n: i.repository.repository_arn for n, i in platform.images.items()},
        shared_execution_policies=platform.training_jobs.policies,
        shared_state_machine_policies=runs.state_machine_policies, run_log_group_arn=runs.log_group.log_group_arn,
        network=platform.network,
    )
    substitutions = platform.substitutions() | {sm.NOTIFICATION_TOPIC_ARN: runs.topic.topic_arn}
    for shard in plan.shards:
        result.shards.append(WorkloadsStack(stage, shard, env=env, shared=shared, substitutions=substitutions,
                                            runs=runs, bundle_file=bundle_file))
    result.monitoring = add_monitoring_stacks(
        stage, settings=env, topic=runs.topic,
        workloads=[(w.workload, w.state_machine_arn) for shard in result.shards for w in shard.workloads.values()])
    return result


