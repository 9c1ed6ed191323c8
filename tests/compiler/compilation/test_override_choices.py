"""`choices:` in a spec: the only values a run may give a text hyperparameter (issue 23), read into the policy that
`trainctl start` and the state machine both enforce. Refusals name the field and the fix."""

from __future__ import annotations

import pytest

from compiler.compilation.overrides import OverridePolicy


def test_choices_reach_the_override_policy(make) -> None:
    workload = make(choices={"name": ["x", "gpt 125m", "x"]})
    policy = OverridePolicy.of(workload, "us-east-1")
    assert policy.choices == {"name": ("x", "gpt 125m")}
    assert policy.check({"hyperparameters": {"name": "gpt 125m"}}) == []
    assert policy.check({"hyperparameters": {"name": "y"}}) == [
        "hyperparameters.name: must be one of x, gpt 125m (the spec's choices for name); add the value to its "
        "choices in the spec to allow it"]
    assert "hp_unsafe.name" not in policy.messages()


def test_without_choices_text_is_held_to_the_safe_characters(make) -> None:
    policy = OverridePolicy.of(make(), "us-east-1")
    assert policy.choices == {}
    assert policy.check({"hyperparameters": {"name": "gpt-125m"}}) == []
    assert policy.check({"hyperparameters": {"name": "x;cmd;echo"}}) == [policy.messages()["hp_unsafe.name"]]


@pytest.mark.parametrize(("choices", "words"), [
    ({"epochs": ["3"]}, ("text hyperparameters", "remove it from choices")),
    ({"missing": ["a"]}, ("text hyperparameters", "add it to hyperparameters")),
    ({"name": "x"}, ("a list of text values",)),
    ({"name": []}, ("a list of text values",)),
    ({"name": ["x", 1]}, ("a list of text values",)),
    ({"name": ["y", "z"]}, ("must include the spec's own value 'x'",)),
    ({"name": ["x", "v" * 2499]}, ("longer than SageMaker's 2500 characters",)),
])
def test_bad_choices_are_refused_naming_the_field(rejects, choices: dict, words: tuple[str, ...]) -> None:
    [name] = choices
    rejects(f"choices.{name}", *words, choices=choices)
