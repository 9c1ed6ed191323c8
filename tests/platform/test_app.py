"""app.py turns every settings mistake into a message, never a traceback or a half-built assembly."""

from __future__ import annotations

from dataclasses import replace

import pytest

import app as cdk_app
from compiler.environments import load_environments


@pytest.mark.synth
def test_fsx_workload_in_an_environment_without_fsx_stops_synth_with_the_fix(monkeypatch, capsys, tmp_path):
    envs = {name: replace(env, fsx=None) for name, env in load_environments().items()}
    monkeypatch.setattr(cdk_app, "load_environments", lambda: envs)
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path))
    assert cdk_app.main() == 1
    err = capsys.readouterr().err
    assert "cdk synth stopped: fix these settings first" in err
    assert "has no file system: add an fsx block" in err and "gpt-torchrun-fsx" in err
    assert not any(tmp_path.iterdir())  # nothing synthesized half-way
