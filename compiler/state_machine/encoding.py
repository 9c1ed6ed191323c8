"""States that encode a run's hyperparameters the way the workload's estimator sends them.

Framework estimators send `json.dumps` of each value; `States.JsonToString` writes the same text for integers,
booleans, null and printable-ASCII strings ("portable" values), which are encoded all at once from the spec's
values merged with the overrides (an unchanged value encodes to the compiled text). Other values (floats, other
strings, lists, objects) are encoded only when a run overrides them, so an unchanged float keeps the SDK's exact
text. The generic Estimator sends `str()` of each value: strings as they are, True/False, None.
"""

from __future__ import annotations

from typing import Any

from compiler.compilation.overrides import OverridePolicy
from compiler.state_machine.asl import member


def portable(value: Any, str_encoded: bool) -> bool:
    """Whether every serializer writes this value exactly as the estimator does (see the module docstring)."""
    if str_encoded:
        return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53)
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) < 2**53
    if isinstance(value, str):
        return all(" " <= ch <= "~" for ch in value)
    return False


def _encode_one(policy: OverridePolicy, name: str, index: int, merge: str) -> dict[str, Any]:
    """The states that encode one overridden non-portable value into `$.one`."""
    path = member("$.config.hyperparameters", name)
    encode = f"Encode override {index}"
    states: dict[str, Any] = {encode: {"Type": "Pass", "Parameters": {f"{name}.$": f"States.JsonToString({path})"},
                                       "ResultPath": "$.one", "Next": merge}}
    if not policy.str_encoded:
        return states
    kind = f"Kind of override {index}"
    states[kind] = {
        "Type": "Choice",
        "Choices": [
            {"Variable": path, "BooleanEquals": True, "Next": f"True {index}"},
            {"Variable": path, "BooleanEquals": False, "Next": f"False {index}"},
            {"Variable": path, "IsNull": True, "Next": f"None {index}"},
            {"Variable": path, "IsString": True, "Next": f"Text {index}"},
        ],
        "Default": encode,
    }
    for label, text in (("True", "True"), ("False", "False"), ("None", "None")):
        states[f"{label} {index}"] = {"Type": "Pass", "Parameters": {name: text}, "ResultPath": "$.one", "Next": merge}
    states[f"Text {index}"] = {"Type": "Pass", "Parameters": {f"{name}.$": path}, "ResultPath": "$.one", "Next": merge}
    return states


def encoding_states(policy: OverridePolicy, first_next: str) -> tuple[str, dict[str, Any]]:
    """The encoding states, entered at the returned name; they leave `$.enc.v` to merge over the compiled ones."""
    values = policy.hyperparameters
    names = list(values)
    at_once = [n for n in names if portable(values[n], policy.str_encoded)]
    one_by_one = [n for n in names if n not in at_once]
    states: dict[str, Any] = {}
    entry = first_next
    for index in reversed(range(len(one_by_one))):
        name = one_by_one[index]
        choice, merge = f"Override {index}?", f"Merge override {index}"
        first = f"Kind of override {index}" if policy.str_encoded else f"Encode override {index}"
        states[choice] = {"Type": "Choice", "Comment": name[:200],
                          "Choices": [{"Variable": member("$.config.hyperparameters", name), "IsPresent": True,
                                       "Next": first}],
                          "Default": entry}
        states.update(_encode_one(policy, name, index, merge))
        states[merge] = {"Type": "Pass", "Parameters": {"v.$": "States.JsonMerge($.enc.v, $.one, false)"},
                         "ResultPath": "$.enc", "Next": entry}
        entry = choice
    if at_once:
        def encoded(name: str) -> str:
            path = member("$.hp.v", name)
            raw = policy.str_encoded and isinstance(values[name], str)
            return path if raw else f"States.JsonToString({path})"

        states["Encode hyperparameters"] = {"Type": "Pass", "Parameters": {f"{n}.$": encoded(n) for n in at_once},
                                            "ResultPath": "$.enc.v", "Next": entry}
        states["Merge hyperparameters"] = {
            "Type": "Pass",
            "Parameters": {"v.$": "States.JsonMerge($.defaults.hyperparameters, $.config.hyperparameters, false)"},
            "ResultPath": "$.hp", "Next": "Encode hyperparameters",
        }
        entry = "Merge hyperparameters"
    return entry, states


def portable_defaults(policy: OverridePolicy) -> dict[str, Any]:
    """The spec's values that are encoded at once (merged with the overrides before encoding)."""
    return {n: v for n, v in policy.hyperparameters.items() if portable(v, policy.str_encoded)}
