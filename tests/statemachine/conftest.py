"""Fixtures for the state-machine tests: every shipped workload, compiled once, run in moto once deployed."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from moto import mock_aws

from tests.statemachine.harness import Deployed
from compiler import state_machine as sm
from compiler.environments import load_environments
from compiler.spec import load_all_workloads

# moto's interpreter logs every missing path that a Choice's IsPresent probes, at error level.
logging.getLogger("moto.stepfunctions").setLevel(logging.CRITICAL)

WORKLOADS = {w.name: w for w in load_all_workloads()}
NAMES = sorted(WORKLOADS)


@pytest.fixture(scope="session")
def dev():
    return load_environments()["dev"]


@pytest.fixture(scope="session")
def specs(dev) -> dict[str, sm.MachineSpec]:
    """MachineSpecs of the shipped workloads, with the real image lookup (as synth does it)."""
    return {name: sm.spec_for(w, dev) for name, w in WORKLOADS.items()}


@pytest.fixture(scope="module")
def aws() -> Iterator[None]:
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        yield


@pytest.fixture(scope="module")
def deployed(aws, specs) -> dict[str, Deployed]:
    """Each workload's state machine, created in moto on first use."""

    class Lazy(dict):
        def __missing__(self, name: str) -> Deployed:
            self[name] = Deployed(specs[name])
            return self[name]

    return Lazy()
