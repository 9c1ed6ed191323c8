"""Helpers for spec tests: a valid base spec in a temporary project, changed one field at a time."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from compiler import state_machine as sm
from compiler.errors import SpecError
from compiler.inputs.model import Workload
from compiler.spec import parse_workload
from tests.project import ENVIRONMENTS, loaded

BASE: dict[str, Any] = {
    "name": "demo",
    "framework": "pytorch",
    "framework_version": "2.3.0",
    "py_version": "py311",
    "entry_point": "train.py",
    "source_dir": "code",
    "instance_type": "ml.p4d.24xlarge",
    "instance_count": 2,
    "distribution": {"torch_distributed": {"enabled": True}},
    "hyperparameters": {"epochs": 3, "lr": 0.1, "name": "x"},
}


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("print('hi')\n")
    (tmp_path / "code" / "run.sh").write_text("#!/bin/sh\n")
    return tmp_path


@pytest.fixture
def envs():
    return ENVIRONMENTS


def build(spec_dir: Path, raw: dict[str, Any]) -> Workload:
    return parse_workload(raw, source="demo.yaml", spec_dir=spec_dir, project_root=spec_dir)


@pytest.fixture
def make(spec_dir: Path):
    """Build a workload from BASE with changes; a value of ... removes the key."""

    def make_workload(**changes: Any) -> Workload:
        raw = copy.deepcopy(BASE)
        for key, value in changes.items():
            if value is ...:
                raw.pop(key, None)
            else:
                raw[key] = value
        return build(spec_dir, raw)

    return make_workload


@pytest.fixture
def rejects(make):
    """Assert that a change is rejected with a message naming the field and containing the fix."""

    def check(field: str, *words: str, **changes: Any) -> str:
        with pytest.raises(SpecError) as info:
            make(**changes)
        text = str(info.value)
        matching = [str(p) for p in info.value.problems if p.field == field]
        assert matching, f"no problem reported for {field}; got:\n{text}"
        joined = "\n".join(matching)
        for word in words:
            assert word in joined, f"{word!r} not in {joined!r}"
        assert all(str(p).startswith("demo.yaml: ") for p in info.value.problems)
        return joined

    return check


@pytest.fixture(scope="module")
def definition() -> dict[str, Any]:
    """A shipped workload's definition in dev (gpt-smddp: its run may stop its own job, and relaunches on capacity
    failures), for the definition checks to plant problems in."""
    workload = next(w for w in loaded().workloads("dev") if w.name == "gpt-smddp")
    return sm.build_definition(sm.spec_for(workload, ENVIRONMENTS["dev"]))
