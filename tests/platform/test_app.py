"""The app turns every settings mistake into a message, never a traceback or a half-built assembly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app import main
from compiler.inputs.project import Project
from tests.project import ROOT, project_copy


def edit_cdk_json(root: Path, change) -> None:
    data = json.loads((root / "cdk.json").read_text())
    change(data["context"])
    (root / "cdk.json").write_text(json.dumps(data))


@pytest.mark.synth
def test_fsx_workload_in_an_environment_without_fsx_stops_synth_with_the_fix(monkeypatch, capsys, tmp_path):
    root = project_copy(tmp_path)
    edit_cdk_json(root, lambda c: [e.pop("fsx") for e in c["training-platform:environments"].values()])
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path / "out"))
    assert main(Project(root)) == 1
    err = capsys.readouterr().err
    assert "cdk synth stopped: fix these settings first" in err
    assert "has no file system: add an fsx block" in err and "gpt-torchrun-fsx" in err
    assert not (tmp_path / "out").exists()  # nothing synthesized half-way


def test_a_zone_lookup_missing_from_the_cache_stops_synth_in_one_line(monkeypatch, capsys, tmp_path):
    root = project_copy(tmp_path)
    (root / "cdk.context.json").write_text("{}")
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path / "out"))
    assert main(Project(root)) == 1
    err = capsys.readouterr().err
    assert "trainctl lookup-zones --env dev" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_zone_the_account_does_not_have_stops_synth(monkeypatch, capsys, tmp_path):
    root = project_copy(tmp_path)
    edit_cdk_json(root, lambda c: c["training-platform:environments"]["dev"].update(availability_zone="us-east-1z"))
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path / "out"))
    assert main(Project(root)) == 1
    err = capsys.readouterr().err
    assert "dev.availability_zone: us-east-1z is not one of" in err


def test_a_project_outside_git_is_warned_about_in_the_projects_form_by_synth_and_trainctl(tmp_path):
    """A copy of the project outside git (a downloaded archive) ships every file of its code and build context, and
    says so once per folder, as `warning: <text>` like every warning of validate and synth: not in Python's form,
    which names a file and line of the platform's code and quotes it."""
    root = project_copy(tmp_path)
    shutil.copy(ROOT / "app.py", root / "app.py")  # `cdk synth` runs the project's own app.py
    (root / "workloads" / "broken.yaml").write_text("name: broken\ninstance_type: 3\n")  # stop before the synth
    environment = {"CDK_OUTDIR": str(tmp_path / "out"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                   "PYTHONPATH": str(ROOT)}
    synth = subprocess.run([sys.executable, "app.py"], cwd=root, env=environment, capture_output=True, text=True,
                           timeout=120)
    validate = subprocess.run([sys.executable, "-m", "trainctl", "--project-dir", str(root), "validate"],
                              cwd=root, env=environment, capture_output=True, text=True, timeout=120)
    for done in (synth, validate):
        assert done.returncode == 1, done.stderr
        warned = [line for line in done.stderr.splitlines() if "not read as a git work tree" in line]
        assert warned == [f"warning: {root / 'training'}: not read as a git work tree (fatal: not a git repository "
                          "(or any of the parent directories): .git); every file in it ships, untracked ones too"]
        assert "Warning:" not in done.stderr and ".py:" not in done.stderr
