"""`trainctl lookup-zones` writes what the CDK's own lookup would, checked against the environment's account."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from moto import mock_aws

from compiler.inputs import files
from tests.project import ROOT
from trainctl.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # moto answers in MOTO_ACCOUNT_ID's account when it is set (tests/cli/conftest.py's `aws` sets dev's for the
    # package): pin moto's default account, the one the copy of cdk.json names, whatever ran before.
    monkeypatch.setenv("MOTO_ACCOUNT_ID", "123456789012")
    shutil.copy(ROOT / "cdk.json", tmp_path / "cdk.json")
    (tmp_path / "cdk.context.json").write_text("{}")
    data = json.loads((tmp_path / "cdk.json").read_text())
    data["context"]["training-platform:environments"]["dev"]["account"] = "123456789012"  # moto's account
    (tmp_path / "cdk.json").write_text(json.dumps(data))
    return tmp_path


def test_lookup_writes_the_available_zones_under_the_cdk_key(project: Path, capsys) -> None:
    with mock_aws():
        assert main(["--project-dir", str(project), "lookup-zones", "--env", "dev"]) == 0
    cached = json.loads((project / "cdk.context.json").read_text())
    zones = cached["availability-zones:account=123456789012:region=us-east-1"]
    assert "us-east-1a" in zones and zones == sorted(zones)
    assert "commit it" in capsys.readouterr().out


def test_credentials_of_another_account_are_refused(project: Path, capsys) -> None:
    with mock_aws():
        assert main(["--project-dir", str(project), "lookup-zones", "--env", "prod"]) == 1
    err = capsys.readouterr().err
    assert "account 123456789012, but environment prod is account 222222222222" in err
    assert json.loads((project / "cdk.context.json").read_text()) == {}


def test_an_unknown_profile_is_a_message(project: Path, capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    assert main(["--project-dir", str(project), "lookup-zones", "--env", "dev", "--profile", "nope"]) == 1
    assert "no AWS profile named 'nope'" in capsys.readouterr().err


def test_a_lookup_stopped_while_writing_leaves_cdk_context_json_as_it_was(project: Path, monkeypatch, capsys) -> None:
    """Ctrl-C while the new cdk.context.json is being written: the old one still parses, with its old lookups."""
    before = {"availability-zones:account=111111111111:region=eu-west-1": ["eu-west-1a"]}
    (project / "cdk.context.json").write_text(json.dumps(before))

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "fsync", interrupted)
    with mock_aws():
        assert main(["--project-dir", str(project), "lookup-zones", "--env", "dev"]) == 130
    assert json.loads((project / "cdk.context.json").read_text()) == before
    assert sorted(os.listdir(project)) == ["cdk.context.json", "cdk.json"]


@pytest.mark.parametrize(("text", "message"), [
    ("null", "cdk.context.json: must be a JSON object ({\"key\": value, ...}), not None (empty)\n"),
    ("{cut", "cdk.context.json: is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 "
             "(char 1)\n"),
])
def test_a_broken_cache_stops_the_lookup_before_aws_is_asked(project: Path, capsys, text: str, message: str) -> None:
    (project / "cdk.context.json").write_text(text)
    with mock_aws():
        assert main(["--project-dir", str(project), "lookup-zones", "--env", "dev"]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", message)
    assert (project / "cdk.context.json").read_text() == text
