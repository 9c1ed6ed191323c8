"""The input check does not depend on the key order of `States.JsonMerge` or `States.JsonToString` (issue 21).

AWS documents neither order. Here moto's two functions are made to write every object's keys reversed, or
sorted, and the hostile inputs must still get `check()`'s verdict: the checks count pieces and test characters,
they never compare JSON texts.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import pytest
from moto.stepfunctions.parser.asl.component.intrinsic.function.statesfunction.json_manipulation import (
    json_merge,
    json_to_string,
)

from compiler import state_machine as sm
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import Deployed
from tests.compiler.state_machine.test_overrides import CASES

HOSTILE = "sm-hostile"
ORDERS: dict[str, Callable[[list[str]], list[str]]] = {"reversed": lambda keys: keys[::-1], "sorted": sorted}
# Every case about names (top-level and hyperparameters), and every accepted one.
KEY_CASES = [(p, e) for p, e in CASES if e in ("keys", "hp_keys", None)]


def reorder(value: Any, order: Callable[[list[str]], list[str]]) -> Any:
    if isinstance(value, dict):
        return {k: reorder(value[k], order) for k in order(list(value))}
    if isinstance(value, list):
        return [reorder(v, order) for v in value]
    return value


@contextlib.contextmanager
def key_order(order: Callable[[list[str]], list[str]]) -> Iterator[list[int]]:
    """JsonMerge's result and JsonToString's text with their keys in `order`; yields a count of the calls."""
    calls: list[int] = []
    merge, to_string = json_merge.JsonMerge._eval_body, json_to_string.JsonToString._eval_body

    def merged(self: Any, env: Any) -> None:
        merge(self, env)
        env.stack.append(reorder(env.stack.pop(), order))
        calls.append(1)

    def written(self: Any, env: Any) -> None:
        to_string(self, env)
        env.stack.append(json.dumps(reorder(json.loads(env.stack.pop()), order), separators=(",", ":")))
        calls.append(1)

    with (mock.patch.object(json_merge.JsonMerge, "_eval_body", merged),
          mock.patch.object(json_to_string.JsonToString, "_eval_body", written)):
        yield calls


@pytest.fixture(scope="module")
def hostile(deployed_test) -> Deployed:
    return deployed_test[HOSTILE]


def test_the_cases_cover_names_and_acceptance() -> None:
    assert {e for _, e in KEY_CASES} == {"keys", "hp_keys", None}
    assert len(KEY_CASES) >= 25


@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize(("payload", "expected"), KEY_CASES, ids=[p[:40] for p, _ in KEY_CASES])
def test_verdicts_do_not_depend_on_key_order(hostile: Deployed, order: str, payload: str,
                                             expected: str | None) -> None:
    problems = hostile.spec.policy.check(json.loads(payload))
    with key_order(ORDERS[order]) as calls:
        run = hostile.run(payload, [sage.completes()])
    assert calls, "the reordering was not used"
    if expected is None:
        assert problems == [] and run.status == "SUCCEEDED", run.cause
        return
    assert problems[0] == hostile.spec.policy.messages()[expected]
    assert (run.status, run.error, run.cause) == ("FAILED", sm.INVALID_INPUT, problems[0])
    assert run.fake.calls == []
