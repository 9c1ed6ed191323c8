"""The command line: validate exits 1 with messages; render's standard output is only the request JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.project import ROOT, SHIPPED

TRAINCTL = Path(sys.executable).with_name("trainctl")


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trainctl", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_validate_accepts_the_shipped_workloads():
    result = run("validate")
    assert result.returncode == 0, result.stderr
    assert f"{len(SHIPPED)} workloads valid" in result.stdout


def test_trainctl_is_an_installed_command_that_finds_the_project_from_a_subfolder():
    assert TRAINCTL.is_file(), "the README set-up installs the trainctl console script into .venv/bin"
    result = subprocess.run([str(TRAINCTL), "validate"], cwd=ROOT / "workloads", capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr


def test_validate_reports_every_broken_file_and_exits_1(tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\nentry_point: train.py\ninstance_type: ml.p4d.24xlarg\n"
                                     "framework_version: '2.3.0'\npy_version: py311\n")
    (tmp_path / "b.yaml").write_text("name: b\nentry_point: train.py\ninstance_type: ml.g5.xlarge\n"
                                     "image_uri: x\ninstance_cout: 2\n")
    (tmp_path / "train.py").write_text("")
    result = run("validate", "--directory", str(tmp_path))
    assert result.returncode == 1
    assert "a.yaml: instance_type: 'ml.p4d.24xlarg' is not a SageMaker training instance type; did you mean " \
        "'ml.p4d.24xlarge'" in result.stderr
    assert "b.yaml: instance_cout: unknown key; did you mean 'instance_count'?" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_render_prints_only_json_with_placeholders():
    name = SHIPPED[0].stem
    result = run("render", name, "--env", "dev")
    assert result.returncode == 0, result.stderr
    request = json.loads(result.stdout)
    assert request["TrainingJobName"].endswith("-${RunId}-${Attempt}")
    assert request["RoleArn"] == "${ExecutionRoleArn}"
    assert request["VpcConfig"]["Subnets"] == ["${TrainingSubnetId}"]


def test_render_applies_the_environment_shape_of_a_spec_that_names_every_environment():
    """gpt-torchrun-fsx runs on one node in dev and two in prod (its `environments` block names both)."""
    counts = {}
    for env in ("dev", "prod"):
        result = run("render", "gpt-torchrun-fsx", "--env", env)
        assert result.returncode == 0, result.stderr
        counts[env] = json.loads(result.stdout)["ResourceConfig"]["InstanceCount"]
    assert counts == {"dev": 1, "prod": 2}


@pytest.mark.parametrize("args,message", [
    (("render", "no-such-workload", "--env", "dev"), "no such workload"),
    (("render", "gpt-smddp", "--env", "staging"), "unknown environment 'staging'"),
])
def test_render_errors_are_messages_not_tracebacks(args, message):
    result = run(*args)
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr


def test_render_runs_the_full_service_model_check(tmp_path):
    project = tmp_path / "project"
    (project / "workloads").mkdir(parents=True)
    for name in ("cdk.json", "cdk.context.json", "training/Dockerfile"):  # the image build is checked too
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text((ROOT / name).read_text())
    (project / "workloads" / "t.yaml").write_text(
        "name: t\nimage_uri: 123456789012.dkr.ecr.us-east-1.amazonaws.com/x:1\ninstance_type: ml.m5.xlarge\n"
        "container_arguments: ['" + "a" * 300 + "']\n")
    result = run("render", "t", "--env", "dev", cwd=project)
    assert result.returncode == 1 and result.stdout == ""
    assert "at most 256 characters" in result.stderr or "max 256" in result.stderr


def test_outside_a_project_the_message_says_so(tmp_path):
    result = run("validate", cwd=tmp_path)
    assert result.returncode == 1
    assert "no cdk.json here or in a parent folder" in result.stderr and "Traceback" not in result.stderr


def test_validate_names_the_workloads_a_new_environment_skips_and_the_line_that_adds_one(tmp_path):
    """Issue 36: a new environment counted 4 of 7 workloads without saying which three it skips, or why (10 shipped
    workloads since issue 37's tabular examples, which name no environments)."""
    from tests.project import project_copy

    root = project_copy(tmp_path)
    settings = json.loads((root / "cdk.json").read_text())
    envs = settings["context"]["training-platform:environments"]
    envs["staging"] = {**{k: v for k, v in envs["dev"].items() if k != "fsx"}, "account": "333333333333",
                       "vpc_cidr": "10.40.0.0/16"}
    envs["lean"] = {**envs["staging"], "account": "444444444444", "default_workloads": ["gpt-smddp"]}
    (root / "cdk.json").write_text(json.dumps(settings))
    context = json.loads((root / "cdk.context.json").read_text())
    for account in ("333333333333", "444444444444"):
        context[f"availability-zones:account={account}:region=us-east-1"] = ["us-east-1a", "us-east-1b"]
    (root / "cdk.context.json").write_text(json.dumps(context))
    result = run("--project-dir", str(root), "validate")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # the workloads whose environments: blocks name dev and prod only (workloads/*.yaml)
    blocks = "gpt-torchrun-fsx, platform-smoke, platform-smoke-gpu"
    assert "dev: 10, prod: 10, staging: 7, lean: 1" in lines[0]
    assert f"  staging skips {blocks} (their environments: blocks do not name staging; add `staging: {{}}` there to " \
        "deploy one)" in lines
    assert f"  lean skips {blocks} (their environments: blocks do not name lean; add `lean: {{}}` there to deploy " \
        "one); and gpt-finetune-single, gpt-horovod-mpi, gpt-smp-v1, linear-learner-tabular, sklearn-tabular, " \
        "xgboost-tabular (not in its default_workloads in cdk.json)" in lines
    assert not any(line.startswith("  dev skips") for line in lines)
