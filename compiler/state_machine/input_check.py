"""The states that check an execution's input first, compiled from the workload's `OverridePolicy`.

Anything wrong ends the execution at once with error `InvalidInput` and the policy's message as the cause, before
any job exists. How it checks without a Lambda, with documented intrinsic functions only and without relying on the
key order of `States.JsonMerge` or `States.JsonToString` (which AWS does not document):

- the input is turned into text (`States.JsonToString`) to see that it is an object;
- unknown keys: the known keys, each set to 0, are merged over the input (`States.JsonMerge`: the second object's
  values win), and both that and the known keys alone are written as text and split at `{`, `}` and `,`
  (`States.StringSplit`). Without unknown keys both give the same pieces (`"name":0`), in whatever order; an unknown
  key adds a piece no known key has (its name is quoted, so it cannot end in `":0` of a known one). The counts of
  distinct pieces (`States.ArrayUnique`, `States.ArrayLength`) are compared;
- characters: a value's text is split at every allowed character; it holds only those exactly when no piece is
  left but empty ones (whether StringSplit keeps empty pieces is not documented: both answers are read right);
  a string or key starting with `-` (which the script may read as an option), `"-` in the value's text, is matched
  with `StringMatches`;
- integers are told from fractions by splitting the number's JSON text at `.eE`.

Bounds are written as `Not <= max` rather than `> max`, so infinity (JSON's 1e400) and NaN, which fail every
comparison, are refused too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.compilation.overrides import (
    JSON_CHARACTERS,
    LARGEST_NUMBER,
    OPTION_TEXT,
    TEXT_CHARACTERS,
    OverridePolicy,
)
from compiler.errors import Problem
from compiler.sdk.limits import limits
from compiler.state_machine.asl import fail, integer_parts, member

FIRST = "Read input"
LAST_NEXT = "Execution name taggable?"
KEY_DELIMITERS = "{},"  # where the JSON text of an object of known names, each 0, splits into `"name":0` pieces
CHARACTERS = "$.chars"  # the character sets, as data: `keys` (KEY_DELIMITERS), then one per text rule
_SETS = {TEXT_CHARACTERS: "text", JSON_CHARACTERS: "json"}
_SCALARS = ("IsString", "IsNumeric", "IsBoolean", "IsNull")
# A value of each expected type: what an unchanged hyperparameter is checked as. Not the spec's own values: they can
# be long, and a null inside a list fails the ASL schema.
_SAMPLES: dict[str, Any] = {"boolean": False, "integer": 0, "number": 0, "string": "", "structure": {}, "any": 0,
                            "scalar": 0}


def distinct_pieces(text: str, delimiters: str) -> str:
    """How many different pieces `text` splits into at the characters of the string at path `delimiters`.

    The characters travel as data, not as a quoted literal: `{` and `}` would need escapes there, which moto's
    interpreter keeps as written while Step Functions removes them.
    """
    return f"States.ArrayLength(States.ArrayUnique(States.StringSplit({text}, {delimiters})))"


def has_empty_piece(text: str, delimiters: str) -> str:
    return f"States.ArrayContains(States.StringSplit({text}, {delimiters}), '')"


def only_allowed(prefix: str) -> dict[str, Any]:
    """A Choice rule true when the text measured into `<prefix>_n` / `<prefix>_e` held only allowed characters:
    nothing left after splitting at them, or only empty pieces."""
    return {"Or": [{"Variable": f"{prefix}_n", "NumericEquals": 0},
                   {"And": [{"Variable": f"{prefix}_n", "NumericEquals": 1},
                            {"Variable": f"{prefix}_e", "BooleanEquals": True}]}]}


def character_sets(policy: OverridePolicy) -> dict[str, str]:
    """The character sets the checks split at, by name (only those the policy uses)."""
    used = set(policy.text_rules().values())
    return {"keys": KEY_DELIMITERS, **{name: chars for chars, name in _SETS.items() if chars in used}}


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
            "hyperparameters": {n: _SAMPLES[t] for n, t in policy.expected_types().items()},
            "names": dict.fromkeys(policy.hyperparameters, 0)}
    defaults: dict[str, Any] = {"hyperparameters": {}, "max_run": policy.max_run, "instance_count": policy.instance_count}
    type_rules = [{"Not": {"Variable": "$.hp.text", "StringMatches": "{*"}, "Next": "Bad hyperparameters"},
                  {"Not": {"Variable": "$.merged.value.max_run", "IsNumeric": True}, "Next": "Bad max_run"}]
    if policy.instance_count_max is not None:
        type_rules.insert(1, {"Not": {"Variable": "$.merged.value.instance_count", "IsNumeric": True},
                              "Next": "Bad instance_count"})
    return {
        FIRST: {"Type": "Pass", "Parameters": {"given.$": "$", "text.$": "States.JsonToString($)", "keys": keys,
                                               "defaults": defaults, "chars": character_sets(policy)},
                "Next": "Input is an object?"},
        "Input is an object?": {
            "Type": "Choice",
            "Choices": [{"Not": {"Variable": "$.text", "StringMatches": "{*"}, "Next": "Input is not an object"}],
            "Default": "Find unknown fields",
        },
        "Input is not an object": fail(m["not_object"]),
        "Find unknown fields": {
            "Type": "Pass",
            "Parameters": {"known.$": distinct_pieces("States.JsonToString($.keys.top)", f"{CHARACTERS}.keys"),
                           "seen.$": distinct_pieces("States.JsonToString(States.JsonMerge($.given, $.keys.top, false))",
                                                     f"{CHARACTERS}.keys")},
            "ResultPath": "$.top",
            "Next": "Unknown fields?",
        },
        "Unknown fields?": {
            "Type": "Choice",
            "Choices": [{"Not": {"Variable": "$.top.seen", "NumericEqualsPath": "$.top.known"}, "Next": "Bad fields"}],
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
              *_cost_rules(policy, run),
              {"Not": {"Variable": "$.measured.hp_seen", "NumericEqualsPath": "$.measured.hp_known"},
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
    return rules + _text_rules(policy)


def _cost_rules(policy: OverridePolicy, run: str) -> list[dict[str, Any]]:
    """Per instance count whose budget is below the spec's max_run: a longer max_run exceeds the cost ceiling."""
    count = "$.merged.value.instance_count"
    return [{"And": [{"Variable": count, "NumericEquals": c},
                     {"Variable": run, "NumericGreaterThan": policy.budgets[c]}], "Next": f"Over cost ceiling {c}"}
            for c in policy.refused_counts()]


def _text_rules(policy: OverridePolicy) -> list[dict[str, Any]]:
    """Per name, in the spec's order (as `check()`): a value outside its choices, or with a character its rule
    does not allow."""
    rules: list[dict[str, Any]] = []
    text = policy.text_rules()
    for index, name in enumerate(policy.hyperparameters):
        if name in policy.choices:
            path = member("$.merged.value.hyperparameters", name)
            allowed = [{"Variable": path, "StringEquals": choice} for choice in policy.choices[name]]
            rules.append({"And": [{"Variable": path, "IsPresent": True}, {"Not": {"Or": allowed}}],
                          "Next": f"Not a choice {index}"})
        elif name in text:
            rules.append({"Not": only_allowed(f"$.hp_text.t{index}"), "Next": f"Unsafe value {index}"})
            rules.append({"Variable": f"$.hp_text.t{index}_j", "StringMatches": f"*{OPTION_TEXT}*",
                          "Next": f"Unsafe value {index}"})
    return rules


def _text_states(policy: OverridePolicy, m: dict[str, str]) -> dict[str, Any]:
    """Measure each value's characters (the sample stands in for an unchanged one) and say which value is refused."""
    states: dict[str, Any] = {}
    measured: dict[str, str] = {}
    text = policy.text_rules()
    for index, name in enumerate(policy.hyperparameters):
        if name in policy.choices:
            states[f"Not a choice {index}"] = fail(m[f"hp_choice.{name}"])
        elif name in text:
            value = f"States.JsonToString({member('$.hp_values.values', name)})"
            chars = f"{CHARACTERS}.{_SETS[text[name]]}"
            measured[f"t{index}_n.$"] = distinct_pieces(value, chars)
            measured[f"t{index}_e.$"] = has_empty_piece(value, chars)
            measured[f"t{index}_j.$"] = value  # its JSON text, where a string or key opens with a quote
            states[f"Unsafe value {index}"] = fail(m[f"hp_unsafe.{name}"])
    if measured:
        states["Measure text"] = {"Type": "Pass", "Parameters": measured, "ResultPath": "$.hp_text",
                                  "Next": "Check values"}
    return states


def limit_problems(policy: OverridePolicy, compiled: Mapping[str, Any], source: str) -> list[Problem]:
    """SageMaker's limits on names and entries, which hold for every run when they hold here.

    A run overrides only names the spec declares (anything else is refused), so after the merge over the compiled
    HyperParameters no name is new: the names' lengths and the number of entries are those of the compiled request.
    Only the values' lengths vary per run (`check()`; in the state machine, SageMaker's own refusal).
    """
    lim = limits()
    problems = [Problem(source, f"hyperparameters.{name}", f"a name of at most {lim.hyperparameter_key_max} "
                        "characters (SageMaker's HyperParameterKey); shorten it")
                for name in policy.hyperparameters if len(name) > lim.hyperparameter_key_max]
    missing = [name for name in policy.hyperparameters if name not in compiled]
    if missing:
        problems.append(Problem(source, "hyperparameters", f"{', '.join(missing)}: overridable but not in the "
                                "compiled request, so a run would add entries"))
    if len(compiled) > lim.hyperparameters_max:
        problems.append(Problem(source, "hyperparameters", f"{len(compiled)} entries with the SDK's own; SageMaker "
                                f"takes at most {lim.hyperparameters_max}; remove some"))
    return problems


def input_states(policy: OverridePolicy) -> dict[str, Any]:
    """Every state of the input check; the last one leaves only the checked values (`$.input`, `$.config`)."""
    m = policy.messages()
    states = _shape_states(policy, m)
    measured = {"max_run_parts.$": integer_parts("$.merged.value.max_run"),
                "hp_known.$": distinct_pieces("States.JsonToString($.keys.names)", f"{CHARACTERS}.keys"),
                "hp_seen.$": distinct_pieces("States.JsonToString(States.JsonMerge($.merged.value.hyperparameters, "
                                             "$.keys.names, false))", f"{CHARACTERS}.keys")}
    if policy.instance_count_max is not None:
        measured["count_parts.$"] = integer_parts("$.merged.value.instance_count")
        states["Bad instance_count"] = fail(m["count"])
    integers = {f"h{i}": name for i, (name, kind) in enumerate(policy.expected_types().items()) if kind == "integer"}
    states["Measure values"] = {"Type": "Pass", "Parameters": measured, "ResultPath": "$.measured",
                                "Next": "Measure integers" if policy.hyperparameters else "Check values"}
    states["Unknown hyperparameter"] = fail(m["hp_keys"])
    for c in policy.refused_counts():
        states[f"Over cost ceiling {c}"] = fail(m[f"cost.{c}"])
    text_states = _text_states(policy, m)
    states.update(text_states)
    after_integers = "Measure text" if "Measure text" in text_states else "Check values"
    if policy.hyperparameters:
        states["Bad hyperparameter type"] = fail(m["hp_value_type"])
        # Measuring a missing member would fail: the sample values stand in for the ones a run leaves unchanged.
        states["Measure integers"] = {
            "Type": "Pass",
            "Parameters": {"values.$": "States.JsonMerge($.keys.hyperparameters, $.merged.value.hyperparameters, false)"},
            "ResultPath": "$.hp_values",
            "Next": "Count integer parts" if integers else after_integers,
        }
    if integers:
        states["Count integer parts"] = {
            "Type": "Pass",
            "Parameters": {f"{k}.$": integer_parts(member("$.hp_values.values", n)) for k, n in integers.items()},
            "ResultPath": "$.hp_parts", "Next": after_integers,
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
