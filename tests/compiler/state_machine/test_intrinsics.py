"""Intrinsic functions only where Step Functions takes them, each rule planted in a real definition.

Expected values are the developer guide's ("Intrinsic functions for JSONPath states in Step Functions": the 18
functions, at most 10 nested, the fields that take them; "Fail workflow state": the 7 functions CausePath may use).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compiler import state_machine as sm
from compiler.errors import SpecError
from compiler.state_machine import intrinsics
from tests.project import ENVIRONMENTS, loaded

DOCUMENTED = ["States.Array", "States.ArrayContains", "States.ArrayGetItem", "States.ArrayLength",
              "States.ArrayPartition", "States.ArrayRange", "States.ArrayUnique", "States.Base64Decode",
              "States.Base64Encode", "States.Format", "States.Hash", "States.JsonMerge", "States.JsonToString",
              "States.MathAdd", "States.MathRandom", "States.StringSplit", "States.StringToJson", "States.UUID"]
FAIL_CAUSE = ["States.ArrayGetItem", "States.Base64Decode", "States.Base64Encode", "States.Format", "States.Hash",
              "States.JsonToString", "States.UUID"]


def planted(definition: dict[str, Any], state: str, **changes: Any) -> list[str]:
    copied = copy.deepcopy(definition)
    copied["States"][state].update(changes)
    return [str(p) for p in intrinsics.definition_problems(copied, "w.yaml")]


def test_the_lists_are_the_documented_ones() -> None:
    assert sorted(intrinsics.FUNCTIONS) == DOCUMENTED
    assert sorted(intrinsics.FAIL_PATH_FUNCTIONS) == FAIL_CAUSE
    assert intrinsics.MAX_NESTING == 10


def test_every_shipped_definition_is_clean() -> None:
    for env in ENVIRONMENTS.values():
        for workload in loaded().workloads(env.name):
            assert intrinsics.definition_problems(sm.build_definition(sm.spec_for(workload, env))) == []


def test_calls_skip_quoted_text() -> None:
    assert intrinsics.calls("States.Format('a \\' States.Nope( (', States.MathAdd($.n, 1))") == (
        ["States.Format", "States.MathAdd"], 2)


def test_an_unknown_function_is_refused(definition) -> None:
    [problem] = planted(definition, "Back off", Parameters={"n.$": "States.MathMultiply($.run.throttle.n, 2)"})
    assert problem == ("w.yaml: state machine: state 'Back off': Parameters.n.$: States.MathMultiply is not an "
                       "intrinsic function of Step Functions")


def test_eleven_nested_functions_are_refused(definition) -> None:
    expression = "States.MathAdd(" * 11 + "$.n" + ", 1)" * 11
    [problem] = planted(definition, "Back off", Parameters={"n.$": expression})
    assert "11 intrinsic functions nested; Step Functions allows at most 10" in problem
    assert planted(definition, "Back off", Parameters={"n.$": expression[15:-4]}) == []  # 10 is fine


def test_a_fail_cause_may_use_only_the_listed_functions(definition) -> None:
    [problem] = planted(definition, "Job failed", CausePath="States.MathAdd($.result.attempts, 1)")
    assert "state 'Job failed': CausePath: States.MathAdd is not allowed here" in problem
    assert planted(definition, "Job failed", CausePath="States.JsonToString($.result)") == []


def test_a_reference_path_field_takes_no_function(definition) -> None:
    [problem] = planted(definition, "Wait out throttling", SecondsPath="States.MathAdd($.run.throttle.wait, 1)")
    assert "state 'Wait out throttling': SecondsPath: this field takes a reference path" in problem
    choices = copy.deepcopy(definition["States"]["Succeeded?"]["Choices"])
    choices[0]["Variable"] = "States.Format('{}', $.result.status)"
    [problem] = planted(definition, "Succeeded?", Choices=choices)
    assert "state 'Succeeded?': Choices[0].Variable: this field takes a reference path" in problem


def test_build_definition_stops_on_it(monkeypatch) -> None:
    from compiler.state_machine import definition as module

    monkeypatch.setattr(module, "_RUN_ID", "States.ArrayGetItem(States.StringSplit(States.UUIDv7(), '-'), 4)")
    workload = loaded().workloads("dev")[0]
    with pytest.raises(SpecError) as error:
        sm.build_definition(sm.spec_for(workload, ENVIRONMENTS["dev"]))
    assert [p.field for p in error.value.problems] == ["state machine: state 'Start run': Parameters.run.id.$"]
