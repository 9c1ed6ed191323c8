"""Dollar amounts as the commands print them: one formatter, so a cost reads the same wherever it appears.

Each place keeps its own long-standing form (the tests pin them): the summary and review tables print amounts without
the sign (`1,234.50`, their column headers say `$`), the schedules and budget with it (`$1,234.50`), a run's cost
without grouping (`$1234.50`), the smoke test's cost to a hundredth of a cent (`$0.0123`) and its price per hour as
short as it goes (`$1.515`).
"""

from __future__ import annotations

from compiler.facts.summaries import WorkloadSummary


def money(value: float | None, *, sign: bool = True, grouped: bool = True, places: int | None = 2,
          missing: str = "n/a") -> str:
    """`value` in dollars: `sign` prefixes `$`, `grouped` separates thousands, `places` decimals (None: as short as
    the value allows); `missing` stands for no value (a type without a verified price)."""
    if value is None:
        return missing
    spec = ("," if grouped else "") + (f".{places}f" if places is not None else "g")
    return f"{'$' if sign else ''}{value:{spec}}"


# SageMaker bills managed spot training below the on-demand rate ("Managed Spot Training in Amazon SageMaker AI": up to
# 90% less), at a rate no offline price source gives: a spot workload's hour is shown as that ceiling, labelled so.
SPOT_NOTE = ("Spot workloads show the on-demand list price as the most an hour costs (managed spot training bills "
             "less, at a rate no offline price source gives).")


def spot_ceiling(amount: str, *, spot: bool) -> str:
    """An amount at on-demand list prices as the tables print it: as it is, or for a spot workload `≤ 1.52 spot
    (on-demand ceiling)`; `n/a` stays as it is."""
    return f"≤ {amount} spot (on-demand ceiling)" if spot and amount != "n/a" else amount


def hourly(value: float | None, *, spot: bool) -> str:
    """A cluster's price per hour in the summary and review tables (no sign: their headers say `$/hour`)."""
    return spot_ceiling(money(value, sign=False), spot=spot)


def hourly_cell(summary: WorkloadSummary) -> str:
    """A workload's cost per hour, then each fallback type's (a capacity relaunch may run on any of them): `n/a` for
    a type without a verified price, whose figure the template's metadata leaves out."""
    spot, costs = bool(summary.spot), summary.fallback_cost_per_hour_usd or {}
    types = summary.fallback_instance_types or list(costs)
    return hourly(summary.cost_per_hour_usd, spot=spot) + "".join(
        f"<br>fallback {t}: {hourly(costs.get(t), spot=spot)}" for t in types)
