"""`concurrent_runs:` in a spec: off by default, so a run started while another is in progress ends with
AlreadyRunning (issue 21); on, the state machine has no such check and its role may not list executions."""

from __future__ import annotations

from compiler.state_machine.asl import json_objects
from compiler.state_machine.definition import build_definition
from compiler.state_machine.machine import spec_for

LIST_EXECUTIONS = "arn:aws:states:::aws-sdk:sfn:listExecutions"


def _resources(definition: dict) -> set[str]:
    return {node["Resource"] for node in json_objects(definition) if node.get("Type") == "Task"}


def test_by_default_a_run_checks_for_another_in_progress(make, envs) -> None:
    workload = make()
    assert workload.concurrent_runs is False
    spec = spec_for(workload, envs["dev"])
    assert spec.concurrent_runs is False
    assert LIST_EXECUTIONS in _resources(build_definition(spec))


def test_concurrent_runs_true_removes_the_check(make, envs) -> None:
    spec = spec_for(make(concurrent_runs=True), envs["dev"])
    assert spec.concurrent_runs is True
    assert LIST_EXECUTIONS not in _resources(build_definition(spec))


def test_concurrent_runs_must_be_a_boolean(rejects) -> None:
    rejects("concurrent_runs", "true or false", concurrent_runs="sometimes")
