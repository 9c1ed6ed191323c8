"""The distribution strategy's rules (the SDK's `validate_distribution` and the platform's), via the strategies."""

from __future__ import annotations

from compiler.compilation import strategies
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import workload_rule


@workload_rule
def distribution_is_runnable(w: Workload, f: Findings) -> None:
    strategies.check(w, f.problem, f.warn)
