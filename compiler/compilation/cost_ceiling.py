"""A run's cost ceiling (`max_run_cost_usd`) as seconds of run time, so the state machine needs no multiplication.

Amazon States Language (JSONPath) can add (`States.MathAdd`) but not multiply, so the money a run may spend is turned
into time at synth: with `c` instances, the run may train `budget(c) = floor(ceiling x 3600 / (c x highest price))`
seconds in all, where the highest price is the highest list price per instance-hour among the instance type and
every fallback type (list prices of the region the workload is compiled for). Then:

- a start is refused (`InvalidInput`) when its `max_run` exceeds `budget(count)`: the worst case of one attempt,
  max_run x count x highest price, would exceed the ceiling;
- every attempt gets `min(max_run, budget left)` as `MaxRuntimeInSeconds`, and its `BillableTimeInSeconds` are taken
  from what is left; a relaunch with nothing left ends the run (`CostCeilingReached`).

Why that bounds the money: an attempt on any type costs at most its billable seconds x count x highest price, and the
billable seconds of all attempts add up to at most `budget(count)`, so the total is at most the ceiling. A cheaper
fallback type is charged at the highest price: the bound errs on the side of spending less.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

from compiler.facts import catalog
from compiler.inputs.model import Workload


def price(instance_type: str, region: str) -> Fraction | None:
    """USD per instance-hour from the region's price table, exactly as written there; None when not verified."""
    each = catalog.price(instance_type, region)
    return None if each is None else Fraction(repr(each))


def unpriced(workload: Workload, region: str) -> list[str]:
    """The instance types of the workload without a verified price in the region (no ceiling can be enforced)."""
    return [t for t in workload.launch_types if price(t, region) is None]


def cluster_rate(workload: Workload, count: int, region: str) -> Fraction:
    """USD per hour of the most expensive cluster a run with `count` instances can run on (all types priced)."""
    if workload.compute.instance_groups:
        return sum((price(g.instance_type, region) or Fraction(0)) * g.instance_count
                   for g in workload.compute.instance_groups) or Fraction(0)
    return max(price(t, region) or Fraction(0) for t in workload.launch_types) * count


def budget_seconds(ceiling: float, rate: Fraction) -> int:
    """Whole seconds the ceiling buys at `rate` USD per hour (rounded down: never a second more)."""
    return math.floor(Fraction(repr(ceiling)) * 3600 / rate)


def counts(workload: Workload) -> Iterable[int]:
    """The instance counts a run may ask for."""
    if workload.compute.instance_groups:
        return (workload.instance_count,)
    return range(1, workload.instance_count_ceiling + 1)


def budgets(workload: Workload, ceiling: float, region: str) -> dict[int, int]:
    """Seconds of run time the ceiling buys, per instance count a run may ask for."""
    return {c: budget_seconds(ceiling, cluster_rate(workload, c, region)) for c in counts(workload)}


def worst_case(workload: Workload, region: str, count: int | None = None, max_run: int | None = None) -> Fraction:
    """USD of one attempt at the highest price: max_run x count x price (the spec's own values by default)."""
    count = workload.instance_count if count is None else count
    seconds = workload.max_run if max_run is None else max_run
    return cluster_rate(workload, count, region) * seconds / 3600
