"""Small pieces of Amazon States Language (JSONPath) used across the definition: paths, literals, intrinsics."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from compiler.errors import Problem, SpecError
from compiler.facts import placeholders as ph

INVALID_INPUT = "InvalidInput"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def literal(text: str) -> str:
    """A string literal inside an intrinsic function: quote it and escape the reserved characters."""
    return "'" + re.sub(r"([\\'{}])", r"\\\1", text) + "'"


def format_call(template: str, *paths: str) -> str:
    """`States.Format(...)` of a template whose `{}` take `paths` in turn; every other character is escaped."""
    pieces = template.split("{}")
    if len(pieces) != len(paths) + 1:
        raise ValueError(f"{template!r} has {len(pieces) - 1} placeholders for {len(paths)} values")
    text = "{}".join(literal(piece)[1:-1] for piece in pieces)
    return f"States.Format('{text}'{''.join(', ' + p for p in paths)})"


def member(base: str, key: str) -> str:
    """A reference path to an object member: dot notation where it parses, bracket notation otherwise.

    Hyperparameter names never hold quotes, backslashes or brackets (the spec refuses them), so bracket notation,
    which has no escapes, always addresses them.
    """
    if _IDENTIFIER.match(key):
        return f"{base}.{key}"
    return f"{base}['{key}']"


def fail(cause: str) -> dict[str, Any]:
    return {"Type": "Fail", "Error": INVALID_INPUT, "Cause": cause}


def integer_parts(path: str) -> str:
    """Count of the pieces of a number's JSON text split at '.', 'e', 'E': 1 exactly when it is an integer."""
    return f"States.ArrayLength(States.StringSplit(States.JsonToString({path}), '.eE'))"


def run_time_format(text: str) -> str | None:
    """`States.Format(...)` for a string holding run-time placeholders; None when it holds none.

    Deploy-time placeholders in the same string become literal arguments, so Step Functions' textual substitution
    still finds `${Name}` unescaped (an escaped `$\\{Name\\}` would never be substituted).
    """
    parts = ph.PLACEHOLDER.split(text)  # text, name, text, name, ...
    if not any(n in ph.RUN_TIME for n in parts[1::2]):
        return None
    template = ""
    args: list[str] = []
    for i, piece in enumerate(parts):
        if i % 2 == 0:
            template += re.sub(r"([\\'{}])", r"\\\1", piece)
            continue
        template += "{}"
        args.append({ph.RUN_ID: "$.run.id", ph.ATTEMPT: "$.run.attempt"}.get(piece, "'" + ph.ref(piece) + "'"))
    return f"States.Format('{template}', {', '.join(args)})"


def with_run_time(value: Any, where: str) -> Any:
    """Copy of a request part where strings with run-time placeholders become `Key.$` intrinsic calls."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(item, str) and (expr := run_time_format(item)) is not None:
                out[key + ".$"] = expr
            else:
                out[key] = with_run_time(item, f"{where}.{key}")
        return out
    if isinstance(value, list):
        result = []
        for i, item in enumerate(value):
            if isinstance(item, str) and run_time_format(item) is not None:
                raise SpecError(Problem("", f"{where}[{i}]", "a run-time value cannot sit directly in a list"))
            result.append(with_run_time(item, f"{where}[{i}]"))
        return result
    return value


def all_states(definition: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every state with its name (`Outer/inner` inside Parallel branches and Map processors), for the checks that
    read each state of a definition."""
    for name, state in definition.get("States", {}).items():
        yield prefix + name, state
        for branch in state.get("Branches", []):
            yield from all_states(branch, f"{prefix}{name}/")
        for key in ("Iterator", "ItemProcessor"):
            if key in state:
                yield from all_states(state[key], f"{prefix}{name}/")


def json_objects(node: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in a definition (or any parsed JSON), depth first: states, parameters, choice rules."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from json_objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from json_objects(value)
