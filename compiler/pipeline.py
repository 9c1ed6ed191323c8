"""The one compile pipeline: what `trainctl validate`, `render`, `summary`, `review` and `cdk synth` all run.

From the project's files to the plan of every environment, with every check on the way: the cached zones, the
images this project builds, the specs (per environment), each request against SageMaker's model at its longest,
the state machine's definition, the deploy-time values it needs against those the environment provides, the code
bundle (links, size, names) and the shards' sizes. The plan of an environment (`EnvironmentPlan`) holds what the
CDK layer builds from, each decided once here: its compiled workloads, their shards with their sizes, the distinct
code bundles with their files, the external repositories the jobs pull, the DNS firewall, the warnings. Synth builds
its constructs from the plan after the pipeline passed, so nothing synth refuses passes validate, and nothing is
computed twice.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compiler import rules
from compiler import state_machine as sm
from compiler.compilation import schedules
from compiler.compilation.describe import workload_summary
from compiler.compilation.images import pulled_repositories
from compiler.compilation.stack_layout import (
    shard_of,
    shard_stack_name,
    shard_template_bytes,
    workload_template_bytes,
)
from compiler.errors import Problem, SpecError
from compiler.facts import placeholders as ph
from compiler.inputs import sourcedir
from compiler.inputs.environments import Environment
from compiler.inputs.image_builds import ImageBuild, image_builds
from compiler.inputs.model import Code, Workload
from compiler.inputs.project import Project
from compiler.inputs.reader import Findings
from compiler.rules.schedule import schedules_run_where_the_workload_deploys
from compiler.rules.views import CompiledView, InputsView, PlanView, ProjectView
from compiler.spec import Loaded, find_spec, load_workload, load_workloads, read_spec_file

# Deploy-time values the stacks provide to each state machine: the environment's (stacks/platform.py, runs.py),
# its file system's, the code bundle's, and those each workload's construct makes for itself (its role, its job
# security group: an environment-wide value until issue 23 gives each workload its own).
ENVIRONMENT_NAMES = frozenset({ph.TRAINING_SUBNET_ID, ph.DATA_BUCKET, ph.OUTPUT_BUCKET, ph.CHECKPOINT_BUCKET,
                               ph.KMS_KEY_ARN, sm.NOTIFICATION_TOPIC_ARN})
FILE_SYSTEM_NAMES = frozenset({ph.FILE_SYSTEM_ID, ph.FSX_MOUNT_NAME})
CODE_NAMES = frozenset({ph.SOURCE_DIR_S3_URI, ph.SOURCE_DIR_FILE_NAME})
WORKLOAD_NAMES = frozenset({ph.EXECUTION_ROLE_ARN, ph.TRAINING_SECURITY_GROUP_ID})


@dataclass(frozen=True)
class Bundle:
    """One distinct code bundle (the same code may ship in several workloads and environments): its files, scanned
    once, which the CDK layer packs as they are."""

    index: int  # its order among the project's bundles (stable: the order their workloads are compiled in)
    scan: sourcedir.Scan


@dataclass(frozen=True)
class CompiledWorkload:
    """One workload compiled for one environment: everything the CLI prints and the CDK layer builds from."""

    workload: Workload
    environment: Environment
    machine: sm.MachineSpec  # holds the primary CreateTrainingJob request (`request`)
    definition: str  # the state machine's definition, as the template holds it
    deploy_time_names: frozenset[str]  # the `${Name}`s the definition needs from DefinitionSubstitutions
    image: str  # the TrainingImage (a placeholder for an image this project builds)
    code: Bundle | None  # the code's bundle, or None for an image-only job
    summary: dict[str, Any]  # what the state machine's template metadata says of it (compiler/compilation/describe.py)
    template_bytes: int = 0  # what it adds to its shard's template (stack_layout.workload_template_bytes)
    schedule: dict[str, Any] | None = None  # its schedule's facts where it is scheduled in the environment (review)
    warnings: tuple[str, ...] = ()  # what the compiled rules warn of (the code bundle, its requirements)

    @property
    def bundle(self) -> sourcedir.Scan | None:
        """The code's files (None for an image-only job)."""
        return self.code.scan if self.code is not None else None

    @property
    def request(self) -> dict[str, Any]:
        return self.machine.request

    @property
    def name(self) -> str:
        return self.workload.name


@dataclass(frozen=True)
class Shard:
    """One stack of an environment's workloads (`compiler.compilation.stack_layout`): which, and how large."""

    index: int
    workloads: tuple[CompiledWorkload, ...]  # by name
    template_bytes: int  # stack_layout.shard_template_bytes of what its workloads add, as the size rule estimates

    @property
    def stack_name(self) -> str:
        return shard_stack_name(self.index)


@dataclass
class EnvironmentPlan:
    """What one environment's stacks are built from, decided by the pipeline (the CDK layer only reads it)."""

    environment: Environment
    workloads: list[CompiledWorkload]  # by name
    shards: list[Shard]  # by index; only shards that hold a workload
    pulled_repositories: tuple[str, ...]  # ECR repositories of other accounts the jobs pull their images from


@dataclass
class Compiled:
    """Every workload of the project compiled for every environment it deploys to, and each environment's plan."""

    project: Project
    environments: dict[str, Environment]
    images: dict[str, ImageBuild]
    loaded: Loaded
    plans: dict[str, EnvironmentPlan] = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        return self.loaded.warnings

    def workloads(self, env: str) -> list[CompiledWorkload]:
        """The compiled workloads of one environment, by name."""
        return self.plans[env].workloads if env in self.plans else []

    def plan(self, env: str) -> EnvironmentPlan:
        return self.plans[env]


def provided_names(env: Environment, images: Collection[str], code: bool) -> frozenset[str]:
    """The deploy-time values the environment's stacks give a workload's state machine (stacks/platform.py)."""
    names = set(ENVIRONMENT_NAMES | WORKLOAD_NAMES)
    if env.fsx is not None:
        names |= FILE_SYSTEM_NAMES
    if code:
        names |= CODE_NAMES
    for repository in images:
        names |= {ph.repository_key(repository), ph.image_uri_key(repository)}
    return frozenset(names)


class _Bundles:
    """One scan per distinct bundle (the same code ships in several workloads and environments)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.found: dict[tuple[Any, ...], Bundle] = {}

    def bundle(self, code: Code) -> Bundle:
        key = (code.source_dir, code.entry_point_path, code.dependencies)
        if key not in self.found:
            scan = sourcedir.scan(code.source_dir, code.entry_point_path, code.dependencies, self.root)
            self.found[key] = Bundle(index=len(self.found), scan=scan)
        return self.found[key]


def compile_workload(workload: Workload, env: Environment, images: Collection[str],
                     bundles: _Bundles) -> tuple[CompiledWorkload, list[Problem]]:
    """One checked workload compiled for one environment, with every problem the compiled rules find in it.

    Each part is computed here once (its request compiled, its image resolved, its deploy-time names found) and the
    rules, the CLI and the CDK layer read them from the result (tests/compiler/test_pipeline_once.py).
    """
    machine = sm.spec_for(workload, env)
    image = machine.request["AlgorithmSpecification"]["TrainingImage"]
    definition = sm.definition_string(sm.build_definition(machine))
    code = bundles.bundle(workload.code) if workload.code is not None else None
    compiled = CompiledWorkload(workload=workload, environment=env, machine=machine, definition=definition,
                                deploy_time_names=frozenset(sm.deploy_time_names(definition)), image=image, code=code,
                                summary=workload_summary(workload, env, training_image=image),
                                template_bytes=workload_template_bytes(
                                    definition, schedules.layout_bytes([workload], env.name).get(workload.name, 0)),
                                schedule=_schedule_facts(workload, env))
    findings = Findings(workload.source)
    rules.check_compiled(_view(compiled, images, bundles.root), findings)
    return replace(compiled, warnings=tuple(str(w) for w in findings.warnings)), findings.problems


def _schedule_facts(workload: Workload, env: Environment) -> dict[str, Any] | None:
    """What the environment's schedule of the workload records for `trainctl review`; None: not scheduled there."""
    if workload.schedule is None or not workload.schedule.applies_to(env.name):
        return None
    return schedules.describe_schedule(workload, env)


def _view(compiled: CompiledWorkload, images: Collection[str], root: Path) -> CompiledView:
    """What the compiled rules read of a compiled workload."""
    return CompiledView(
        workload=compiled.workload, environment=compiled.environment, request=compiled.request,
        definition=compiled.definition, deploy_time_names=compiled.deploy_time_names,
        provided_names=provided_names(compiled.environment, images, compiled.code is not None), bundle=compiled.bundle,
        project_root=root, template_bytes=compiled.template_bytes, cost_checks=len(compiled.machine.policy.budgets),
        image_builds=images if isinstance(images, Mapping) else {})


def shards(env: Environment, workloads: list[CompiledWorkload]) -> list[Shard]:
    """The environment's workloads in their stable shards, each with the template size the layout rule checks."""
    groups: dict[int, list[CompiledWorkload]] = {}
    for compiled in workloads:
        groups.setdefault(shard_of(compiled.name, env.workload_shards), []).append(compiled)
    return [Shard(index=index, workloads=tuple(sorted(groups[index], key=lambda c: c.name)),
                  template_bytes=shard_template_bytes(c.template_bytes for c in groups[index]))
            for index in sorted(groups)]


def project_images(project: Project, envs: Mapping[str, Environment]) -> dict[str, ImageBuild]:
    """The images this project builds, checked in every environment's region."""
    return image_builds(project, sorted({e.region for e in envs.values()}))


def compile_project(project: Project, *, directory: Path | None = None, only: Iterable[str] | None = None) -> Compiled:
    """Every workload of the project, checked and compiled for every environment; raises one SpecError with every
    problem (what validate prints and what stops synth).

    `only`: the environments to compile (`cdk synth` of some stages, preflight of one); every spec is still loaded
    and checked against every environment, since its `environments` block and schedule may name any of them.
    """
    envs = project.environments()
    inputs = Findings("")
    rules.check_inputs(InputsView(environments=envs, context=project.context()), inputs)
    problems = list(inputs.problems)
    images: dict[str, ImageBuild] = {}
    try:
        images = project_images(project, envs)
    except SpecError as error:
        problems = error.problems + problems
    if problems:
        raise SpecError(problems)
    loaded = load_workloads(project, envs, directory, images=images)
    compiled = Compiled(project=project, environments=envs, images=images, loaded=loaded)
    bundles = _Bundles(project.root)
    wanted = set(envs) if only is None else set(only)
    for env in (e for e in envs.values() if e.name in wanted):
        results = [compile_workload(w, env, images, bundles) for w in loaded.workloads(env.name)]
        workloads = sorted((result for result, _ in results), key=lambda c: c.name)
        plan = compiled.plans[env.name] = EnvironmentPlan(
            environment=env, workloads=workloads, shards=shards(env, workloads),
            pulled_repositories=tuple(pulled_repositories(c.image for c in workloads)))
        problems += [p for _, found in results for p in found]
        checked = Findings("")
        rules.check_plan(PlanView(env, tuple(_view(c, images, project.root) for c in workloads),
                                  shards={s.index: tuple(c.template_bytes for c in s.workloads) for s in plan.shards}),
                         checked)
        problems += checked.problems
        loaded.warnings.extend(str(w) for w in checked.warnings)
    loaded.warnings.extend(_compiled_warnings(compiled.plans))
    if problems:
        raise SpecError(_once(problems))
    return compiled


def _compiled_warnings(plans: Mapping[str, EnvironmentPlan]) -> list[str]:
    """The compiled rules' warnings, each once: tagged with the environments it holds in, unless it holds in all."""
    where: dict[str, list[str]] = {}
    for env, plan in plans.items():
        for text in dict.fromkeys(w for c in plan.workloads for w in c.warnings):
            where.setdefault(text, []).append(env)
    return [text if len(envs) == len(plans) else f"{text} [environment{'s' if len(envs) > 1 else ''} {', '.join(envs)}]"
            for text, envs in where.items()]


def _once(problems: list[Problem]) -> list[Problem]:
    """Each problem once (a bundle shared by workloads, or one workload in several environments, repeats them)."""
    return list(dict.fromkeys(problems))


def _schedule_problems(project: Project, name_or_path: str, workload: Workload,
                       envs: Mapping[str, Environment]) -> list[Problem]:
    """The project rule on `schedule.environments` for this one workload, so render refuses what validate does."""
    if workload.schedule is None or not workload.schedule.environments:
        return []
    spec = read_spec_file(find_spec(project, name_or_path), project)
    deployed = {name: {workload.name: workload} if spec.deploys_to(env) else {} for name, env in envs.items()}
    findings = Findings("")
    schedules_run_where_the_workload_deploys(ProjectView(envs, {workload.name: workload}, deployed,
                                                         frozenset({workload.name})), findings)
    return findings.problems


def compile_one(project: Project, name_or_path: str, env_name: str) -> CompiledWorkload:
    """One workload (by name or path) compiled for one environment, with the checks that concern it alone."""
    envs = project.environments()
    if env_name not in envs:
        raise SpecError(Problem("", "--env", f"unknown environment '{env_name}'; cdk.json declares "
                                f"{', '.join(envs)}"))
    env = envs[env_name]
    images = project_images(project, {env_name: env})
    workload = load_workload(project, name_or_path, env, images=images)
    result, problems = compile_workload(workload, env, images, _Bundles(project.root))
    problems += _schedule_problems(project, name_or_path, workload, envs)
    if problems:
        raise SpecError(problems)
    return result
