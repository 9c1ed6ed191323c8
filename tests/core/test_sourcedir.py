"""The source tarball is what the SDK would upload, and byte-identical for identical files."""

from __future__ import annotations

import io
import os
import tarfile
import time

from compiler.sourcedir import build_sourcedir, pack


def _tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_tarball_holds_the_files_at_the_archive_root(tmp_path):
    _tree(tmp_path / "src", {"train.py": "print(1)\n", "pkg/model.py": "X = 1\n"})
    with tarfile.open(fileobj=io.BytesIO(pack(tmp_path / "src")), mode="r:gz") as tar:
        names = tar.getnames()
        assert names == ["pkg/model.py", "train.py"]
        assert tar.extractfile("train.py").read() == b"print(1)\n"


def test_same_files_give_the_same_bytes_whatever_times_and_order(tmp_path):
    _tree(tmp_path / "a", {"train.py": "1", "z/y.py": "2", "b.txt": "3"})
    _tree(tmp_path / "b", {"b.txt": "3", "z/y.py": "2", "train.py": "1"})
    past = time.time() - 86400
    os.utime(tmp_path / "b" / "train.py", (past, past))
    assert pack(tmp_path / "a") == pack(tmp_path / "b")


def test_a_changed_file_changes_the_tarball(tmp_path):
    _tree(tmp_path / "a", {"train.py": "1"})
    first = pack(tmp_path / "a")
    (tmp_path / "a" / "train.py").write_text("2")
    assert pack(tmp_path / "a") != first


def test_caches_and_bytecode_are_left_out(tmp_path):
    _tree(tmp_path / "a", {"train.py": "1", "__pycache__/train.cpython-311.pyc": "x", "m.pyc": "x"})
    with tarfile.open(fileobj=io.BytesIO(pack(tmp_path / "a")), mode="r:gz") as tar:
        assert tar.getnames() == ["train.py"]


def test_build_writes_one_file_per_content(tmp_path):
    _tree(tmp_path / "a", {"train.py": "1"})
    _tree(tmp_path / "b", {"train.py": "1"})
    first = build_sourcedir(tmp_path / "a", tmp_path / "out")
    second = build_sourcedir(tmp_path / "b", tmp_path / "out")
    assert first == second and first.name == "sourcedir.tar.gz"
    assert first.read_bytes() == pack(tmp_path / "a")
