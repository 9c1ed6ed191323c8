"""Intrinsic functions only where, and as deep as, Step Functions accepts them.

The definitions compute run ids, job names, backoff waits and the run's summary with intrinsic functions; a function
Step Functions does not have, one nested too deep or one in a field that takes none fails CreateStateMachine, while
moto and asl-validator may accept it. The rules are those of the Step Functions developer guide, "Intrinsic functions
for JSONPath states in Step Functions" (the functions, the fields, at most 10 nested) and "Fail workflow state"
(the functions CausePath and ErrorPath may use).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from compiler.errors import Problem
from compiler.state_machine.asl import all_states

FUNCTIONS = frozenset({
    "States.Array", "States.ArrayPartition", "States.ArrayContains", "States.ArrayRange", "States.ArrayGetItem",
    "States.ArrayLength", "States.ArrayUnique", "States.Base64Encode", "States.Base64Decode", "States.Hash",
    "States.JsonMerge", "States.StringToJson", "States.JsonToString", "States.MathRandom", "States.MathAdd",
    "States.StringSplit", "States.UUID", "States.Format",
})
FAIL_PATH_FUNCTIONS = frozenset({"States.Format", "States.JsonToString", "States.ArrayGetItem", "States.Base64Encode",
                                 "States.Base64Decode", "States.Hash", "States.UUID"})
MAX_NESTING = 10
# The fields that take intrinsic functions, per state type.
FIELDS: Mapping[str, tuple[str, ...]] = {
    "Pass": ("Parameters",), "Task": ("Parameters", "ResultSelector", "Credentials"),
    "Parallel": ("Parameters", "ResultSelector"), "Map": ("Parameters", "ResultSelector", "ItemSelector"),
}
# A quoted literal (skipped; `\` escapes the next character), a function name before its `(`, or a parenthesis.
_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|(States\.[A-Za-z0-9]+)(?=\s*\()|([()])")


def calls(expression: str) -> tuple[list[str], int]:
    """The function names called in an expression (outermost first) and the deepest nesting; quoted text skipped."""
    names: list[str] = []
    depth = deepest = 0
    for match in _TOKEN.finditer(expression):
        name, paren = match.groups()
        if name:
            names.append(name)
        elif paren == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif paren == ")":
            depth -= 1
    return names, deepest


def _expression_problems(expression: str, allowed: frozenset[str]) -> Iterator[str]:
    names, deepest = calls(expression)
    for name in names:
        if name not in FUNCTIONS:
            yield f"{name} is not an intrinsic function of Step Functions"
        elif name not in allowed:
            yield f"{name} is not allowed here; allowed: {', '.join(sorted(allowed))}"
    if deepest > MAX_NESTING:
        yield f"{deepest} intrinsic functions nested; Step Functions allows at most {MAX_NESTING}"


def _calls(value: Any, path: str, holds: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """(path, expression) for every field named so that `holds(key)` whose text calls an intrinsic function."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if holds(key) and isinstance(item, str) and item.lstrip().startswith("States."):
                yield where, item
            else:
                yield from _calls(item, where, holds)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _calls(item, f"{path}[{index}]", holds)


def _takes_intrinsics(key: str) -> bool:
    return key.endswith(".$")  # `Key.$` in Parameters, ResultSelector, ...


def _reference_path(key: str) -> bool:
    return key == "Variable" or key.endswith("Path")  # a Choice rule's Variable, InputPath, CausePath, ...


def _state_problems(state: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, message) for each intrinsic function the state may not use."""
    fields = FIELDS.get(state.get("Type", ""), ())
    for field in fields:
        for where, expression in _calls(state.get(field), field, _takes_intrinsics):
            for message in _expression_problems(expression, FUNCTIONS):
                yield where, message
    rest = {k: v for k, v in state.items() if k not in fields}
    for where, expression in _calls(rest, "", _reference_path):
        if state.get("Type") == "Fail" and where in ("CausePath", "ErrorPath"):
            for message in _expression_problems(expression, FAIL_PATH_FUNCTIONS):
                yield where, message
        else:
            yield where, "this field takes a reference path, not an intrinsic function; compute the value in a Pass state"


def definition_problems(definition: Mapping[str, Any], source: str = "") -> list[Problem]:
    """Every intrinsic function CreateStateMachine would refuse, with the state and field that hold it."""
    return [Problem(source, f"state machine: state {name!r}: {field}", message)
            for name, state in all_states(definition) for field, message in _state_problems(state)]
