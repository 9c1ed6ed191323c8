"""The states that check an execution's input first, compiled from the workload's `OverridePolicy`.

Anything wrong ends the execution at once with error `InvalidInput` and the policy's message as the cause, before
any job exists. How it checks without a Lambda: the input is turned into text (`States.JsonToString`) to see that
it is an object; unknown keys are found by merging the known keys over (input merged with known keys) and
comparing the JSON text with the known keys alone (equal exactly when there is no other key, as long as
`States.JsonMerge` keeps the first object's key order); integers are told from fractions by splitting the number's
JSON text at `.eE`. Bounds are written as `Not <= max` rather than `> max`, so infinity (JSON's 1e400) and NaN,
which fail every comparison, are refused too.
"""

from __future__ import annotations

from typing import Any

from compiler.overrides import LARGEST_NUMBER, OverridePolicy
from compiler.state_machine.asl import fail, integer_parts, member

FIRST = "Read input"
LAST_NEXT = "Execution name taggable?"
_SCALARS = ("IsString", "IsNumeric", "IsBoolean", "IsNull")
# A value of each expected type: what an unchanged hyperparameter is checked as. Not the spec's own values: they can
# be long, and a null inside a list fails the ASL schema.
_SAMPLES: dict[str, Any] = {"boolean": False, "integer": 0, "number": 0, "string": "", "structure": {}, "any": 0,
                            "scalar": 0}


def _outside(path: str, low: float, high: float, next_state: str) -> list[dict[str, Any]]:
    """Rules that match a number below `low`, above `high`, or not comparable at all (NaN)."""
    return [{"Not": {"Variable": path, "NumericGreaterThanEquals": low}, "Next": next_state},
            {"Not": {"Variable": path, "NumericLessThanEquals": high}, "Next": next_state}]


def _type_rule(path: str, expected: str) -> dict[str, Any] | None:
    """A Choice rule that matches a value of the wrong JSON type."""
    if expected == "boolean":
        return {"Not": {"Variable": path, "IsBoolean": True}}
    if expected in ("integer", "number"):
        return {"Not": {"Variable": path, "IsNumeric": True}}
    if expected == "string":
        return {"Not": {"Variable": path, "IsString": True}}
    if expected == "structure":
        return {"Or": [{"Variable": path, k: True} for k in _SCALARS]}
    if expected == "scalar":
        return {"And": [{"Not": {"Variable": path, k: True}} for k in _SCALARS]}
    return None



def _shape_states(policy: OverridePolicy, m: dict[str, str]) -> dict[str, Any]:
    """Object? Known fields only? Values of the right JSON types?"""
    keys = {"top": dict.fromkeys(policy.fields, 0),
            "hyperparameters": {n: _SAMPLES[t] for n, t in policy.expected_types().items()}}
    defaults: dict[str, Any] = {"hyperparameters": {}, "max_run": policy.max_run, "instance_count": policy.instance_count}
    type_rules = [{"Not": {"Variable": "$.hp.text", "StringMatches": "{*"}, "Next": "Bad hyperparameters"},
                  {"Not": {"Variable": "$.merged.value.max_run", "IsNumeric": True}, "Next": "Bad max_run"}]
    if policy.instance_count_max is not None:
        type_rules.insert(1, {"Not": {"Variable": "$.merged.value.instance_count", "IsNumeric": True},
                              "Next": "Bad instance_count"})
    return {
        FIRST: {"Type": "Pass", "Parameters": {"given.$": "$", "text.$": "States.JsonToString($)", "keys": keys,
                                               "defaults": defaults}, "Next": "Input is an object?"},
        "Input is an object?": {
            "Type": "Choice",
            "Choices": [{"Not": {"Variable": "$.text", "StringMatches": "{*"}, "Next": "Input is not an object"}],
            "Default": "Find unknown fields",
        },
        "Input is not an object": fail(m["not_object"]),
        "Find unknown fields": {
            "Type": "Pass",
            "Parameters": {"known.$": "States.JsonToString($.keys.top)",
                           "seen.$": "States.JsonToString(States.JsonMerge($.keys.top, States.JsonMerge($.given, "
                                     "$.keys.top, false), false))"},
            "ResultPath": "$.top",
            "Next": "Unknown fields?",
        },
        "Unknown fields?": {
            "Type": "Choice",
            "Choices": [{"Not": {"Variable": "$.top.seen", "StringEqualsPath": "$.top.known"}, "Next": "Bad fields"}],
            "Default": "Merge defaults",
        },
        "Bad fields": fail(m["keys"]),
        "Merge defaults": {"Type": "Pass", "Parameters": {"value.$": "States.JsonMerge($.defaults, $.given, false)"},
                           "ResultPath": "$.merged", "Next": "Describe hyperparameters"},
        "Describe hyperparameters": {"Type": "Pass",
                                     "Parameters": {"text.$": "States.JsonToString($.merged.value.hyperparameters)"},
                                     "ResultPath": "$.hp", "Next": "Check types"},
        "Check types": {"Type": "Choice", "Choices": type_rules, "Default": "Measure values"},
        "Bad hyperparameters": fail(m["hp_type"]),
        "Bad max_run": fail(m["max_run"]),
    }


def _value_rules(policy: OverridePolicy) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    if policy.instance_count_max is not None:
        count = "$.merged.value.instance_count"
        rules += [{"Not": {"Variable": "$.measured.count_parts", "NumericEquals": 1}, "Next": "Bad instance_count"},
                  *_outside(count, 1, policy.instance_count_max, "Bad instance_count")]
    run = "$.merged.value.max_run"
    rules += [{"Not": {"Variable": "$.measured.max_run_parts", "NumericEquals": 1}, "Next": "Bad max_run"},
              *_outside(run, 1, policy.max_run, "Bad max_run"),
              {"Not": {"Variable": "$.measured.hp_seen", "StringEqualsPath": "$.measured.hp_known"},
               "Next": "Unknown hyperparameter"}]
    for index, (name, expected) in enumerate(policy.expected_types().items()):
        path = member("$.hp_values.values", name)
        rule = _type_rule(path, expected)
        if rule is not None:
            rules.append({**rule, "Next": "Bad hyperparameter type"})
        if expected in ("integer", "number"):  # numeric by now (the rule above): finite, as check() wants
            rules += _outside(path, -LARGEST_NUMBER, LARGEST_NUMBER, "Bad hyperparameter type")
        if expected == "integer":
            rules.append({"Not": {"Variable": f"$.hp_parts.h{index}", "NumericEquals": 1},
                          "Next": "Bad hyperparameter type"})
    return rules


def input_states(policy: OverridePolicy) -> dict[str, Any]:
    """Every state of the input check; the last one leaves only the checked values (`$.input`, `$.config`)."""
    m = policy.messages()
    states = _shape_states(policy, m)
    measured = {"max_run_parts.$": integer_parts("$.merged.value.max_run"),
                "hp_known.$": "States.JsonToString($.keys.hyperparameters)",
                "hp_seen.$": "States.JsonToString(States.JsonMerge($.keys.hyperparameters, States.JsonMerge("
                             "$.merged.value.hyperparameters, $.keys.hyperparameters, false), false))"}
    if policy.instance_count_max is not None:
        measured["count_parts.$"] = integer_parts("$.merged.value.instance_count")
        states["Bad instance_count"] = fail(m["count"])
    integers = {f"h{i}": name for i, (name, kind) in enumerate(policy.expected_types().items()) if kind == "integer"}
    states["Measure values"] = {"Type": "Pass", "Parameters": measured, "ResultPath": "$.measured",
                                "Next": "Measure integers" if policy.hyperparameters else "Check values"}
    states["Unknown hyperparameter"] = fail(m["hp_keys"])
    if policy.hyperparameters:
        states["Bad hyperparameter type"] = fail(m["hp_value_type"])
        # Measuring a missing member would fail: the sample values stand in for the ones a run leaves unchanged.
        states["Measure integers"] = {
            "Type": "Pass",
            "Parameters": {"values.$": "States.JsonMerge($.keys.hyperparameters, $.merged.value.hyperparameters, false)"},
            "ResultPath": "$.hp_values",
            "Next": "Count integer parts" if integers else "Check values",
        }
    if integers:
        states["Count integer parts"] = {
            "Type": "Pass",
            "Parameters": {f"{k}.$": integer_parts(member("$.hp_values.values", n)) for k, n in integers.items()},
            "ResultPath": "$.hp_parts", "Next": "Check values",
        }
    states["Check values"] = {"Type": "Choice", "Choices": _value_rules(policy), "Default": "Input is valid"}
    states["Input is valid"] = {
        "Type": "Pass",
        "Parameters": {"input.$": "$.given", "config": {
            "hyperparameters.$": "$.merged.value.hyperparameters", "instance_count.$": "$.merged.value.instance_count",
            "max_run.$": "$.merged.value.max_run"}},
        "Next": LAST_NEXT,
    }
    return states
