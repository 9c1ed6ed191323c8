"""Fixtures for the state-machine tests: every shipped workload and the test specs, compiled once, run in moto."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from moto import mock_aws

from compiler import state_machine as sm
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from tests.compiler.state_machine.harness import Deployed, type_requests
from tests.compiler.state_machine.projects import load_test_workloads
from tests.project import ENVIRONMENTS, loaded

# moto's interpreter logs every missing path that a Choice's IsPresent probes, at error level.
logging.getLogger("moto.stepfunctions").setLevel(logging.CRITICAL)

WORKLOADS: dict[str, Workload] = {w.name: w for w in loaded().workloads("dev")}
NAMES = sorted(WORKLOADS)


@pytest.fixture(scope="session")
def dev() -> Environment:
    return ENVIRONMENTS["dev"]


@pytest.fixture(scope="session")
def specs(dev) -> dict[str, sm.MachineSpec]:
    """MachineSpecs of the shipped workloads, with the real image lookup (as synth does it)."""
    return {name: sm.spec_for(w, dev) for name, w in WORKLOADS.items()}


@pytest.fixture(scope="session")
def test_workloads(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Workload]:
    """The specs of tests/compiler/state_machine/projects.py, loaded from a throwaway project for dev."""
    workloads, _ = load_test_workloads(tmp_path_factory.mktemp("project"))
    return workloads


@pytest.fixture(scope="session")
def test_specs(test_workloads, dev) -> dict[str, sm.MachineSpec]:
    return {name: sm.spec_for(w, dev) for name, w in test_workloads.items()}


@pytest.fixture(scope="module")
def aws() -> Iterator[None]:
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        yield


@pytest.fixture(scope="module")
def deployed(aws, specs, dev) -> dict[str, Deployed]:
    """Each shipped workload's state machine, created in moto on first use."""

    class Lazy(dict):
        def __missing__(self, name: str) -> Deployed:
            self[name] = Deployed(specs[name], type_requests(WORKLOADS[name], dev))
            return self[name]

    return Lazy()


@pytest.fixture(scope="module")
def deployed_test(aws, test_specs, test_workloads, dev) -> dict[str, Deployed]:
    """Each test spec's state machine, created in moto on first use."""

    class Lazy(dict):
        def __missing__(self, name: str) -> Deployed:
            self[name] = Deployed(test_specs[name], type_requests(test_workloads[name], dev))
            return self[name]

    return Lazy()
