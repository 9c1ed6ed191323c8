"""A job that ships no code on a project image runs only what the image's Dockerfile names.

The project image (training/Dockerfile) names no program and keeps its copy of the code out of /opt/ml/code: the
training toolkit unpacks a job's bundle only into an empty /opt/ml/code (sagemaker_training.files.
download_and_extract) and reads SAGEMAKER_PROGRAM from the environment before the job's sagemaker_program
(sagemaker_training.environment). So a job on it without entry_point would run nothing, and is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from compiler.errors import SpecError
from compiler.inputs.image_builds import names_a_program
from compiler.inputs.project import Project
from compiler.pipeline import project_images
from compiler.spec import load_workloads
from tests.project import cannot_read, project_copy

FINETUNE = "workloads/gpt-finetune-single.yaml"


@pytest.mark.parametrize(("dockerfile", "names"), [
    ("FROM base\nCOPY . /opt/training/\n", False),
    ("FROM base\n# ENTRYPOINT [\"python\"]\n", False),  # a comment names nothing
    ("FROM base\nENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/training\n", False),
    ("FROM base\nENTRYPOINT [\"python\", \"/opt/run.py\"]\n", True),
    ("FROM base\nentrypoint /opt/run.sh\n", True),  # instructions are case-insensitive
    ("FROM base\nENV SAGEMAKER_PROGRAM=train.py\n", True),
    ("FROM base\nENV PYTHONUNBUFFERED=1 \\\n    SAGEMAKER_PROGRAM=train.py\n", True),  # a continued ENV
])
def test_what_names_a_program(dockerfile: str, names: bool) -> None:
    assert names_a_program(dockerfile) is names


def test_the_shipped_image_names_none() -> None:
    assert names_a_program((Path(__file__).resolve().parents[3] / "training" / "Dockerfile").read_text()) is False


def _load(root: Path) -> None:
    project = Project(root)
    envs = project.environments()
    load_workloads(project, envs, images=project_images(project, envs))


def _without_code(root: Path) -> None:
    spec = yaml.safe_load((root / FINETUNE).read_text())
    del spec["framework"], spec["entry_point"], spec["source_dir"]  # a generic Estimator: image only
    (root / FINETUNE).write_text(yaml.safe_dump(spec))


def test_a_job_without_code_on_an_image_that_names_no_program_is_refused(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    _without_code(root)
    with pytest.raises(SpecError) as info:
        _load(root)
    [problem] = [p for p in info.value.problems if p.field == "entry_point"]
    assert "the image 'gpt-trainer' names no program of its own" in problem.message
    assert "add entry_point" in problem.message


def test_a_job_without_code_runs_what_its_image_names(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    _without_code(root)
    dockerfile = root / "training" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "ENV SAGEMAKER_PROGRAM=train.py SAGEMAKER_SUBMIT_DIRECTORY=/opt/training\n")
    _load(root)


def test_a_context_file_you_cannot_read_is_refused_before_the_cdk_reads_it(tmp_path: Path, monkeypatch) -> None:
    """The CDK fingerprints every file of a build context at synth (and fails on one it cannot open)."""
    import subprocess

    from compiler.inputs.image_builds import context_excludes

    context = tmp_path / "training"  # a folder of the repository, as the shipped context is
    context.mkdir()
    for name in ("Dockerfile", "app.py", "scratch.log"):
        (context / name).write_text("x\n")
    subprocess.run(["git", "-C", str(tmp_path), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "training/Dockerfile", "training/app.py"], check=True)
    cannot_read(monkeypatch, context / "scratch.log")  # untracked: excluded, never read
    assert context_excludes(context, "Dockerfile") == (["scratch.log"], None)
    cannot_read(monkeypatch, context / "app.py")
    refused = (f"{context / 'app.py'} cannot be read by you (its owner's permissions), and the CDK reads every file of "
               "the build context at synth; make it readable (chown or chmod it) or remove it")
    assert context_excludes(context, "Dockerfile") == ([], refused)
