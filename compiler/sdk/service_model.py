"""Validate a SageMaker API request (or response) against botocore's service model, completely.

botocore's own `ParamValidator` checks required and unknown keys, types and minimums, but not the
`max` lengths/counts/values, `pattern`s or `enum`s that the service enforces (../shared/FACTS.md
section 5). A request that passes botocore can still be refused by SageMaker, and through Step Functions
that refusal only shows up when a training run starts. This module runs botocore's validator and then
walks the same shape tree checking what it skips, so such mistakes fail at synth/test time instead.

Patterns in the model are written in Java regex syntax (the service's validator) and are applied as a
full match. They are translated for the `regex` package (Python's `re` has no `\\p{L}`):
`\\d \\w \\s` and their negations are ASCII-only, `.` excludes Java's line terminators, `\\p{Alnum}`
is ASCII, and `\\uD800\\uDC00`-style surrogate pairs become code points.

Pure: botocore and regex only, no CDK and no SageMaker SDK, so the compiler may call it at synth time.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Mapping
from typing import Any

import regex
from botocore.model import OperationModel, ServiceModel, Shape
from botocore.validate import ParamValidator

from compiler.errors import Problem, SpecError

SERVICE = "sagemaker"

# Java's predefined classes are ASCII-only unless UNICODE_CHARACTER_CLASS is set; nested sets are
# unions in regex's V1 mode, so the same text works inside and outside a character class.
_JAVA_ESCAPES = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[a-zA-Z0-9_]",
    "W": "[^a-zA-Z0-9_]",
    "s": "[ \\t\\n\\x0B\\f\\r]",
    "S": "[^ \\t\\n\\x0B\\f\\r]",
}
_JAVA_POSIX = {
    "Alnum": "[a-zA-Z0-9]",
    "Alpha": "[a-zA-Z]",
    "Digit": "[0-9]",
    "Lower": "[a-z]",
    "Upper": "[A-Z]",
    "XDigit": "[0-9a-fA-F]",
}
_JAVA_DOT = "[^\\n\\r\\x85\\u2028\\u2029]"  # Java's `.` without DOTALL stops at every line terminator
_HEX = frozenset("0123456789abcdefABCDEF")


class RequestValidationError(SpecError):
    """A request the service would refuse; each Problem's field is the path inside the request."""


def java_pattern_to_python(pattern: str) -> str:
    """Rewrite a Java regex from the service model so `regex` (V1 mode) gives Java's answer.

    One pass, left to right: an escape is translated whole (`_escape`), any other character on its own, knowing
    only how deep inside character classes it sits (`_plain`), because `.`, `~`, `|` and `--` mean other things there.
    """
    out: list[str] = []
    depth = 0  # character-class nesting
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            text, i = _escape(pattern, i)
        else:
            text, depth = _plain(pattern, i, depth)
            i += 1
        out.append(text)
    return "".join(out)


def _escape(pattern: str, i: int) -> tuple[str, int]:
    """The backslash escape at `i`, translated, and where the pattern goes on after it."""
    reader = _ESCAPE_READERS.get(pattern[i + 1])
    found = reader(pattern, i) if reader else None
    if found is not None:
        return found
    return _JAVA_ESCAPES.get(pattern[i + 1], pattern[i : i + 2]), i + 2


def _code_unit(pattern: str, i: int) -> tuple[str, int] | None:
    """`\\uXXXX`: Java counts UTF-16 units, so a surrogate pair (`\\uD83D\\uDE00`) is one code point to `regex`."""
    unit = _hex4(pattern, i + 2)
    if unit is None:
        return None
    low = _hex4(pattern, i + 8) if pattern.startswith("\\u", i + 6) else None
    if 0xD800 <= unit <= 0xDBFF and low is not None and 0xDC00 <= low <= 0xDFFF:
        code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
        return f"\\U{code:08X}", i + 12
    return f"\\u{unit:04X}", i + 6


def _hex4(pattern: str, start: int) -> int | None:
    """The four hex digits at `start` as a number, or None: `\\u` without them is left to `regex` to refuse."""
    digits = pattern[start : start + 4]
    return int(digits, 16) if len(digits) == 4 and set(digits) <= _HEX else None


def _property(pattern: str, i: int) -> tuple[str, int] | None:
    """`\\p{Name}` / `\\P{Name}`: Java's POSIX names are ASCII classes; Unicode ones (`\\p{L}`) mean the same to `regex`."""
    if not pattern.startswith("{", i + 2):
        return None
    end = pattern.index("}", i + 2)
    posix = _JAVA_POSIX.get(pattern[i + 3 : end])
    if posix is None:
        return pattern[i : end + 1], end + 1
    return (posix if pattern[i + 1] == "p" else "[^" + posix[1:]), end + 1


# The escapes that need more than `_JAVA_ESCAPES`' one-for-one swap, by the letter after the backslash.
_ESCAPE_READERS: dict[str, Callable[[str, int], tuple[str, int] | None]] = {
    "u": _code_unit, "p": _property, "P": _property,
}


def _plain(pattern: str, i: int, depth: int) -> tuple[str, int]:
    """The character at `i` (not an escape), translated, and the class depth after it."""
    char = pattern[i]
    if char == "[":
        return char, depth + 1
    if char == "]" and depth:
        return char, depth - 1
    if not depth:
        return (_JAVA_DOT if char == "." else char), depth
    if char in "~|" or (char == "-" and pattern[i - 1] == "-"):
        return "\\" + char, depth  # literal in a Java class; V1 would read ~~ || -- as set operators
    return char, depth


@functools.cache
def service_model() -> ServiceModel:
    """botocore's SageMaker model, loaded once per process (~0.1 s).

    Read through botocore's data loader rather than a Session: the model is the same file, and skipping the
    session's credential and endpoint machinery keeps `python -m trainctl validate` fast.
    """
    from botocore.loaders import Loader

    return ServiceModel(Loader().load_service_model(SERVICE, "service-2"), service_name=SERVICE)


@functools.cache
def operation_model(operation: str) -> OperationModel:
    try:
        return service_model().operation_model(operation)
    except Exception as exc:  # botocore raises OperationNotFoundError
        raise ValueError(f"SageMaker has no operation {operation!r}") from exc


@functools.cache
def compiled_pattern(pattern: str) -> regex.Pattern[str]:
    return regex.compile(java_pattern_to_python(pattern), regex.V1)


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Walker:
    """Checks what botocore's ParamValidator skips; type errors are left to botocore's report."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    def report(self, path: str, message: str) -> None:
        self.problems.append((path or "(request)", message))

    def walk(self, value: Any, shape: Shape, path: str) -> None:
        kind = shape.type_name
        if kind == "structure":
            if getattr(shape, "is_document_type", False) or not isinstance(value, Mapping):
                return
            for key, member in shape.members.items():
                if key in value:
                    self.walk(value[key], member, f"{path}.{key}" if path else key)
        elif kind == "list":
            if not isinstance(value, list | tuple):
                return
            self._count(path, len(value), shape, "items")
            for index, item in enumerate(value):
                self.walk(item, shape.member, f"{path}[{index}]")
        elif kind == "map":
            if not isinstance(value, Mapping):
                return
            self._count(path, len(value), shape, "entries")
            for key, item in value.items():
                self.walk(key, shape.key, f"{path} key {key!r}")
                self.walk(item, shape.value, f"{path}.{key}")
        elif kind == "string":
            if isinstance(value, str):
                self._string(value, shape, path)
        elif kind in ("integer", "long", "float", "double"):
            self._number(value, shape, path)

    def _count(self, path: str, count: int, shape: Shape, noun: str) -> None:
        low, high = shape.metadata.get("min"), shape.metadata.get("max")
        if high is not None and count > high:
            self.report(path, f"{count} {noun}, max {high}")
        # botocore checks list minimums itself, but not map minimums
        if shape.type_name == "map" and low is not None and count < low:
            self.report(path, f"{count} {noun}, min {low}")

    def _string(self, value: str, shape: Shape, path: str) -> None:
        high = shape.metadata.get("max")
        if high is not None and len(value) > high:
            self.report(path, f"value is {len(value)} characters, max {high}")
        if shape.enum and value not in shape.enum:
            close = difflib.get_close_matches(value, shape.enum, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; allowed: {', '.join(shape.enum[:12])}"
            more = "" if close or len(shape.enum) <= 12 else f" ... ({len(shape.enum)} values)"
            self.report(path, f"{_show(value)} is not an allowed value{hint}{more}")
        pattern = shape.metadata.get("pattern")
        if pattern is not None and not compiled_pattern(pattern).fullmatch(value):
            self.report(path, f"{_show(value)} does not match the pattern {pattern}")

    def _number(self, value: Any, shape: Shape, path: str) -> None:
        if isinstance(value, bool):  # bool is an int to Python (and to botocore), not to the service
            self.report(path, f"{value} is a boolean; the service expects a number ({shape.type_name})")
            return
        if not _is_number(value):
            return
        if shape.type_name in ("integer", "long") and isinstance(value, float):
            return  # botocore reports the type
        high = shape.metadata.get("max")
        if high is not None and value > high:
            self.report(path, f"{value} is over the maximum {high}")


def _botocore_problems(value: Mapping[str, Any], shape: Shape) -> list[str]:
    report = ParamValidator().validate(value, shape)
    return report.generate_report().splitlines() if report.has_errors() else []


def validate_shape(value: Any, shape: Shape | str) -> list[str]:
    """Every problem of `value` against a shape (a Shape or a SageMaker shape name), as readable lines."""
    if isinstance(shape, str):
        shape = service_model().shape_for(shape)
    problems = _botocore_problems(value, shape)
    walker = _Walker()
    walker.walk(value, shape, "")
    problems.extend(f"{path}: {message}" for path, message in walker.problems)
    return problems


def validate_request(request: Mapping[str, Any], operation: str = "CreateTrainingJob") -> list[str]:
    """Problems the service would report for this request: empty when it would be accepted.

    Lines look like `HyperParameters.foo: value is 2600 characters, max 2500`.
    Placeholders such as `${RunId}` are validated as literal text: substitute them first.
    """
    return validate_shape(dict(request), operation_model(operation).input_shape)


def validate_response(response: Mapping[str, Any], operation: str = "DescribeTrainingJob") -> list[str]:
    """Problems of a response (e.g. a fake DescribeTrainingJob result in a test) against the output shape."""
    body = {k: v for k, v in response.items() if k != "ResponseMetadata"}
    return validate_shape(body, operation_model(operation).output_shape)


def assert_valid(request: Mapping[str, Any], operation: str = "CreateTrainingJob", source: str = "") -> None:
    """Raise RequestValidationError (a SpecError) listing every problem, or return quietly."""
    problems = validate_request(request, operation)
    if problems:
        raise RequestValidationError([
            Problem(source, f"{operation} request", line) for line in problems
        ])
