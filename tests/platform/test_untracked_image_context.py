"""The project image is built from the files git tracks: an untracked file of the build context is neither staged
for `docker build` nor part of the asset hash (the image's identity)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk import aws_kms as kms

from platform_constructs.registry import TrainingImageRepository

pytestmark = pytest.mark.synth


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def image(context: Path, outdir: Path) -> TrainingImageRepository:
    stack = cdk.Stack(cdk.App(outdir=str(outdir)), "Images",
                      env=cdk.Environment(account="123456789012", region="eu-west-1"))
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    return TrainingImageRepository(stack, "Trainer", encryption_key=key, build_context=context)


def staged(repository: TrainingImageRepository, outdir: Path) -> list[str]:
    assert repository.asset is not None
    folder = outdir / f"asset.{repository.asset.asset_hash}"
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def context(tmp_path: Path) -> Path:
    """A throwaway repository whose build context tracks the Dockerfile and train.py."""
    git(tmp_path, "init", "-q")
    folder = tmp_path / "training"
    (folder / "pkg").mkdir(parents=True)
    (folder / "Dockerfile").write_text("FROM scratch\nCOPY . /opt/ml/code/\n")
    (folder / "train.py").write_text("print(1)\n")
    (folder / "pkg" / "model.py").write_text("X = 1\n")
    git(tmp_path, "add", "training")
    return folder


def test_untracked_files_are_not_staged_and_do_not_change_the_hash(context: Path, tmp_path: Path) -> None:
    clean = image(context, tmp_path / "out-clean")
    assert staged(clean, tmp_path / "out-clean") == ["Dockerfile", "pkg/model.py", "train.py"]
    (context / ".env").write_text("HF_TOKEN=hf_secret\n")
    (context / "pkg" / "scratch[1].py").write_text("2\n")
    (context / "data").mkdir()
    (context / "data" / "big.bin").write_bytes(b"0" * 10)
    dirty = image(context, tmp_path / "out-dirty")
    assert staged(dirty, tmp_path / "out-dirty") == ["Dockerfile", "pkg/model.py", "train.py"]
    assert dirty.asset is not None and clean.asset is not None
    assert dirty.asset.asset_hash == clean.asset.asset_hash


def test_a_tracked_change_changes_the_hash(context: Path, tmp_path: Path) -> None:
    before = image(context, tmp_path / "a")
    (context / "train.py").write_text("print(2)\n")
    after = image(context, tmp_path / "b")
    assert before.asset is not None and after.asset is not None
    assert before.asset.asset_hash != after.asset.asset_hash


def test_an_untracked_dockerfile_stops_synth(context: Path, tmp_path: Path) -> None:
    git(context.parent, "rm", "-q", "--cached", "training/Dockerfile")
    with pytest.raises(ValueError, match="Dockerfile is not tracked by git"):
        image(context, tmp_path / "out")


def test_an_untracked_name_no_pattern_can_exclude_stops_synth(context: Path, tmp_path: Path) -> None:
    (context / "#notes").write_text("x\n")
    with pytest.raises(ValueError, match="cannot be excluded"):
        image(context, tmp_path / "out")
