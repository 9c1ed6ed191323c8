"""The schedule's rules: its input is checked as a console start's, overlapping runs are pointed out, it names only
environments the workload deploys to, and the runs it may start are held against the environment's monthly budget."""

from __future__ import annotations

from datetime import date

from compiler.compilation import schedules
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import plan_rule, project_rule, workload_rule
from compiler.rules.views import PlanView, ProjectView


@workload_rule
def schedule_fits_the_workload(w: Workload, f: Findings) -> None:
    schedules.check(w, f, date.today())


@project_rule
def schedules_run_where_the_workload_deploys(view: ProjectView, f: Findings) -> None:
    f.problems.extend(schedules.environment_problems(view.base, view.by_environment))


@plan_rule
def schedules_fit_the_monthly_budget(view: PlanView, f: Findings) -> None:
    f.warnings.extend(schedules.budget_warnings(view.environment, [c.workload for c in view.workloads], date.today()))
