"""The schedule's rules: its input is checked as a console start's, overlapping runs are pointed out, it names only
environments the workload deploys to, and the runs it may start are held against the environment's monthly budget."""

from __future__ import annotations

from datetime import date

from compiler.compilation import schedules
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import environment_rule, plan_rule, project_rule, workload_rule
from compiler.rules.views import PlanView, ProjectView


@environment_rule
def schedule_input_is_a_start_the_workload_takes(w: Workload, env: Environment, f: Findings) -> None:
    schedules.input_problems(w, env, f)


@workload_rule
def scheduled_runs_do_not_pile_up(w: Workload, f: Findings) -> None:
    schedules.overlap_warnings(w, f, date.today())


@project_rule
def schedules_run_where_the_workload_deploys(view: ProjectView, f: Findings) -> None:
    f.problems.extend(schedules.environment_problems(view.base, view.by_environment))


@plan_rule
def schedules_fit_the_monthly_budget(view: PlanView, f: Findings) -> None:
    f.warnings.extend(schedules.budget_warnings(view.environment, [c.workload for c in view.workloads], date.today()))
