"""The schedule's rules: its input is checked as a console start's, and overlapping runs are pointed out."""

from __future__ import annotations

from datetime import date

from compiler.compilation import schedules
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import workload_rule


@workload_rule
def schedule_fits_the_workload(w: Workload, f: Findings) -> None:
    schedules.check(w, f, date.today())
