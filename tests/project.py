"""The repository's own project (cdk.json, workloads/) as the tests read it: the same files synth reads."""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path

import pytest

from compiler.inputs.environments import CONTEXT_KEY, Environment
from compiler.inputs.project import Project
from compiler.spec import Loaded, load_workloads, workload_files

ROOT = Path(__file__).resolve().parents[1]
PROJECT = Project(ROOT)
ENVIRONMENTS: dict[str, Environment] = PROJECT.environments()
SHIPPED = workload_files(PROJECT.workloads_dir)


@functools.cache
def loaded() -> Loaded:
    """Every shipped workload, checked for every environment (as validate and synth check them)."""
    return load_workloads(PROJECT, ENVIRONMENTS)


def project_copy(tmp_path: Path) -> Path:
    """A copy of the project's settings, specs and training code under `tmp_path/project`, to change in a test."""
    root = tmp_path / "project"
    root.mkdir()
    for name in ("cdk.json", "cdk.context.json"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "workloads", root / "workloads")
    shutil.copytree(ROOT / "training", root / "training", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def add_reader(root: Path, workload: str, *datasets: str) -> None:
    """In a copy's cdk.json, name `workload` among the readers of these datasets in every environment: what a team
    adds for a new workload that reads them (cdk.json `<env>.datasets.<name>.readers`)."""
    path = root / "cdk.json"
    config = json.loads(path.read_text())
    for env in config["context"][CONTEXT_KEY].values():
        for name in datasets:
            env["datasets"][name]["readers"].append(workload)
    path.write_text(json.dumps(config, indent=2))


def cannot_read(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Make `path` unreadable to this process, as a file a container wrote as root is to its user: mode 0 and, as root
    (whom permissions do not bind), the OS's answer for this one file stood in. Give it mode 0o644 back before
    `tmp_path` is cleaned up."""
    path.chmod(0)
    if os.geteuid() == 0:
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: Path(p) != path and real(p, mode, **kw))
