"""The code bundle ships only what git tracks: an untracked file next to the code never reaches a job."""

from __future__ import annotations

import io
import subprocess
import tarfile
import warnings
from pathlib import Path

import pytest

from compiler.inputs.sourcedir import pack_to, scan
from compiler.inputs.tracked import NotInGitWarning, docker_exclude, tracked_files, untracked_paths


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A throwaway repository: src/train.py and src/pkg/model.py tracked, a token and a data folder not."""
    git(tmp_path, "init", "-q")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "train.py").write_text("print(1)\n")
    (tmp_path / "src" / "pkg" / "model.py").write_text("X = 1\n")
    git(tmp_path, "add", "src/train.py", "src/pkg/model.py")
    (tmp_path / "src" / ".env").write_text("HF_TOKEN=hf_secret\n")
    (tmp_path / "src" / "pkg" / "notes.txt").write_text("scratch\n")
    (tmp_path / "src" / "data").mkdir()
    (tmp_path / "src" / "data" / "big.bin").write_bytes(b"0" * 10)
    return tmp_path


def names(result) -> list[str]:
    out = io.BytesIO()
    pack_to(result.entries, out)
    with tarfile.open(fileobj=io.BytesIO(out.getvalue()), mode="r:gz") as tar:
        return tar.getnames()


def test_the_bundle_holds_the_tracked_files_only(repo):
    result = scan(repo / "src", repo / "src" / "train.py", (), repo)
    assert result.problems == []
    assert names(result) == ["pkg/model.py", "train.py"]
    assert sorted(p.relative_to(repo).as_posix() for p in result.untracked) == [
        "src/.env", "src/data", "src/pkg/notes.txt"]


def test_a_staged_new_file_ships(repo):
    git(repo, "add", "src/pkg/notes.txt")
    assert names(scan(repo / "src", repo / "src" / "train.py", (), repo)) == ["pkg/model.py", "pkg/notes.txt",
                                                                             "train.py"]


def test_an_ignored_file_does_not_ship(repo):
    (repo / ".gitignore").write_text("*.txt\n")
    assert "pkg/notes.txt" not in names(scan(repo / "src", repo / "src" / "train.py", (), repo))


def test_an_untracked_entry_point_is_refused(repo):
    (repo / "src" / "new.py").write_text("print(2)\n")
    result = scan(repo / "src", repo / "src" / "new.py", (), repo)
    assert any("new.py is not tracked by git" in p and "git add" in p for p in result.problems)
    alone = scan(None, repo / "src" / "new.py", (), repo)
    assert any("new.py is not tracked by git" in p for p in alone.problems)


def test_an_untracked_file_dependency_is_refused_a_folder_dependency_loses_its_untracked_files(repo):
    (repo / "lib").mkdir()
    (repo / "lib" / "util.py").write_text("U = 1\n")
    (repo / "lib" / "secret.pem").write_text("key\n")
    (repo / "helper.py").write_text("H = 1\n")
    git(repo, "add", "lib/util.py")
    result = scan(None, repo / "src" / "train.py", (repo / "lib", repo / "helper.py"), repo)
    assert any("helper.py is not tracked by git" in p for p in result.problems)
    assert [e.arcname for e in result.entries] == ["lib/util.py", "train.py"]


def test_outside_git_every_file_ships_with_a_warning(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("1")
    (tmp_path / "src" / "extra.txt").write_text("2")
    with pytest.warns(NotInGitWarning, match="every file in it ships"):
        result = scan(tmp_path / "src", tmp_path / "src" / "train.py", (), tmp_path)
    assert [e.arcname for e in result.entries] == ["extra.txt", "train.py"]


def test_a_tracked_file_with_a_name_git_would_quote_is_found(repo):
    (repo / "src" / "naïve file.py").write_text("1")
    git(repo, "add", "src/naïve file.py")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "naïve file.py" in tracked_files(repo / "src")


def test_untracked_paths_name_a_wholly_untracked_folder_once(repo):
    assert untracked_paths(repo / "src", tracked_files(repo / "src")) == [".env", "data", "pkg/notes.txt"]


@pytest.mark.parametrize(("path", "pattern"), [
    ("a*b", "a\\*b"), ("x[1]", "x\\[1\\]"), ("q?", "q\\?"), ("plain/file.txt", "plain/file.txt"),
    (" lead", None), ("trail ", None), ("#comment", None), ("!negated", None), ("two\nlines", None),
])
def test_docker_patterns_escape_wildcards_and_refuse_what_the_syntax_cannot_say(path, pattern):
    assert docker_exclude(path) == pattern
