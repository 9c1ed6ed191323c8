"""Errors that carry a message a person can act on: where, which field, and what to change."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a spec or an environment."""

    source: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.message}"


class SpecError(ValueError):
    """A workload spec or environment setting that cannot be deployed as written.

    Carries every problem found, so one run of `validate` lists them all.
    """

    def __init__(self, problems: list[Problem] | Problem):
        self.problems: list[Problem] = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))
