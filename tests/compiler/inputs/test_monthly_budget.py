"""`monthly_budget_usd` in cdk.json (issue 25): a positive amount of dollars, or absent for no budget."""

from __future__ import annotations

import copy
import json

import pytest

from compiler.errors import SpecError
from compiler.inputs.environments import CONTEXT_KEY, parse_environments
from tests.project import PROJECT

SHIPPED = json.loads(PROJECT.cdk_json.read_text())["context"][CONTEXT_KEY]


def _with(value: object) -> dict:
    raw = copy.deepcopy(SHIPPED)
    raw["prod"]["monthly_budget_usd"] = value
    return raw


def test_the_shipped_dev_environment_has_a_budget_and_prod_none() -> None:
    envs = parse_environments(SHIPPED)
    assert envs["dev"].monthly_budget_usd == 2000
    assert envs["prod"].monthly_budget_usd is None


@pytest.mark.parametrize("value", [0.01, 1, 2500.5, 1_000_000_000])
def test_a_positive_amount_is_taken(value: float) -> None:
    assert parse_environments(_with(value))["prod"].monthly_budget_usd == value


@pytest.mark.parametrize("value", [0, 0.009, -5, 1_000_000_001, "2000", True, float("inf")])
def test_anything_else_is_refused_naming_the_setting(value: object) -> None:
    with pytest.raises(SpecError) as info:
        parse_environments(_with(value))
    (problem,) = info.value.problems
    assert problem.field == "prod.monthly_budget_usd" and "must be a number from 0.01" in problem.message
