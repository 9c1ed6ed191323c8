"""What a run may change: the one policy that both the state machine and `trainctl start` enforce.

An execution's input may override hyperparameters the spec declares (keeping each value's JSON type), the
instance count (up to the spec's `max_instance_count`, by default its `instance_count`) and `max_run` (up to the
spec's own). `OverridePolicy` states those rules once: `compiler.state_machine.input_check` compiles them into
Choice states, and `check()` below runs the same rules in Python, in the same order, with the same messages, so
`trainctl start` refuses locally exactly what the state machine would refuse (a test runs both on hostile inputs).

Text cannot carry commands: the SageMaker training toolkit up to 5.1.2 runs the job's command line through a shell
(aws/sagemaker-training-toolkit#128), so an overriding string may hold only `SAFE_CHARACTERS` (letters, digits and
`._:/=+@-`), unless the spec lists the hyperparameter's allowed values (`choices`), which are then the only ones
accepted. Nor may an overriding string, or a string or key inside an overriding list or object, start with `-`:
the toolkit passes each hyperparameter as `--name value` (an object as `k=v,...`, its keys sorted), so such a value
is read as an option of its own by the script's argument parser (`--model --checkpoint_dir=/x` sets a name the spec
never declared, or fails the job after its instances started). Lists, objects and values of a spec's
null are held to the same characters plus JSON's own punctuation (`TEXT_CHARACTERS`, `JSON_CHARACTERS`); both sets
are tested on the value's compact JSON text, which the state machine writes with `States.JsonToString` (a quote or
any other character inside a string comes out escaped with a backslash).

One limit the state machine cannot measure is the length of an overriding string (Amazon States Language has no
string-length function): `check()` applies SageMaker's limit, and the state machine reports SageMaker's own
refusal of an over-long value as invalid input, before any job exists. Names and their count need no run-time
check: a run may only override names the spec declares, and the spec is checked against the same limits.

Numbers must be finite (JSON allows 1e400, which parsers read as infinity). The generic Estimator sends `str()` of
each value, which the state machine can write for scalars only: a spec's null there may become any scalar, and its
lists and objects cannot be overridden at all.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.compilation import cost_ceiling
from compiler.facts import catalog
from compiler.inputs.model import MAX_RUN_SECONDS, Workload
from compiler.sdk.limits import limits

FIELDS = ("hyperparameters", "instance_count", "max_run")
LARGEST_NUMBER = 1.7976931348623157e308  # the largest double: numbers beyond it (and NaN) are refused
# What an overriding string may hold: no space, quote, `;`, `|`, `&`, `$`, backtick, `<`, `>`, `(`, `)`, `*`, `?`,
# `~`, `!`, `#`, `%`, backslash, newline or other control character, nothing beyond ASCII.
SAFE_CHARACTERS = string.ascii_letters + string.digits + "._:/=+@-"
TEXT_CHARACTERS = SAFE_CHARACTERS + '"'  # a string's JSON text: the safe characters between two quotes
JSON_CHARACTERS = TEXT_CHARACTERS + "[]{},"  # a list's or object's compact JSON text of safe strings and numbers
OPTION_TEXT = '"-'  # in a value's JSON text: a string or key starting with "-", which may read as an option


def json_type(value: Any) -> str:
    """The JSON type an override must keep: boolean, integer, number, string, structure or any (null)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "any"
    return "structure"


def expected_type(value: Any, str_encoded: bool) -> str:
    """What an override of a spec value must be; `scalar` where str() of a list or object could not be matched."""
    kind = json_type(value)
    return "scalar" if kind == "any" and str_encoded else kind


_TYPE_WORDS = {"boolean": "true/false", "integer": "integer", "number": "number", "string": "string",
               "structure": "list or object", "any": "any", "scalar": "text, number, true/false or null"}


@dataclass(frozen=True)
class OverridePolicy:
    """The ceilings and types a workload's executions are held to."""

    workload: str
    hyperparameters: Mapping[str, Any] = field(default_factory=dict)  # the spec's values: names and JSON types
    instance_count: int = 1
    instance_count_max: int | None = 1  # None: the count cannot change (a heterogeneous cluster)
    max_run: int = MAX_RUN_SECONDS  # the spec's: the default and the ceiling
    max_wait: int | None = None
    str_encoded: bool = False  # the generic Estimator sends str() of each value, not JSON
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # string hyperparameters' allowed values
    cost_ceiling_usd: float | None = None  # max_run_cost_usd; None: no ceiling
    budgets: Mapping[int, int] = field(default_factory=dict)  # per instance count: seconds of run time it buys
    highest_price: float | None = None  # USD per hour of the most expensive cluster of one instance (messages)
    price_source: str = ""  # whose prices those are (catalog.price_source of the workload's region)

    @classmethod
    def of(cls, workload: Workload, region: str) -> OverridePolicy:
        """The policy of a workload compiled for an environment in `region` (whose list prices hold the ceiling)."""
        str_encoded = workload.framework == "generic" and (workload.code is None or workload.code.source_dir is None)
        values = {k: v for k, v in workload.hyperparameters.items()
                  if not (str_encoded and json_type(v) == "structure")}
        ceiling = workload.max_run_cost_usd if not cost_ceiling.unpriced(workload, region) else None
        return cls(workload=workload.name, hyperparameters=values, instance_count=workload.instance_count,
                   instance_count_max=None if workload.compute.instance_groups else workload.instance_count_ceiling,
                   max_run=workload.max_run, max_wait=workload.max_wait if workload.use_spot_instances else None,
                   str_encoded=str_encoded, choices=dict(workload.choices), cost_ceiling_usd=ceiling,
                   budgets=cost_ceiling.budgets(workload, ceiling, region) if ceiling is not None else {},
                   highest_price=float(cost_ceiling.cluster_rate(workload, 1, region)) if ceiling is not None else None,
                   price_source=catalog.price_source(region))

    @property
    def fields(self) -> tuple[str, ...]:
        return FIELDS if self.instance_count_max is not None else ("hyperparameters", "max_run")

    @property
    def value_max(self) -> int:
        return limits().hyperparameter_value_max

    def expected_types(self) -> dict[str, str]:
        return {name: expected_type(value, self.str_encoded) for name, value in self.hyperparameters.items()}

    def text_rules(self) -> dict[str, str]:
        """The characters each hyperparameter's JSON text may hold; names with `choices` or a numeric or boolean type
        (whose JSON text is always safe) have none."""
        rules = {"string": TEXT_CHARACTERS, "scalar": TEXT_CHARACTERS, "structure": JSON_CHARACTERS,
                 "any": JSON_CHARACTERS}
        return {name: rules[kind] for name, kind in self.expected_types().items()
                if kind in rules and name not in self.choices}

    # -------------------------------------------------------------------------------------------- messages

    def messages(self) -> dict[str, str]:
        """The cause of each refusal; the state machine's Fail states carry the same text."""
        names = ", ".join(self.hyperparameters) or "(none: this workload's spec has no hyperparameters)"
        types = "; ".join(f"{n} ({_TYPE_WORDS[t]})" for n, t in self.expected_types().items())
        count = (f"instance_count: must be an integer from 1 to {self.instance_count_max} (the spec's "
                 "max_instance_count); the spec uses " + str(self.instance_count)) if self.instance_count_max else ""
        return {
            "not_object": "the execution input must be a JSON object: {} runs the spec as written; overrides look like "
                          '{"hyperparameters": {...}, "instance_count": 2, "max_run": 3600}',
            "keys": "the execution input has a field this state machine does not know; allowed (all optional): "
                    f"{', '.join(self.fields)}. Start with {{}} to run the spec as written",
            "hp_type": "hyperparameters: must be an object of name -> value, e.g. "
                       '{"hyperparameters": {"' + (next(iter(self.hyperparameters), "name")) + '": ...}}',
            "hp_keys": f"hyperparameters: unknown name; names a run may override: {names}. Add new ones to the spec "
                       "(workloads/) instead",
            "hp_value_type": f"hyperparameters: an override must keep the JSON type of the spec's value: {types}",
            "hp_value_length": f"hyperparameters: a value is longer than SageMaker's {self.value_max} characters as "
                               "sent; pass large values as a file in an input channel",
            **{f"hp_choice.{n}": f"hyperparameters.{n}: must be one of {', '.join(c)} (the spec's choices for "
                                 f"{n}); add the value to its choices in the spec to allow it"
               for n, c in self.choices.items() if n in self.hyperparameters},
            **{f"hp_unsafe.{n}": f"hyperparameters.{n}: text may hold only letters, digits and . _ : / = + @ - (no "
                                 "spaces, quotes or shell characters: the training toolkit may run the command line "
                                 "through a shell)" + (", in lists and objects also [ ] { } , and quotes around "
                                 "strings" if chars == JSON_CHARACTERS else "")
                                 + ", and no string or key may start with - (the script would read it as an option)"
                                 + f"; pass other text in an input channel, or list the allowed values as the spec's "
                                 f"choices for {n}"
               for n, chars in self.text_rules().items()},
            "count": count,
            "max_run": f"max_run: must be an integer number of seconds from 1 to {self.max_run} (the spec's max_run)",
            **{f"cost.{count}": self._cost_message(count) for count in self.refused_counts()},
        }

    def refused_counts(self) -> list[int]:
        """The instance counts with which some max_run a run may ask for exceeds the cost ceiling."""
        return [count for count, seconds in self.budgets.items() if seconds < self.max_run]

    def _cost_message(self, count: int) -> str:
        seconds = self.budgets[count]
        allowed = (f"max_run may be at most {seconds} seconds" if seconds >= 1 else
                   "no max_run fits")
        return (f"max_run x instance_count: the worst case exceeds the cost ceiling; with instance_count {count} "
                f"{allowed} (max_run_cost_usd {self.cost_ceiling_usd:g} USD per run, at {self.highest_price:g} USD per "
                f"instance-hour, the highest of its instance types, {self.price_source}); lower max_run or "
                "instance_count, or raise max_run_cost_usd in the spec")

    # -------------------------------------------------------------------------------------------- the check

    def check(self, given: Any) -> list[str]:
        """Every refusal for an execution input, in the state machine's order (it reports the first)."""
        m = self.messages()
        if not isinstance(given, Mapping):
            return [m["not_object"]]
        if set(given) - set(self.fields):
            return [m["keys"]]
        problems: list[str] = []
        hyperparameters = given.get("hyperparameters", {})
        if not isinstance(hyperparameters, Mapping):
            problems.append(m["hp_type"])
        if "instance_count" in given and not _number(given["instance_count"]):
            problems.append(m["count"])
        if "max_run" in given and not _number(given["max_run"]):
            problems.append(m["max_run"])
        if problems:
            return problems
        problems += self._check_ranges(given, m)
        problems += self._check_hyperparameters(hyperparameters, m)
        return problems

    def _check_ranges(self, given: Mapping[str, Any], m: dict[str, str]) -> list[str]:
        problems = []
        count = given.get("instance_count", self.instance_count)
        if not _integer(count) or not 1 <= count <= (self.instance_count_max or self.instance_count):
            problems.append(m["count"])
        run = given.get("max_run", self.max_run)
        if not _integer(run) or not 1 <= run <= self.max_run:
            problems.append(m["max_run"])
        if not problems and count in self.budgets and run > self.budgets[count]:
            problems.append(m[f"cost.{count}"])
        return problems

    def _check_hyperparameters(self, given: Mapping[str, Any], m: dict[str, str]) -> list[str]:
        if set(given) - set(self.hyperparameters):
            return [m["hp_keys"]]
        expected = self.expected_types()
        for name, value in given.items():
            if not _has_type(value, expected[name]):
                return [m["hp_value_type"]]
        problem = self._check_text(given, m)
        if problem:
            return [problem]
        for value in given.values():
            if len(self.encode(value)) > self.value_max:
                return [m["hp_value_length"]]
        return []

    def _check_text(self, given: Mapping[str, Any], m: dict[str, str]) -> str | None:
        """The first value, in the spec's order (the state machine's), outside its choices or its characters."""
        rules = self.text_rules()
        for name in self.hyperparameters:
            if name not in given:
                continue
            if name in self.choices and given[name] not in self.choices[name]:
                return m[f"hp_choice.{name}"]
            text = json_text(given[name])
            if name in rules and (not set(text) <= set(rules[name]) or OPTION_TEXT in text):
                return m[f"hp_unsafe.{name}"]
        return None

    def encode(self, value: Any) -> str:
        """An overriding value as the state machine sends it: str() for the generic Estimator, else JSON.

        The JSON is the estimator's json.dumps for scalars; lists and objects come out compact, as
        `States.JsonToString` writes them (the SDK would put a space after ',' and ':').
        """
        if self.str_encoded:
            return str(value)
        return json.dumps(value, separators=(",", ":"))


def json_text(value: Any) -> str:
    """Compact JSON, non-ASCII as it is: what the character rules are tested on (the state machine's
    `States.JsonToString` may escape non-ASCII instead, which the rules refuse just the same, for the `\\`)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _number(value: Any) -> bool:
    """A JSON number within the range of a double: not NaN, not infinite, no integer beyond (as the state machine)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return -LARGEST_NUMBER <= value <= LARGEST_NUMBER


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and _number(value)


def _has_type(value: Any, expected: str) -> bool:
    checks = {
        "boolean": lambda v: isinstance(v, bool),
        "integer": _integer,
        "number": _number,
        "string": lambda v: isinstance(v, str),
        "structure": lambda v: isinstance(v, list | Mapping),
        "any": lambda v: True,
        "scalar": lambda v: not isinstance(v, list | Mapping),
    }
    return checks[expected](value)
