"""The rows `trainctl preflight` and `trainctl smoke` print: one verdict per check, and the Markdown table of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compiler.errors import printable

PASS, FAIL, SKIP = "pass", "fail", "skip"


@dataclass(frozen=True)
class Result:
    """One row of the table: which check, its verdict, and what was found or what to do."""

    check: str
    status: str  # PASS, FAIL or SKIP
    detail: str


def table(rows: Sequence[Result]) -> str:
    """The Markdown table (a `|` in a detail is escaped and a newline a space, so each row stays one row; a detail may
    quote what a job wrote, so its control characters are escaped too)."""
    lines = ["| Check | Result | Detail / fix |", "| --- | --- | --- |"]
    for row in rows:
        detail = printable(row.detail.replace("|", "\\|").replace("\n", " "), keep_layout=False)
        lines.append(f"| {row.check} | {row.status.upper()} | {detail} |")
    return "\n".join(lines)


def counts(rows: Sequence[Result]) -> str:
    """`12 pass, 1 fail, 0 skip`: the one-line tally both commands print on standard error."""
    return ", ".join(f"{sum(1 for r in rows if r.status == s)} {s}" for s in (PASS, FAIL, SKIP))
