"""Execution inputs against one policy, two implementations: the state machine's Choice states and `check()`.

`trainctl start` refuses input locally with `OverridePolicy.check()`; the state machine refuses the same input with
`InvalidInput`. Every hostile input here runs through both: the first cause of `check()` must be the execution's
cause (or both accept, and the request that reached SageMaker is the compiled one with the overrides). A value that
only SageMaker can measure (its length as sent) is refused by SageMaker itself, which the state machine reports as
invalid input, while `check()` names the limit.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from compiler import state_machine as sm
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import Deployed, Run, check_requests, type_requests
from tests.compiler.test_properties import JSON_SCALARS
from tests.project import ENVIRONMENTS

HOSTILE = "sm-hostile"
GENERIC = "sm-generic"
REFUSED_BY_SAGEMAKER = "SageMaker refused the request: "
OK = None

# (input as JSON text, the key of the message check() and the execution must give first, or OK).
# Text, not objects: 2.0, 1e3, 1e400 and duplicate keys must reach Step Functions exactly as written.
CASES: list[tuple[str, str | None]] = [
    # not an object
    ("[]", "not_object"), ('"x"', "not_object"), ("null", "not_object"), ("1", "not_object"), ("true", "not_object"),
    ('"{\\"max_run\\": 5}"', "not_object"), ('[{"max_run": 5}]', "not_object"),
    # unknown top-level fields
    ('{"unknown": 1}', "keys"), ('{"Hyperparameters": {}}', "keys"), ('{"": 1}', "keys"),
    ('{"hyperparameters": {}, "max_run": 60, "instance_type": "ml.p5.48xlarge"}', "keys"),
    ('{"' + "k" * 1000 + '": 1}', "keys"), ('{"max_run\\u0000": 1}', "keys"), ('{"ïnstance_count": 2}', "keys"),
    # instance_count
    ('{"instance_count": 2.0}', "count"), ('{"instance_count": 1e3}', "count"), ('{"instance_count": true}', "count"),
    ('{"instance_count": false}', "count"), ('{"instance_count": -1}', "count"), ('{"instance_count": 0}', "count"),
    ('{"instance_count": 5}', "count"), ('{"instance_count": 1000000000000000000000000000000}', "count"),
    ('{"instance_count": "2"}', "count"), ('{"instance_count": [2]}', "count"), ('{"instance_count": {"n": 2}}', "count"),
    ('{"instance_count": null}', "count"), ('{"instance_count": 1e400}', "count"), ('{"instance_count": -1e400}', "count"),
    ('{"instance_count": 4}', OK), ('{"instance_count": 1}', OK),
    # max_run
    ('{"max_run": 0}', "max_run"), ('{"max_run": -5}', "max_run"), ('{"max_run": 7201}', "max_run"),
    ('{"max_run": 1.5}', "max_run"), ('{"max_run": 3600.0}', "max_run"), ('{"max_run": 36e2}', "max_run"),
    ('{"max_run": 1e400}', "max_run"), ('{"max_run": "3600"}', "max_run"), ('{"max_run": true}', "max_run"),
    ('{"max_run": 100, "max_run": 99999}', "max_run"), ('{"max_run": 7200}', OK), ('{"max_run": 1}', OK),
    # hyperparameters: the object itself
    ('{"hyperparameters": null}', "hp_type"), ('{"hyperparameters": []}', "hp_type"),
    ('{"hyperparameters": "epochs=3"}', "hp_type"), ('{"hyperparameters": "{epochs}"}', "hp_type"),
    ('{"hyperparameters": 7}', "hp_type"), ('{"hyperparameters": {}}', OK),
    # hyperparameters: names
    ('{"hyperparameters": {"nope": 1}}', "hp_keys"), ('{"hyperparameters": {"epochs\'": 1}}', "hp_keys"),
    ('{"hyperparameters": {"epochs]": 1}}', "hp_keys"), ('{"hyperparameters": {"[\'epochs\']": 1}}', "hp_keys"),
    ('{"hyperparameters": {"sagemaker_program": "evil.py"}}', "hp_keys"), ('{"hyperparameters": {"EPOCHS": 1}}', "hp_keys"),
    ('{"hyperparameters": {"epochs": 1, "$": 2}}', "hp_keys"), ('{"hyperparameters": {"warmup_steps": 1}}', "hp_keys"),
    # hyperparameters: integers stay integers
    ('{"hyperparameters": {"epochs": 2.0}}', "hp_value_type"), ('{"hyperparameters": {"epochs": 1e3}}', "hp_value_type"),
    ('{"hyperparameters": {"epochs": "3"}}', "hp_value_type"), ('{"hyperparameters": {"epochs": true}}', "hp_value_type"),
    ('{"hyperparameters": {"epochs": null}}', "hp_value_type"), ('{"hyperparameters": {"epochs": 1e400}}', "hp_value_type"),
    ('{"hyperparameters": {"warmup-steps": 5.5}}', "hp_value_type"), ('{"hyperparameters": {"epochs": [3]}}', "hp_value_type"),
    ('{"hyperparameters": {"epochs": -7, "big": 100000000000000000000}}', OK),
    ('{"hyperparameters": {"big": 1' + "0" * 400 + '}}', "hp_value_type"),  # beyond a double: as infinity
    ('{"hyperparameters": {"big": 1' + "0" * 2600 + '}}', "hp_value_type"),  # not hp_value_length: the type first
    # numbers, strings, booleans, structures, any
    ('{"hyperparameters": {"lr": "0.1"}}', "hp_value_type"), ('{"hyperparameters": {"lr": true}}', "hp_value_type"),
    ('{"hyperparameters": {"lr": 1e400}}', "hp_value_type"), ('{"hyperparameters": {"opt.beta": -1e400}}', "hp_value_type"),
    ('{"hyperparameters": {"lr": 1, "opt.beta": 0.95}}', OK), ('{"hyperparameters": {"lr": 2.5e-05}}', OK),
    ('{"hyperparameters": {"name": 5}}', "hp_value_type"), ('{"hyperparameters": {"data/path": {"$": "x"}}}', "hp_value_type"),
    ('{"hyperparameters": {"flag": 0}}', "hp_value_type"), ('{"hyperparameters": {"flag": "false"}}', "hp_value_type"),
    ('{"hyperparameters": {"layers": "[1,2]"}}', "hp_value_type"), ('{"hyperparameters": {"opts": null}}', "hp_value_type"),
    ('{"hyperparameters": {"flag": true, "layers": {"a": [1, 2]}, "opts": [[[{"deep": [1, {"x": null}]}]]]}}', OK),
    ('{"hyperparameters": {"extra": {"any": [1, "two"]}}}', OK), ('{"hyperparameters": {"extra": 1.25}}', OK),
    ('{"hyperparameters": {"name": "ü✓ 日本語 \\u2028 😀", "0th": "line\\nbreak \\"quoted\\" \\\\ back"}}',
     "hp_unsafe.name"),
    ('{"hyperparameters": {"name": "${OutputBucket} States.JsonToString($) {}\'"}}', "hp_unsafe.name"),
    # text that could reach a shell (issue 23): only letters, digits and ._:/=+@- in strings, in lists and objects too
    ('{"hyperparameters": {"name": "x;cmd;echo"}}', "hp_unsafe.name"), ('{"hyperparameters": {"0th": "a b"}}', "hp_unsafe.0th"),
    ('{"hyperparameters": {"data/path": "s3://b/$(id)"}}', "hp_unsafe.data/path"),
    ('{"hyperparameters": {"layers": ["a;b"]}}', "hp_unsafe.layers"),
    ('{"hyperparameters": {"opts": {"k": "`id`"}}}', "hp_unsafe.opts"),
    ('{"hyperparameters": {"opts": {"k;x": 1}}}', "hp_unsafe.opts"), ('{"hyperparameters": {"extra": "a|b"}}', "hp_unsafe.extra"),
    ('{"hyperparameters": {"extra": ["\\""]}}', "hp_unsafe.extra"),
    ('{"hyperparameters": {"name": "gpt-125m", "0th": "A-Z_a.z:0/9=+@", "data/path": "s3://b/k=v/x+y@z"}}', OK),
    ('{"hyperparameters": {"layers": ["s3://b/k", {"a": [1, -2.5e-3, true, null]}], "extra": {"k-1": "v:2"}}}', OK),
    ('{"hyperparameters": {"warmup-steps": 5, "data/path": "s3://other/k"}}', OK),
    # text read as an option by the script's argument parser (`--name value`, objects as `k=v,...`): no string or
    # key starting with "-"
    ('{"hyperparameters": {"name": "--max_steps=9"}}', "hp_unsafe.name"), ('{"hyperparameters": {"0th": "-"}}', "hp_unsafe.0th"),
    ('{"hyperparameters": {"extra": "-x"}}', "hp_unsafe.extra"),
    ('{"hyperparameters": {"opts": {"a": 1, "-b": 2}}}', "hp_unsafe.opts"),
    ('{"hyperparameters": {"layers": ["x", "-y"]}}', "hp_unsafe.layers"),
    ('{"hyperparameters": {"name": "x-", "0th": "a--b", "extra": -5, "layers": [-1, "y-", {"k-": "v-"}]}}', OK),
    # lengths as sent: JSON adds two quotes to a string; SageMaker takes 2,500 characters
    ('{"hyperparameters": {"name": "' + "x" * 2498 + '"}}', OK),
    ('{"hyperparameters": {"name": "' + "x" * 2499 + '"}}', "hp_value_length"),
    ('{"hyperparameters": {"layers": ["' + "y" * 2600 + '"]}}', "hp_value_length"),
    # several problems: the first in the state machine's order
    ('{"instance_count": 0, "max_run": 0}', "count"), ('{"hyperparameters": [], "instance_count": "x"}', "hp_type"),
    ('{"max_run": "x", "hyperparameters": {"nope": 1}}', "max_run"),
    ('{"max_run": 0, "hyperparameters": {"nope": 1}}', "max_run"),
    ('{"instance_count": 2, "hyperparameters": {"epochs": "x"}}', "hp_value_type"),
    ('{"hyperparameters": {"epochs": "x", "nope": 1}}', "hp_keys"), ('{"hyperparameters": {"nope": 1}, "bad": 2}', "keys"),
    # everything at once
    ('{"hyperparameters": {"epochs": 9, "lr": 0.01, "name": "b", "flag": true, "layers": [3], "opts": {}, "extra": "e",'
     ' "warmup-steps": 1, "opt.beta": 0.5, "0th": "", "data/path": "p", "big": 1}, "instance_count": 3, "max_run": 60}', OK),
]


@pytest.fixture(scope="module")
def hostile(deployed_test) -> Deployed:
    return deployed_test[HOSTILE]


def outcome(d: Deployed, payload: str) -> tuple[list[str], Run]:
    """check()'s causes and the execution, for one input."""
    return d.spec.policy.check(json.loads(payload)), d.run(payload, [sage.completes()])


def assert_same_verdict(d: Deployed, payload: str, problems: list[str], run: Run) -> None:
    """The execution fails with check()'s first cause, or both accept and the request is the expected one."""
    messages = d.spec.policy.messages()
    if not problems:
        assert run.status == "SUCCEEDED", run.cause
        check_requests(d, run, json.loads(payload))
        assert run.output["overrides"] == json.loads(payload)
        return
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT)
    assert run.fake.created == [] and run.notifications == []
    if problems[0] == messages["hp_value_length"]:  # only SageMaker measures it: its refusal is the cause
        assert run.cause.startswith(REFUSED_BY_SAGEMAKER) and "validation error(s) detected" in run.cause, run.cause
        assert run.fake.refused and all("HyperParameters" in " ".join(p) for p in run.fake.refused)
        assert len(run.fake.calls) == 1, "a refused request was sent again"
    else:
        assert run.cause == problems[0]
        assert run.fake.calls == [], "a job was requested for invalid input"


def test_the_cases_are_distinct_and_many() -> None:
    assert len({payload for payload, _ in CASES}) == len(CASES) >= 40


@pytest.mark.parametrize(("payload", "expected"), CASES, ids=[f"{i}:{p[:40]}" for i, (p, _) in enumerate(CASES)])
def test_hostile_input_check_and_state_machine_agree(hostile: Deployed, payload: str, expected: str | None) -> None:
    problems, run = outcome(hostile, payload)
    messages = hostile.spec.policy.messages()
    assert (problems[0] if problems else None) == (messages[expected] if expected else None), payload
    assert_same_verdict(hostile, payload, problems, run)


def test_every_message_is_reached_by_some_case(test_specs) -> None:
    messages = test_specs[HOSTILE].policy.messages()
    assert {expected for _, expected in CASES if expected} == set(messages)


def test_value_sagemaker_refuses_is_invalid_input_and_no_job(hostile: Deployed) -> None:
    # 2,499 characters are 2,501 as JSON: over botocore's HyperParameterValue max, which only SageMaker measures.
    payload = json.dumps({"hyperparameters": {"name": "x" * 2499}})
    problems, run = outcome(hostile, payload)
    assert problems == [hostile.spec.policy.messages()["hp_value_length"]]
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT)
    assert run.cause.startswith(REFUSED_BY_SAGEMAKER + "1 validation error(s) detected: HyperParameters.name")
    assert "(Service: SageMaker, Status Code: 400, " in run.cause
    # The AWS SDK integration names the refusal SageMakerException, as it names throttling: the cause tells
    # them apart, so the refusal is reported after its one call. No job ever exists and nothing is announced.
    assert len(run.fake.calls) == len(run.fake.refused) == 1
    assert run.fake.waits == []
    assert run.fake.created == [] and run.notifications == []


# --------------------------------------------------------------------------------------------- generic Estimator


@pytest.fixture(scope="module")
def generic(deployed_test) -> Deployed:
    return deployed_test[GENERIC]


def test_generic_estimator_sends_str_of_each_value(generic: Deployed) -> None:
    run = generic.run({}, [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(generic, run, {})
    assert run.fake.calls[0]["HyperParameters"] == {"mode": "fast", "epochs": "3", "verbose": "True", "lr": "0.5",
                                                     "nothing": "None", "layers": "[64, 32]"}


@pytest.mark.parametrize(("overrides", "sent"), [
    ({"mode": "slow.run-2", "epochs": 10, "verbose": False, "lr": 2.5e-05},
     {"mode": "slow.run-2", "epochs": "10", "verbose": "False", "lr": "2.5e-05"}),
    ({"verbose": True, "lr": 3, "epochs": -1, "mode": ""}, {"verbose": "True", "lr": "3", "epochs": "-1", "mode": ""}),
    ({"nothing": "text"}, {"nothing": "text"}),
    ({"nothing": True}, {"nothing": "True"}),
    ({"nothing": None, "lr": 1e16}, {"nothing": "None", "lr": "1e+16"}),
    ({"nothing": 7}, {"nothing": "7"}),
])
def test_generic_overrides_are_sent_as_the_sdk_would(generic: Deployed, overrides: dict[str, Any],
                                                     sent: dict[str, str]) -> None:
    run = generic.run({"hyperparameters": overrides}, [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(generic, run, {"hyperparameters": overrides})
    values = run.fake.calls[0]["HyperParameters"]
    assert {k: values[k] for k in sent} == sent == {k: str(v) for k, v in overrides.items()}


@pytest.mark.parametrize(("overrides", "key"), [
    ({"layers": [1]}, "hp_keys"),  # str() of a list cannot be written by the state machine: not overridable
    ({"nothing": [1]}, "hp_value_type"),
    ({"nothing": {"a": 1}}, "hp_value_type"),
    ({"epochs": "10"}, "hp_value_type"),
    ({"verbose": "True"}, "hp_value_type"),
    ({"mode": "slow \"run\" ü"}, "hp_unsafe.mode"),
    ({"mode": "a;b"}, "hp_unsafe.mode"),
    ({"nothing": "$(id)"}, "hp_unsafe.nothing"),
])
def test_generic_refuses_what_str_cannot_match(generic: Deployed, overrides: dict[str, Any], key: str) -> None:
    payload = json.dumps({"hyperparameters": overrides})
    problems, run = outcome(generic, payload)
    assert problems[0] == generic.spec.policy.messages()[key]
    assert_same_verdict(generic, payload, problems, run)


@pytest.mark.parametrize(("length", "key"), [(2500, None), (2501, "hp_value_length")])
def test_generic_string_length_limit_has_no_quotes(generic: Deployed, length: int, key: str | None) -> None:
    payload = json.dumps({"hyperparameters": {"mode": "m" * length}})
    problems, run = outcome(generic, payload)
    assert (problems[0] if problems else None) == (generic.spec.policy.messages()[key] if key else None)
    assert_same_verdict(generic, payload, problems, run)


# --------------------------------------------------------------------------------------------- the count ceiling
# docs/security.md, "Inter-container traffic and console overrides": a run may override "`instance_count` up to the
# spec's `max_instance_count` (default: its `instance_count`)"; anything else ends the execution in `InvalidInput`,
# before any job is created. At the boundary the ceiling equals the count: that count is accepted, one more refused.

COUNT_UP_TO_TWO = "instance_count: must be an integer from 1 to 2 (the spec's max_instance_count); the spec uses 2"


@pytest.mark.parametrize("ceiling", [{"max_instance_count": 2}, {}], ids=["given-equal", "default"])
def test_a_count_ceiling_equal_to_the_count_accepts_the_count_and_refuses_one_more(make, dev, ceiling) -> None:
    policy = sm.spec_for(make(instance_count=2, **ceiling), dev).policy
    assert policy.check({"instance_count": 2}) == []
    assert policy.check({"instance_count": 1}) == []
    assert policy.check({"instance_count": 3}) == [COUNT_UP_TO_TWO]


def test_a_ceiling_below_the_count_is_refused_in_the_spec(make, rejects) -> None:
    assert make(instance_count=2, max_instance_count=2).max_instance_count == 2
    rejects("max_instance_count", "must be at least instance_count (2)", instance_count=2, max_instance_count=1)


def test_the_state_machine_holds_a_run_to_a_ceiling_equal_to_the_count(aws, make, dev) -> None:
    workload = make(instance_count=2, max_instance_count=2)
    deployed = Deployed(sm.spec_for(workload, dev), type_requests(workload, dev))
    run = deployed.run({"instance_count": 2}, [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    assert [call["ResourceConfig"]["InstanceCount"] for call in run.fake.calls] == [2]
    run = deployed.run({"instance_count": 3}, [sage.completes()])
    assert (run.status, run.error, run.cause) == ("FAILED", sm.INVALID_INPUT, COUNT_UP_TO_TWO)
    assert run.fake.calls == []


def test_a_run_grown_to_two_nodes_in_production_encrypts_its_traffic(aws, make) -> None:
    prod = ENVIRONMENTS["prod"]
    workload = make(instance_count=1, max_instance_count=2)
    deployed = Deployed(sm.spec_for(workload, prod), type_requests(workload, prod))
    run = deployed.run({"instance_count": 2}, [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    [request] = run.fake.calls
    assert request["ResourceConfig"]["InstanceCount"] == 2
    assert request.get("EnableInterContainerTrafficEncryption") is True


# Beside the cases above, random inputs built from the hostile spec's own names and every JSON type: the two
# implementations must agree on each (Hypothesis shrinks a disagreement to its smallest input).
_NAMES = st.sampled_from(["epochs", "lr", "name", "flag", "layers", "opts", "extra", "warmup-steps", "opt.beta", "0th",
                          "data/path", "big", "nope", "EPOCHS", "sagemaker_program", "", "epochs]"])
# The spec property's JSON values, with numbers beyond a double and at this spec's limits (count 4, max_run 7200).
_VALUES = st.recursive(JSON_SCALARS | st.integers(-(2**70), 2**70) | st.sampled_from([0, 1, 4, 5, 7200, 7201, 2.0, 1e3]),
                       lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
                       max_leaves=4)
_INPUTS = st.fixed_dictionaries({}, optional={
    "hyperparameters": st.dictionaries(_NAMES, _VALUES, max_size=3) | _VALUES,
    "instance_count": _VALUES, "max_run": _VALUES, "unknown": _VALUES,
}) | _VALUES


@settings(max_examples=int(os.environ.get("OVERRIDE_PROPERTY_EXAMPLES", "30")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(given_input=_INPUTS)
def test_random_input_check_and_state_machine_agree(hostile: Deployed, given_input: Any) -> None:
    payload = json.dumps(given_input)
    note(payload)
    problems, run = outcome(hostile, payload)
    assert_same_verdict(hostile, payload, problems, run)
