"""Overrides held to SageMaker's HyperParameters limits (issue 21): value length, name length, number of entries.

The numbers are botocore's (CreateTrainingJob: HyperParameterValue max 2500, HyperParameterKey max 256,
HyperParameters max 100 entries); the code reads them from `compiler.sdk.limits`, the tests write them out.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from compiler import state_machine as sm
from compiler.errors import SpecError
from compiler.sdk.limits import limits
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import Deployed

HOSTILE = "sm-hostile"


@pytest.fixture(scope="module")
def hostile(deployed_test) -> Deployed:
    return deployed_test[HOSTILE]


def test_the_limits_are_botocores() -> None:
    lim = limits()
    assert (lim.hyperparameter_value_max, lim.hyperparameter_key_max, lim.hyperparameters_max) == (2500, 256, 100)


def test_a_3000_character_value_is_invalid_input_and_no_job_exists(hostile: Deployed) -> None:
    payload = json.dumps({"hyperparameters": {"name": "x" * 3000}})
    assert hostile.spec.policy.check(json.loads(payload)) == [
        "hyperparameters: a value is longer than SageMaker's 2500 characters as sent; pass large values as a file in "
        "an input channel"]
    run = hostile.run(payload, [sage.completes()])
    assert (run.status, run.error) == ("FAILED", sm.INVALID_INPUT)
    assert "HyperParameters.name" in run.cause and "validation error(s) detected" in run.cause
    assert run.fake.created == [] and run.notifications == [] and run.fake.stopped == []
    assert len(run.fake.calls) == 1, "a refused request was sent again"


@pytest.mark.parametrize("length", [256, 257, 3000])
def test_a_name_the_spec_lacks_is_refused_whatever_its_length(hostile: Deployed, length: int) -> None:
    payload = json.dumps({"hyperparameters": {"k" * length: "x"}})
    message = hostile.spec.policy.messages()["hp_keys"]
    assert hostile.spec.policy.check(json.loads(payload)) == [message]
    run = hostile.run(payload, [sage.completes()])
    assert (run.status, run.error, run.cause) == ("FAILED", sm.INVALID_INPUT, message)
    assert run.fake.calls == []


def test_overrides_never_add_entries(hostile: Deployed) -> None:
    """Every name a run may override is already in the compiled request: the merge cannot exceed 100 entries."""
    everything = {"epochs": 9, "lr": 0.01, "name": "b", "flag": True, "layers": [3], "opts": {}, "extra": "e",
                  "warmup-steps": 1, "opt.beta": 0.5, "0th": "", "data/path": "p", "big": 1}
    run = hostile.run(json.dumps({"hyperparameters": everything}), [sage.completes()])
    assert run.status == "SUCCEEDED", run.cause
    assert set(run.fake.calls[0]["HyperParameters"]) == set(hostile.spec.request["HyperParameters"])


def test_a_spec_over_the_name_or_entry_limit_stops_the_build(test_specs) -> None:
    spec = test_specs[HOSTILE]
    compiled = dict(spec.request["HyperParameters"])
    many = dataclasses.replace(spec, request={**spec.request, "HyperParameters": {
        **compiled, **{f"h{i}": "1" for i in range(101 - len(compiled))}}})
    with pytest.raises(SpecError, match="101 entries with the SDK's own; SageMaker takes at most 100"):
        sm.build_definition(many)
    long_name = "n" * 257
    policy = dataclasses.replace(spec.policy, hyperparameters={**spec.policy.hyperparameters, long_name: 1})
    named = dataclasses.replace(spec, policy=policy, request={**spec.request, "HyperParameters": {
        **compiled, long_name: "1"}})
    with pytest.raises(SpecError, match="a name of at most 256 characters"):
        sm.build_definition(named)
    added = dataclasses.replace(spec, policy=policy)
    with pytest.raises(SpecError, match="overridable but not in the compiled request"):
        sm.build_definition(added)
