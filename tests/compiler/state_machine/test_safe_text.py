"""Overrides cannot carry shell commands (issue 23): `check()` and the state machine refuse the same characters.

The training toolkit up to 5.1.2 runs the job's command line through a shell, so every character below, in a
string override, in a string inside a list or object, or in an object's key, must end the execution with
`InvalidInput` before any job, with the same message `trainctl start` prints. Expected characters are written out
here, not read from `compiler.compilation.overrides`.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from compiler import state_machine as sm
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import Deployed, check_requests, type_requests

HOSTILE = "sm-hostile"
# Shell metacharacters, quotes, whitespace and control characters, escapes, globs, and text beyond ASCII.
FORBIDDEN = [" ", '"', "'", ";", "|", "&", "$", "`", "<", ">", "(", ")", "*", "?", "~", "!", "#", "%", "^", "\\",
             "\n", "\r", "\t", "\x00", "\x7f", "\u2028", "é", "😀"]
# Refused in a plain string, allowed in a list's or object's JSON punctuation.
PUNCTUATION = ["[", "]", "{", "}", ","]
SAFE = "AZaz09._:/=+@-"


@pytest.fixture(scope="module")
def hostile(deployed_test) -> Deployed:
    return deployed_test[HOSTILE]


def refused_in_both(d: Deployed, overrides: dict, key: str) -> None:
    payload = {"hyperparameters": overrides}
    message = d.spec.policy.messages()[key]
    assert d.spec.policy.check(payload) == [message]
    run = d.run(json.dumps(payload), [sage.completes()])
    assert (run.status, run.error, run.cause) == ("FAILED", sm.INVALID_INPUT, message)
    assert run.fake.calls == [] and run.notifications == []


@pytest.mark.parametrize("char", FORBIDDEN + PUNCTUATION, ids=repr)
def test_a_forbidden_character_in_a_string_is_refused(hostile: Deployed, char: str) -> None:
    refused_in_both(hostile, {"name": f"x{char}cmd"}, "hp_unsafe.name")


@pytest.mark.parametrize("char", FORBIDDEN, ids=repr)
def test_a_forbidden_character_inside_a_list_or_key_is_refused(hostile: Deployed, char: str) -> None:
    refused_in_both(hostile, {"layers": [1, f"x{char}"]}, "hp_unsafe.layers")
    refused_in_both(hostile, {"opts": {f"k{char}": 1}}, "hp_unsafe.opts")


@pytest.mark.parametrize("value", ["", "x", SAFE, "s3://bucket/prefix/k=v", "user@example.com"])
def test_safe_text_is_accepted_and_sent(hostile: Deployed, value: str) -> None:
    overrides = {"hyperparameters": {"name": value, "layers": [value, {value or "k": [1]}], "extra": value}}
    assert hostile.spec.policy.check(overrides) == []
    run = hostile.run(json.dumps(overrides), [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(hostile, run, overrides)


def test_the_issue_example_is_refused(hostile: Deployed) -> None:
    refused_in_both(hostile, {"name": "x;cmd;echo"}, "hp_unsafe.name")
    assert hostile.spec.policy.messages()["hp_unsafe.name"].startswith("hyperparameters.name: text may hold only")


# ------------------------------------------------------------------------------------------------------ choices


@pytest.fixture(scope="module")
def with_choices(aws, test_specs, test_workloads, dev) -> Deployed:
    """The hostile spec with `name` limited to two values (any text in them, as the spec's author decided)."""
    spec = test_specs[HOSTILE]
    policy = dataclasses.replace(spec.policy, choices={"name": ("run", "gpt 125m")})
    spec = dataclasses.replace(spec, workload=f"{HOSTILE}-choices", policy=policy)  # its own state machine
    return Deployed(spec, type_requests(test_workloads[HOSTILE], dev))


@pytest.mark.parametrize("value", ["run", "gpt 125m"])
def test_a_declared_choice_is_accepted_even_with_a_space(with_choices: Deployed, value: str) -> None:
    overrides = {"hyperparameters": {"name": value}}
    assert with_choices.spec.policy.check(overrides) == []
    run = with_choices.run(json.dumps(overrides), [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(with_choices, run, overrides)


@pytest.mark.parametrize("value", ["walk", "Run", "run ", "gpt", ""])
def test_a_value_outside_the_choices_is_refused_however_safe(with_choices: Deployed, value: str) -> None:
    refused_in_both(with_choices, {"name": value}, "hp_choice.name")
    assert with_choices.spec.policy.messages()["hp_choice.name"] == (
        "hyperparameters.name: must be one of run, gpt 125m (the spec's choices for name); add the value to its "
        "choices in the spec to allow it")


def test_choices_leave_the_other_names_to_the_character_rule(with_choices: Deployed) -> None:
    refused_in_both(with_choices, {"name": "run", "0th": "a;b"}, "hp_unsafe.0th")
    assert "hp_unsafe.name" not in with_choices.spec.policy.messages()


# The toolkit passes each hyperparameter as `--name value`, an object as `k=v,...` with its keys sorted
# (sagemaker_training.mapping.to_cmd_args): a value starting with "-" reaches the script as an option of its own.
@pytest.mark.parametrize(("name", "value"), [("name", "--checkpoint_dir=/tmp"), ("name", "-"), ("0th", "-x"),
                                             ("extra", "--max_steps=9"), ("opts", {"a": 1, "-b": 2}),
                                             ("layers", ["x", "-y"]), ("opts", {"k": {"-n": 1}})])
def test_a_string_read_as_an_option_is_refused(hostile: Deployed, name: str, value: str) -> None:
    refused_in_both(hostile, {name: value}, f"hp_unsafe.{name}")


def test_a_dash_elsewhere_or_a_negative_number_is_accepted(hostile: Deployed) -> None:
    overrides = {"hyperparameters": {"name": "x-", "0th": "a--b", "layers": [-1, "x-y", {"k-": "v-"}], "extra": -5}}
    assert hostile.spec.policy.check(overrides) == []
    run = hostile.run(json.dumps(overrides), [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    check_requests(hostile, run, overrides)
