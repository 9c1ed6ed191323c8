"""Where validation rules register: small named functions that report every problem they find.

Six kinds, by what a rule reads (each runs where the pipeline, compiler/pipeline.py, has it):

- an inputs rule: the environments and the cached context, before any spec (`InputsView`);
- a workload rule: one checked `Workload`;
- an environment rule: a workload with the environment it is deployed to (FSx present, buckets allowed, room in the
  network, ...);
- a compiled rule: a workload compiled for one environment: its request, definition and code bundle (`CompiledView`);
- a plan rule: one environment's compiled workloads together (`PlanView`: shard sizes, the budget);
- a project rule: every spec together (`ProjectView`: unique names, where schedules run).

Rules never raise: they add problems and warnings to the `Findings`, so one `validate` run lists everything that
must change.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.views import CompiledView, InputsView, PlanView, ProjectView

InputsRule = Callable[[InputsView, Findings], None]
WorkloadRule = Callable[[Workload, Findings], None]
EnvironmentRule = Callable[[Workload, Environment, Findings], None]
CompiledRule = Callable[[CompiledView, Findings], None]
PlanRule = Callable[[PlanView, Findings], None]
ProjectRule = Callable[[ProjectView, Findings], None]

INPUTS_RULES: list[InputsRule] = []
WORKLOAD_RULES: list[WorkloadRule] = []
ENVIRONMENT_RULES: list[EnvironmentRule] = []
COMPILED_RULES: list[CompiledRule] = []
PLAN_RULES: list[PlanRule] = []
PROJECT_RULES: list[ProjectRule] = []


def inputs_rule(rule: InputsRule) -> InputsRule:
    INPUTS_RULES.append(rule)
    return rule


def workload_rule(rule: WorkloadRule) -> WorkloadRule:
    WORKLOAD_RULES.append(rule)
    return rule


def environment_rule(rule: EnvironmentRule) -> EnvironmentRule:
    ENVIRONMENT_RULES.append(rule)
    return rule


def compiled_rule(rule: CompiledRule) -> CompiledRule:
    COMPILED_RULES.append(rule)
    return rule


def plan_rule(rule: PlanRule) -> PlanRule:
    PLAN_RULES.append(rule)
    return rule


def project_rule(rule: ProjectRule) -> ProjectRule:
    PROJECT_RULES.append(rule)
    return rule

ALL_RULES = (INPUTS_RULES, WORKLOAD_RULES, ENVIRONMENT_RULES, COMPILED_RULES, PLAN_RULES, PROJECT_RULES)
