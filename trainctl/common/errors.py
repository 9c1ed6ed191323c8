"""The one way a command reports a problem with the user's input or account: a message, exit status 1."""

from __future__ import annotations

from compiler.errors import Problem, SpecError


def problem(message: str) -> SpecError:
    """A message for the user (exit 1); the CLI prints it without a traceback."""
    return SpecError(Problem("", "", message))
