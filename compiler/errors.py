"""Errors that carry a message a person can act on: where, which field, and what to change; warnings about the
user's project (`ProjectWarning`); and the one way text people or jobs wrote is printed (`printable`)."""

from __future__ import annotations

import contextlib
import re
import sys
import unicodedata
import warnings
from dataclasses import dataclass
from typing import TextIO


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a spec or an environment."""

    source: str
    field: str
    message: str

    def __str__(self) -> str:
        """As printed: it quotes what people wrote (another team's cdk.json too), so its controls are shown, not
        obeyed (`printable`)."""
        where = f"{self.source}: " if self.source else ""
        field = f"{self.field}: " if self.field else ""
        return printable(f"{where}{field}{self.message}")


WARNING_PREFIX = "warning: "  # how validate, synth and every trainctl command print a warning, one line each


def warning_line(message: object) -> str:
    """A warning as printed: `warning: <text>`, its controls shown (`printable`)."""
    return printable(f"{WARNING_PREFIX}{message}")


class ProjectWarning(UserWarning):
    """A warning about the user's project, raised where it is found (deep in a scan) with `warnings.warn`.

    `show_project_warnings` prints it as `warning: <text>`, as validate and synth print the compiled rules' warnings:
    Python's own form names a file and line of this code and quotes its source, which tell a user nothing.
    """


def _show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: TextIO | None = None,
          line: str | None = None) -> None:
    """`warnings.showwarning` as Python's own, but a ProjectWarning in the project's form."""
    text = (warning_line(message) + "\n" if issubclass(category, ProjectWarning)
            else warnings.formatwarning(message, category, filename, lineno, line))
    with contextlib.suppress(OSError):  # standard error went away: as Python's own
        (file or sys.stderr).write(text)


def show_project_warnings() -> None:
    """From now on, print each ProjectWarning as `warning: <text>` on standard error, every other warning as Python
    does (trainctl and the CDK app call this first)."""
    warnings.showwarning = _show


class SpecError(ValueError):
    """A workload spec or environment setting that cannot be deployed as written.

    Carries every problem found, so one run of `validate` lists them all.
    """

    def __init__(self, problems: list[Problem] | Problem):
        self.problems: list[Problem] = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


# ------------------------------------------------------------------------------------------ printing
# Text people or jobs wrote, made safe to print on a terminal: its control characters shown, never obeyed.
#
# A problem quotes what a spec or cdk.json says (another team's pull request among them); a training job's log lines,
# its FailureReason and what its state machine carries from them are written by the job's code, which may be another
# team's or hostile. Printed as they are, an escape sequence in them could recolour, move the cursor, rewrite lines
# already shown (a carriage return, ECMA-48's CSI and OSC sequences), set the window title or, on some terminals, do
# worse (CWE-150; kubectl's CVE-2021-25743 and its fix, kubernetes/kubernetes#112553, which also escapes a carriage
# return). So each is printed through `printable`: each character in Unicode's categories Cc (the C0 and C1 controls,
# DEL: ESC and CSI start every escape sequence), Cf (format characters, the bidirectional overrides of "Trojan
# Source", CVE-2021-42574, among them), Cs (a lone surrogate, which would fail the write) and Zl/Zp (line and paragraph
# separators) is written as Python's repr writes it (\x1b, \r, \u202e), except newline and tab where `keep_layout`
# (multi-line text stays readable). A backslash is left as is: the text may show a literal \x1b too, which is harmless.

_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Every character that might need escaping: anything but printable ASCII (and newline and tab, checked below).
_MAYBE = re.compile(r"[^\x20-\x7e]")


def _escaped(ch: str, keep_layout: bool) -> str:
    if keep_layout and ch in "\n\t":
        return ch
    if unicodedata.category(ch) in _ESCAPED_CATEGORIES:
        return repr(ch)[1:-1]
    return ch


def printable(text: str, *, keep_layout: bool = True) -> str:
    """`text` with every control, format and separator character escaped as repr writes it (newline and tab kept
    with `keep_layout`); plain ASCII text comes back as it is."""
    if not _MAYBE.search(text):
        return text
    return _MAYBE.sub(lambda m: _escaped(m.group(0), keep_layout), text)
