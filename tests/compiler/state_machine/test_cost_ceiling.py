"""The per-run cost ceiling (`max_run_cost_usd`, issue 25), executed in moto.

Prices are the catalog's rows (compiler/facts/data/prices/us-east-1.json): ml.g5.2xlarge 1.515 and
ml.g5.4xlarge 2.03 USD per instance-hour. The ceiling of 3.045 USD buys, at the higher price, 5400 s with one
instance (3.045 x 3600 / 2.03) and 2700 s with two.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from compiler import state_machine as sm
from compiler.compilation.overrides import OverridePolicy
from compiler.errors import SpecError
from compiler.spec import load_workloads
from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import Deployed, deploy_values, expected_request, type_requests
from tests.compiler.state_machine.projects import PYTORCH, write_project

CEILING = {
    "name": "sm-ceiling", **PYTORCH, "instance_type": "ml.g5.2xlarge", "instance_count": 1, "max_instance_count": 2,
    "max_run": 3600, "checkpoints": True, "max_run_cost_usd": 3.045, "hyperparameters": {"max_steps": 100},
    "capacity_retry": {"max_attempts": 3, "wait_seconds": 60, "fallback_instance_types": ["ml.g5.4xlarge"]},
    "environments": {"dev": {}},  # us-east-1's prices; prod's region has none (tests/compiler/rules/test_cost_ceiling.py)
}
CAPACITY = sage.capacity_error().reason


@pytest.fixture(scope="module")
def ceiling(aws, tmp_path_factory: pytest.TempPathFactory) -> Deployed:
    project = write_project(tmp_path_factory.mktemp("ceiling"), {"sm-ceiling": CEILING})
    envs = project.environments()
    workload = load_workloads(project, envs).by_environment["dev"]["sm-ceiling"]
    return Deployed(sm.spec_for(workload, envs["dev"]), type_requests(workload, envs["dev"]))


def runtimes(run: Any) -> list[int]:
    return [c["StoppingCondition"]["MaxRuntimeInSeconds"] for c in run.fake.calls]


def test_the_budgets_are_the_ceiling_at_the_highest_price(ceiling: Deployed) -> None:
    assert dict(ceiling.spec.policy.budgets) == {1: 5400, 2: 2700}


@pytest.mark.parametrize("given", [{"instance_count": 2}, {"instance_count": 2, "max_run": 2701}])
def test_a_start_whose_worst_case_exceeds_the_ceiling_is_invalid_input_without_a_job(ceiling: Deployed,
                                                                                    given: dict[str, Any]) -> None:
    # 2 x 2.03 USD/h x 2701 s = 3.0461 USD > 3.045 (and 3600 s: 4.06 USD)
    run = ceiling.run(given, [sage.completes()])
    assert (run.status, run.error) == ("FAILED", "InvalidInput")
    assert run.fake.calls == []
    assert run.cause == ("max_run x instance_count: the worst case exceeds the cost ceiling; with instance_count 2 "
                         "max_run may be at most 2700 seconds (max_run_cost_usd 3.045 USD per run, at 2.03 USD per "
                         "instance-hour, the highest of its instance types, us-east-1 list prices as of 2026-11); "
                         "lower max_run or instance_count, or raise max_run_cost_usd in the spec")
    assert OverridePolicy.check(ceiling.spec.policy, given) == [run.cause]  # what trainctl start says


def test_a_start_at_the_ceiling_runs(ceiling: Deployed) -> None:
    given = {"instance_count": 2, "max_run": 2700}  # 2 x 2.03 x 2700 / 3600 = 3.045 USD, the ceiling itself
    assert ceiling.spec.policy.check(given) == []
    run = ceiling.run(given, [sage.completes(billable_seconds=2000)])
    assert run.status == "SUCCEEDED", run.cause
    assert runtimes(run) == [2700]
    assert run.output is not None
    assert (run.output["cost_ceiling_usd"], run.output["max_runtime_seconds"]) == (3.045, 2700)


def test_relaunches_get_only_the_run_time_left_and_the_run_stops_when_it_is_spent(ceiling: Deployed) -> None:
    # attempt 0 (g5.2xlarge): granted 3600 s of 5400, fails for capacity after billing 3000 s: 2400 s left;
    # attempt 1 (g5.4xlarge): granted 2400 s, fails for capacity after billing 2400 s: nothing left, no attempt 2
    script = [sage.Outcome("fail", reason=CAPACITY, billable_seconds=3000, training_seconds=3000),
              sage.Outcome("fail", reason=CAPACITY, billable_seconds=2400, training_seconds=2400),
              sage.completes()]
    run = ceiling.run({}, script)
    assert (run.status, run.error) == ("FAILED", "CostCeilingReached")
    assert runtimes(run) == [3600, 2400]
    assert [c["ResourceConfig"]["InstanceType"] for c in run.fake.calls] == ["ml.g5.2xlarge", "ml.g5.4xlarge"]
    assert "CostCeilingReached after 2 attempt(s): max_run_cost_usd 3.045 USD" in (run.cause or "")
    # otherwise each request is the compiled one
    tag = f"{ceiling.arn.replace(':stateMachine:', ':execution:')}:{run.name}"
    for call, seconds in zip(run.fake.calls, (3600, 2400), strict=True):
        expected = copy.deepcopy(expected_request(ceiling, call["TrainingJobName"], tag, {}))
        expected["StoppingCondition"]["MaxRuntimeInSeconds"] = seconds
        assert call == expected
    [note] = run.notifications
    assert (note["status"], note["budget_left_seconds"], note["attempts"]) == ("CostCeilingReached", 0, 2)
    assert (note["job_name"], note["billable_seconds"]) == (run.fake.calls[1]["TrainingJobName"], 2400)  # the last job


def test_a_relaunch_with_some_budget_left_is_shortened_to_it(ceiling: Deployed) -> None:
    script = [sage.Outcome("fail", reason=CAPACITY, billable_seconds=5399, training_seconds=5399),
              sage.completes(billable_seconds=1)]
    run = ceiling.run({"max_run": 3600}, script)
    assert run.status == "SUCCEEDED", run.cause
    assert runtimes(run) == [3600, 1]
    assert run.output is not None and run.output["budget_left_seconds"] == 1


def test_without_a_ceiling_nothing_changes(ceiling: Deployed, tmp_path: Path) -> None:
    project = write_project(tmp_path, {"sm-ceiling": {k: v for k, v in CEILING.items() if k != "max_run_cost_usd"}})
    envs = project.environments()
    workload = load_workloads(project, envs).by_environment["dev"]["sm-ceiling"]
    definition = sm.build_definition(sm.spec_for(workload, envs["dev"]))
    text = sm.definition_string(definition)
    assert "budget" not in text and "Grant run time" not in text and "CostCeilingReached" not in text
    train = definition["States"]["Train"]["Parameters"]["StoppingCondition"]
    assert train["MaxRuntimeInSeconds.$"] == "$.config.max_run"


def test_asl_validator_accepts_the_ceilings_definition(ceiling: Deployed) -> None:
    from tests.compiler.state_machine.test_asl import TOPIC, pytestmark, validate_asl

    if any(mark.args[0] for mark in [pytestmark]):
        pytest.skip("needs node and npm's asl-validator (npm ci)")
    definition = sm.build_definition(ceiling.spec)
    text = sm.substitute_definition(sm.definition_string(definition), deploy_values(ceiling.spec, TOPIC))
    results = validate_asl({"ceiling": definition, "substituted": json.loads(text)})
    assert {k: v["errors"] for k, v in results.items() if not v["isValid"]} == {}


@pytest.mark.parametrize("given", [
    {"instance_count": 2, "max_run": 2700.5},  # a fraction: max_run's own message first
    {"instance_count": 3, "max_run": 100},  # beyond max_instance_count: the count's message
    {"instance_count": 2, "max_run": 2701, "hyperparameters": {"nope": 1}},  # the ceiling before hyperparameters
    {"instance_count": 1, "max_run": 3601},  # beyond the spec's max_run: its own message, not the ceiling's
])
def test_the_state_machine_and_check_give_the_same_first_refusal(ceiling: Deployed, given: dict[str, Any]) -> None:
    run = ceiling.run(given, [sage.completes()])
    assert (run.status, run.error, run.fake.calls) == ("FAILED", "InvalidInput", [])
    assert ceiling.spec.policy.check(given)[0] == run.cause


def test_a_heterogeneous_cluster_is_held_to_its_ceiling(aws, tmp_path: Path) -> None:
    # 1 x ml.p4d.24xlarge (37.688) + 2 x ml.c5.4xlarge (0.816): 39.32 USD per hour; 19.66 USD buys 1800 s
    hetero = {
        "name": "sm-ceiling-groups", **PYTORCH, "max_run": 3600, "checkpoints": True, "max_run_cost_usd": 19.66,
        "instance_groups": [
            {"instance_group_name": "gpu", "instance_type": "ml.p4d.24xlarge", "instance_count": 1},
            {"instance_group_name": "cpu", "instance_type": "ml.c5.4xlarge", "instance_count": 2}],
        "distribution": {"torch_distributed": {"enabled": True}, "instance_groups": ["gpu"]},
        "capacity_retry": {"max_attempts": 2, "wait_seconds": 60}, "environments": {"dev": {}},
    }
    project = write_project(tmp_path, {"sm-ceiling-groups": hetero})
    envs = project.environments()
    with pytest.raises(SpecError, match=r"raise max_run_cost_usd to at least 39\.32 or lower max_run to 1800"):
        load_workloads(project, envs)
    hetero["max_run"] = 1800
    project = write_project(tmp_path, {"sm-ceiling-groups": hetero})
    workload = load_workloads(project, envs).by_environment["dev"]["sm-ceiling-groups"]
    d = Deployed(sm.spec_for(workload, envs["dev"]))
    assert dict(d.spec.policy.budgets) == {3: 1800}
    script = [sage.Outcome("fail", reason=CAPACITY, billable_seconds=1000, training_seconds=1000), sage.completes()]
    run = d.run({}, script)
    assert run.status == "SUCCEEDED", run.cause
    assert runtimes(run) == [1800, 800]
