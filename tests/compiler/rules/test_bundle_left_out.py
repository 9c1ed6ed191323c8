"""What the code bundle leaves out because git does not track it is said by name (issue 36): an untracked module or
requirements.txt would otherwise vanish from the job without a word. Ignored files are left out on purpose."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from compiler.pipeline import _Bundles, compile_workload
from tests.project import ENVIRONMENTS


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(spec_dir: Path) -> Path:
    """The base spec's folder as a repository: code/train.py and code/run.sh tracked."""
    git(spec_dir, "init", "-q")
    git(spec_dir, "add", "code/train.py", "code/run.sh")
    return spec_dir


def warnings_of(make, root: Path) -> list[str]:
    result, problems = compile_workload(make(), ENVIRONMENTS["dev"], {}, _Bundles(root))
    assert problems == []
    return [w for w in result.warnings if "tracks" in w]


def test_everything_tracked_says_nothing(make, repo) -> None:
    assert warnings_of(make, repo) == []


def test_untracked_files_are_named_and_ignored_ones_counted(make, repo) -> None:
    (repo / "code" / "helpers.py").write_text("X = 1\n")
    (repo / "code" / "requirements.txt").write_text("numpy\n")
    (repo / "code" / "data").mkdir()
    (repo / "code" / "data" / "vocab.json").write_text("{}\n")
    (repo / "code" / "run.log").write_text("old run\n")
    (repo / ".gitignore").write_text("*.log\n")
    found = warnings_of(make, repo)
    assert len(found) == 1
    assert found[0].startswith("demo.yaml: source_dir: ")
    for name in ("code/helpers.py", "code/requirements.txt", "code/data/", "and 1 that .gitignore excludes",
                 "git add"):
        assert name in found[0], name
    assert "run.log" not in found[0]


def test_only_ignored_files_say_nothing(make, repo) -> None:
    (repo / "code" / "run.log").write_text("old run\n")
    (repo / ".gitignore").write_text("*.log\n")
    git(repo, "add", ".gitignore")
    assert warnings_of(make, repo) == []


def test_a_long_list_is_cut(make, repo) -> None:
    for n in range(12):
        (repo / "code" / f"m{n:02}.py").write_text("\n")
    found = warnings_of(make, repo)
    assert "and 4 more" in found[0] and "m07.py" in found[0] and "m08.py" not in found[0]
