"""trainctl's writes into the repository survive a stop midway: the old file stays whole, no temporary is left."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from compiler.inputs import files


def _interrupted(*_: object) -> None:
    raise KeyboardInterrupt  # Ctrl-C (or the process dying) while the new text is being written


def test_a_new_file_is_written_with_the_usual_permissions(tmp_path: Path) -> None:
    target = tmp_path / "data" / "prices" / "us-west-2.json"
    files.write_text_atomically(target, '{"a": 1}\n')
    assert target.read_text() == '{"a": 1}\n'
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600
    assert os.listdir(target.parent) == ["us-west-2.json"]


def test_an_existing_file_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "cdk.context.json"
    target.write_text("{}")
    target.chmod(0o640)
    files.write_text_atomically(target, '{"b": 2}')
    assert target.read_text() == '{"b": 2}' and stat.S_IMODE(target.stat().st_mode) == 0o640


@pytest.mark.parametrize("where", ["fsync", "replace"])
def test_a_stop_midway_leaves_the_old_file_whole_and_no_temporary(tmp_path: Path, monkeypatch, where: str) -> None:
    target = tmp_path / "cdk.context.json"
    target.write_text('{"old": true}\n')
    monkeypatch.setattr(files.os, where, _interrupted)
    with pytest.raises(KeyboardInterrupt):
        files.write_text_atomically(target, '{"new": true}\n' * 10_000)
    assert target.read_text() == '{"old": true}\n'
    assert os.listdir(tmp_path) == ["cdk.context.json"]

