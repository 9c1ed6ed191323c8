"""The app turns every settings mistake into a message, never a traceback or a half-built assembly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app import main
from compiler.inputs.project import Project
from tests.project import project_copy


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
