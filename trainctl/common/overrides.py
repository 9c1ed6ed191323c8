"""`-p NAME=VALUE` on the command line, read one way for `trainctl start` and `trainctl run-local`: text where the
spec's value is a string, else JSON (kept as text when it is not JSON), each name once."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from trainctl.common.errors import problem

MAX_NESTING = 100  # lists and objects in a -p value; Python's JSON reader and writer fail near 1,000 levels


def parse_value(text: str, expected: str | None, name: str = "NAME") -> Any:
    """A `-p` value: text where the spec's value is a string, else JSON (kept as text when it is not JSON)."""
    if expected == "string":
        return text
    too_deep = problem(f"-p {name}: the value is nested more than {MAX_NESTING} levels deep; pass such a value as a "
                       "file in an input channel")
    try:
        value = json.loads(text)
    except RecursionError:
        raise too_deep from None
    except ValueError:
        return text
    if _nesting(value) > MAX_NESTING:
        raise too_deep
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
