"""The schedule's rules: its input is checked as a console start's, and overlapping runs are pointed out."""

from __future__ import annotations

from datetime import date

from compiler import schedules
from compiler.model import Workload
from compiler.reader import Findings
from compiler.rules.registry import workload_rule


@workload_rule
def schedule_fits_the_workload(w: Workload, f: Findings) -> None:
    schedules.check(w, f, date.today())
