"""Dollar amounts as the commands print them: one formatter, so a cost reads the same wherever it appears.

Each place keeps its own long-standing form (the tests pin them): the summary and review tables print amounts without
the sign (`1,234.50`, their column headers say `$`), the schedules and budget with it (`$1,234.50`), a run's cost
without grouping (`$1234.50`), the smoke test's cost to a hundredth of a cent (`$0.0123`) and its price per hour as
short as it goes (`$1.515`).
"""

from __future__ import annotations


def money(value: float | None, *, sign: bool = True, grouped: bool = True, places: int | None = 2,
          missing: str = "n/a") -> str:
    """`value` in dollars: `sign` prefixes `$`, `grouped` separates thousands, `places` decimals (None: as short as
    the value allows); `missing` stands for no value (a type without a verified price)."""
    if value is None:
        return missing
    spec = ("," if grouped else "") + (f".{places}f" if places is not None else "g")
    return f"{'$' if sign else ''}{value:{spec}}"
