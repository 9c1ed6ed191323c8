"""The run metrics each state machine publishes itself (Step Functions has none for capacity): one datum per
relaunch and one per run that ran out of relaunches, per workload and for the environment, read back from moto's
CloudWatch. The dashboard and the capacity alarm read exactly these names (tests/platform/test_monitoring.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.compiler.state_machine import sagemaker_sync as sage
from tests.compiler.state_machine.harness import REGION

NAME = "gpt-torchrun-fsx"


def counted(metric: str, dimensions: list[dict[str, str]]) -> float:
    """The sum of the datapoints published with exactly these dimensions, as CloudWatch matches them (moto's
    GetMetricStatistics also counts datapoints with more dimensions than asked for, so read its store)."""
    from moto.cloudwatch.models import cloudwatch_backends
    from moto.core import DEFAULT_ACCOUNT_ID

    wanted = sorted((d["Name"], d["Value"]) for d in dimensions)
    return sum(d.value for d in cloudwatch_backends[DEFAULT_ACCOUNT_ID][REGION].metric_data
               if d.namespace == "TrainingPlatform" and d.name == metric
               and sorted((x.name, x.value) for x in d.dimensions) == wanted)


def dims(env: str, workload: str | None = None) -> list[dict[str, str]]:
    found = [{"Name": "Environment", "Value": env}]
    return found + ([{"Name": "Workload", "Value": workload}] if workload else [])


def test_a_relaunch_and_exhausted_capacity_are_counted(deployed: Any, specs: Any) -> None:
    spec = specs[NAME]
    relaunches = spec.capacity_relaunches
    assert relaunches >= 1, "the shipped torchrun workload relaunches on capacity errors"
    d = deployed[NAME]

    ok = d.run({}, [sage.capacity_error(), sage.completes()])
    assert ok.status == "SUCCEEDED", ok.cause
    assert counted("CapacityRelaunches", dims("dev", NAME)) == 1
    assert counted("CapacityRelaunches", dims("dev")) == 1
    assert counted("CapacityExhausted", dims("dev")) == 0

    spent = d.run({}, [sage.capacity_error() for _ in range(relaunches + 1)])
    assert spent.error == "InsufficientCapacity"
    assert counted("CapacityRelaunches", dims("dev", NAME)) == 1 + relaunches
    assert counted("CapacityExhausted", dims("dev", NAME)) == 1
    assert counted("CapacityExhausted", dims("dev")) == 1


def test_a_run_without_capacity_trouble_publishes_nothing(deployed: Any) -> None:
    run = deployed["gpt-smddp"].run({}, [sage.completes()])
    assert run.status == "SUCCEEDED"
    assert counted("CapacityRelaunches", dims("dev", "gpt-smddp")) == 0


@pytest.mark.parametrize("state", ["Count relaunch", "Count exhausted capacity"])
def test_a_metric_that_cannot_be_written_never_changes_the_run(specs: Any, state: str) -> None:
    from compiler import state_machine as sm

    definition = sm.build_definition(specs[NAME])
    task = definition["States"][state]
    assert task["Catch"] == [{"ErrorEquals": ["States.ALL"], "ResultPath": None, "Next": task["Next"]}]
    assert task["ResultPath"] is None
