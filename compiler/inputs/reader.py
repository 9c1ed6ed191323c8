"""Typed reads from a hand-written mapping (a workload spec, an environment), collecting every problem.

Specs are written by people and reviewed in pull requests, so one run must list every problem at once, each
naming the field and the fix. A `Reader` wraps one mapping: each accessor returns a typed value (or None) and
records a `Problem` instead of raising, so parsing goes on to the next field.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, overload

from compiler.errors import Problem
from compiler.sdk import service_model


@dataclass
class Findings:
    """Problems (they stop validate and synth) and warnings (printed) of one source."""

    source: str
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def problem(self, where: str, message: str) -> None:
        self.problems.append(Problem(self.source, where, message))

    def warn(self, where: str, message: str) -> None:
        self.warnings.append(Problem(self.source, where, message))


def describe(value: Any) -> str:
    """A value as a reader would want it quoted back: short, and with its YAML type when that is the surprise."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    kind = {bool: "true/false", int: "a number", float: "a number", str: "text", list: "a list",
            dict: "a mapping", type(None): "empty"}.get(type(value), type(value).__name__)
    return f"{text} ({kind})"


def suggest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The closest known name to a typo, or None."""
    close = difflib.get_close_matches(str(word), sorted(set(choices)), n=1, cutoff=cutoff)
    return close[0] if close else None


class Reader:
    """Reads fields of one mapping; `prefix` makes nested fields report as `parent.child`."""

    def __init__(self, raw: Mapping[str, Any], findings: Findings, prefix: str = "") -> None:
        self.raw = raw
        self.findings = findings
        self.prefix = prefix

    def where(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def problem(self, key: str, message: str) -> None:
        self.findings.problem(self.where(key), message)

    def warn(self, key: str, message: str) -> None:
        self.findings.warn(self.where(key), message)

    def has(self, key: str) -> bool:
        return key in self.raw and self.raw[key] is not None

    def get(self, key: str, default: Any = None) -> Any:
        value = self.raw.get(key, default)
        return default if value is None else value

    def child(self, key: str) -> Reader | None:
        """A reader over a nested mapping, or None (with a problem) when the value is not a mapping."""
        value = self.raw.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.problem(key, f"must be a mapping, not {describe(value)}")
            return None
        return Reader(value, self.findings, prefix=f"{self.where(key)}.")

    def shaped(self, key: str, value: Any, shape: str) -> bool:
        """Whether a value the request carries as written passes SageMaker's shape for it; each problem is reported."""
        problems = service_model.validate_shape(value, shape)
        for line in problems:
            detail = line.removeprefix("(request): ").lstrip(".")
            one_line = " (write it on one line)" if line.endswith(("pattern .*", "pattern .+")) else ""
            self.problem(key, f"{detail}{one_line}; SageMaker's {shape} shape refuses it")
        return not problems

    def unknown_keys(self, known: Iterable[str], hint: str = "") -> None:
        known = set(known)
        for key in self.raw:
            if key in known:
                continue
            close = suggest(str(key), known)
            text = f"unknown key; did you mean '{close}'?" if close else f"unknown key{hint}"
            self.problem(str(key), text)

    # With a default, an accessor never returns None (a refused value is a problem already recorded, and the default
    # stands in so the rest can still be checked): the overloads say so, so a caller states its default once.
    @overload
    def integer(self, key: str, *, low: int | None = None, high: int | None = None, default: int,
                required: bool = False, unit: str = "") -> int: ...
    @overload
    def integer(self, key: str, *, low: int | None = None, high: int | None = None, default: None = None,
                required: bool = False, unit: str = "") -> int | None: ...
    def integer(self, key: str, *, low: int | None = None, high: int | None = None, default: int | None = None,
                required: bool = False, unit: str = "") -> int | None:
        value = self.raw.get(key)
        if value is None:
            if required:
                self.problem(key, "is required")
            return default
        span = _span(low, high, unit)
        if isinstance(value, bool) or not isinstance(value, int):
            whole = isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 2**53
            hint = f" (write {int(value)})" if whole else ""
            self.problem(key, f"must be a whole number{span}, not {describe(value)}{hint}")
            return default
        if (low is not None and value < low) or (high is not None and value > high):
            self.problem(key, f"must be{span or ' in range'}, not {value}")
            return default
        return value

    @overload
    def number(self, key: str, *, low: float, high: float, default: float) -> float: ...
    @overload
    def number(self, key: str, *, low: float, high: float, default: None = None) -> float | None: ...
    def number(self, key: str, *, low: float, high: float, default: float | None = None) -> float | None:
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.problem(key, f"must be a number from {low} to {high}, not {describe(value)}")
            return default
        if not low <= value <= high:
            self.problem(key, f"must be a number from {low} to {high}, not {value}")
            return default
        return float(value)

    @overload
    def boolean(self, key: str, default: bool) -> bool: ...
    @overload
    def boolean(self, key: str, default: None = None) -> bool | None: ...
    def boolean(self, key: str, default: bool | None = None) -> bool | None:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problem(key, f"must be true or false, not {describe(value)}")
            return default
        return value

    @overload
    def string(self, key: str, *, required: bool = False, pattern: str | re.Pattern[str] | None = None,
               max_length: int | None = None, choices: Iterable[str] | None = None, explain: str = "",
               default: str) -> str: ...
    @overload
    def string(self, key: str, *, required: bool = False, pattern: str | re.Pattern[str] | None = None,
               max_length: int | None = None, choices: Iterable[str] | None = None, explain: str = "",
               default: None = None) -> str | None: ...
    def string(self, key: str, *, required: bool = False, pattern: str | re.Pattern[str] | None = None,
               max_length: int | None = None, choices: Iterable[str] | None = None, explain: str = "",
               default: str | None = None) -> str | None:
        value = self.raw.get(key)
        if value is None:
            if required:
                self.problem(key, "is required" + (f": {explain}" if explain else ""))
            return default
        if not isinstance(value, str) or not value.strip():
            self.problem(key, f"must be non-empty text, not {describe(value)}" + (f"; {explain}" if explain else ""))
            return default
        if max_length is not None and len(value) > max_length:
            self.problem(key, f"is {len(value)} characters; at most {max_length}")
            return default
        if choices is not None:
            allowed = list(choices)
            if value not in allowed:
                close = suggest(value, allowed)
                hint = f"did you mean '{close}'? " if close else ""
                self.problem(key, f"{value!r} is not allowed; {hint}use one of {', '.join(allowed)}")
                return default
        if pattern is not None and not re.fullmatch(pattern, value):
            self.problem(key, explain or f"{value!r} does not have the expected form")
            return default
        return value

    def strings(self, key: str, *, min_items: int = 0, max_items: int | None = None,
                item_max_length: int | None = None, explain: str = "") -> tuple[str, ...] | None:
        """A list of non-empty strings (or None when absent)."""
        value = self.raw.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.problem(key, f"must be a list of non-empty text items, not {describe(value)}"
                         + (f"; {explain}" if explain else ""))
            return None
        if len(value) < min_items:
            self.problem(key, f"needs at least {min_items} item{'s' if min_items > 1 else ''} (or leave it out)")
            return None
        if max_items is not None and len(value) > max_items:
            self.problem(key, f"has {len(value)} items; at most {max_items}")
            return None
        if item_max_length is not None and any(len(v) > item_max_length for v in value):
            self.problem(key, f"items are at most {item_max_length} characters")
            return None
        return tuple(value)


def _span(low: int | None, high: int | None, unit: str) -> str:
    unit = f" {unit}" if unit else ""
    if low is not None and high is not None:
        return f" from {low} to {high}{unit}"
    if low is not None:
        return f" of at least {low}{unit}"
    if high is not None:
        return f" of at most {high}{unit}"
    return ""
