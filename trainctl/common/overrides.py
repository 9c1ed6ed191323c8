"""`-p NAME=VALUE` on the command line, read one way for `trainctl start` and `trainctl run-local`: text where the
spec's value is a string, else JSON (kept as text when it is not JSON), each name once.

JSON as RFC 8259 writes it, not Python's reading of it: `NaN` and `Infinity` are not JSON (kept as text, as any
other word), and a number too large for a double (`1e999`, which Python reads as infinity) is refused: no JSON
reader could take the execution input it would make."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from compiler.errors import SpecError
from trainctl.common.errors import problem

MAX_NESTING = 100  # lists and objects in a -p value; Python's JSON reader and writer fail near 1,000 levels


def parse_value(text: str, expected: str | None, name: str = "NAME") -> Any:
    """A `-p` value: text where the spec's value is a string, else JSON (kept as text when it is not JSON)."""
    if expected == "string":
        return text
    too_deep = problem(f"-p {name}: the value is nested more than {MAX_NESTING} levels deep; pass such a value as a "
                       "file in an input channel")
    try:
        value = json.loads(text, parse_constant=_not_json, parse_float=lambda number: _finite(number, name))
    except RecursionError:
        raise too_deep from None
    except SpecError:
        raise  # a number too large (_finite)
    except ValueError:
        return text
    if _nesting(value) > MAX_NESTING:
        raise too_deep
    return value


def _not_json(constant: str) -> None:
    """Python's JSON reader takes NaN, Infinity and -Infinity; JSON has no such words."""
    raise ValueError(f"{constant} is not JSON")


def _finite(number: str, name: str) -> float:
    value = float(number)
    if not math.isfinite(value):
        raise problem(f"-p {name}: {number} is beyond a 64-bit floating-point number's range (about ±1.8e308), "
                      "which Python reads as infinity and JSON cannot carry; give a number within it")
    return value


def _nesting(value: Any) -> int:
    """How many lists and objects deep a JSON value goes, counted without recursion."""
    deepest, level = 0, [(value, 0)]
    while level:
        item, depth = level.pop()
        if isinstance(item, list | dict):
            deepest = max(deepest, depth + 1)
            if deepest > MAX_NESTING:
                return deepest
            level.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_hyperparameters(items: list[str], expected: Mapping[str, str], option: str = "-p",
                          metavar: str = "NAME=VALUE") -> dict[str, Any]:
    """The `-p` values by name; `expected` holds the JSON type of each spec value (compiler.compilation.overrides);
    `option` and `metavar` as the command's help names them, for its messages."""
    hyperparameters: dict[str, Any] = {}
    for item in items:
        name, equals, text = item.partition("=")
        if not equals or not name:
            raise problem(f"{option} {item!r}: write {metavar}, e.g. {option} learning_rate=0.0003")
        if name in hyperparameters:
            raise problem(f"{option} {name}: given twice")
        hyperparameters[name] = parse_value(text, expected.get(name), name)
    return hyperparameters
