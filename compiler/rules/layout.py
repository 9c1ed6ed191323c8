"""Every workload stack stays under CloudFormation's template limit (compiler/compilation/stack_layout.py).

A workload too large with nothing else in its stack is refused by itself, naming what grows it; a shard too large
with its workloads together names the environment's workload_shards setting to raise.
"""

from __future__ import annotations

from compiler.compilation.stack_layout import alone_problem, layout_problems, too_large_alone
from compiler.inputs.reader import Findings
from compiler.rules.registry import compiled_rule, plan_rule
from compiler.rules.views import CompiledView, PlanView


@compiled_rule
def the_workload_fits_a_stack_alone(view: CompiledView, f: Findings) -> None:
    alone = too_large_alone(view.template_bytes)
    if alone is not None:
        f.problems.append(alone_problem(view.workload.source, view.environment, alone, view.cost_checks))


@plan_rule
def every_shard_fits_its_template(view: PlanView, f: Findings) -> None:
    f.problems.extend(layout_problems(view.environment, view.shards))
