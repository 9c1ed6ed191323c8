"""The command line: validate exits 1 with messages; render's standard output is only the request JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.spec import workload_files

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trainctl", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_validate_accepts_the_shipped_workloads():
    result = run("validate")
    assert result.returncode == 0, result.stderr
    assert f"{len(workload_files())} workloads valid" in result.stdout


def test_validate_reports_every_broken_file_and_exits_1(tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\nentry_point: train.py\ninstance_type: ml.p4d.24xlarg\n"
                                     "framework_version: '2.3.0'\npy_version: py311\n")
    (tmp_path / "b.yaml").write_text("name: b\nentry_point: train.py\ninstance_type: ml.g5.xlarge\n"
                                     "image_uri: x\ninstance_cout: 2\n")
    (tmp_path / "train.py").write_text("")
    result = run("validate", "--directory", str(tmp_path))
    assert result.returncode == 1
    assert "a.yaml: instance_type: 'ml.p4d.24xlarg' is not in the instance catalog; did you mean 'ml.p4d.24xlarge'" \
        in result.stderr
    assert "b.yaml: instance_cout: unknown key; did you mean 'instance_count'?" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_render_prints_only_json_with_placeholders():
    name = workload_files()[0].stem
    result = run("render", name, "--env", "dev")
    assert result.returncode == 0, result.stderr
    request = json.loads(result.stdout)
    assert request["TrainingJobName"].endswith("-${RunId}-${Attempt}")
    assert request["RoleArn"] == "${ExecutionRoleArn}"
    assert request["VpcConfig"]["Subnets"] == ["${TrainingSubnetId}"]


@pytest.mark.parametrize("args,message", [
    (("render", "no-such-workload", "--env", "dev"), "no such workload"),
    (("render", "gpt-smddp", "--env", "staging"), "unknown environment 'staging'"),
])
def test_render_errors_are_messages_not_tracebacks(args, message):
    result = run(*args)
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr
