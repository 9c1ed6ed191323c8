"""The source tarball is what the SDK would upload, and byte-identical for identical files."""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path

from compiler.inputs.sourcedir import pack_to, scan
from platform_constructs.source_bundle import write_bundle
from tests.project import cannot_read


def pack(source_dir: Path) -> bytes:
    """The tarball of a folder, as a job with source_dir and entry point train.py ships it."""
    result = scan(source_dir, source_dir / "train.py", (), source_dir.parent)
    assert result.problems == []
    out = io.BytesIO()
    pack_to(result.entries, out)
    return out.getvalue()


def build_sourcedir(source_dir: Path, build_dir: Path) -> Path:
    found = scan(source_dir, source_dir / "train.py", (), source_dir.parent)
    assert found.problems == []
    return write_bundle(found, build_dir)


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


def test_symbolic_links_are_refused_not_followed(tmp_path):
    _tree(tmp_path / "a", {"train.py": "1"})
    (tmp_path / "a" / "host").symlink_to("/etc/hostname")
    (tmp_path / "a" / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "a" / "home").symlink_to(Path.home(), target_is_directory=True)
    result = scan(tmp_path / "a", tmp_path / "a" / "train.py", (), tmp_path)
    assert [e.arcname for e in result.entries] == ["train.py"]
    assert len(result.problems) == 3 and all("symbolic link" in p for p in result.problems)


def test_the_bundle_size_is_bounded_with_the_largest_files_named(tmp_path):
    _tree(tmp_path / "a", {"train.py": "1"})
    with open(tmp_path / "a" / "weights.bin", "wb") as big:
        big.truncate(3 * 2**20)
    result = scan(tmp_path / "a", tmp_path / "a" / "train.py", (), tmp_path, limit=2**20)
    [problem] = result.problems
    assert "over the 1 MiB limit" in problem and "weights.bin (3 MiB)" in problem


def test_packing_streams_large_files(tmp_path):
    import tracemalloc

    _tree(tmp_path / "a", {"train.py": "1"})
    with open(tmp_path / "a" / "data.bin", "wb") as big:
        big.truncate(64 * 2**20)  # sparse: costs no disk
    result = scan(tmp_path / "a", tmp_path / "a" / "train.py", (), tmp_path)
    tracemalloc.start()
    with open(tmp_path / "out.tar.gz", "wb") as out:
        pack_to(result.entries, out)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 16 * 2**20, f"packing held {peak / 2**20:.0f} MiB"


def test_dependencies_sit_beside_the_entry_point(tmp_path):
    _tree(tmp_path / "src", {"train.py": "1"})
    _tree(tmp_path / "libs" / "common", {"util.py": "2"})
    result = scan(None, tmp_path / "src" / "train.py", (tmp_path / "libs" / "common",), tmp_path)
    assert [e.arcname for e in result.entries] == ["common/util.py", "train.py"]


def test_folders_outside_the_project_are_refused(tmp_path):
    (tmp_path / "project").mkdir()
    _tree(tmp_path / "outside", {"x.py": "1"})
    result = scan(tmp_path / "outside", tmp_path / "outside" / "x.py", (), tmp_path / "project")
    assert any("outside the project" in p for p in result.problems)


def test_a_file_you_cannot_read_is_refused_by_the_scan_not_the_pack(tmp_path, monkeypatch):
    """A file a container wrote as root (mode 0600) in the source folder: packing it at synth would fail, so the scan
    validate runs refuses it. As root every file is readable, so there the OS's answer for this one file is stood in."""
    _tree(tmp_path / "a", {"train.py": "1", "out/metrics.json": "{}"})
    secret = tmp_path / "a" / "out" / "metrics.json"
    cannot_read(monkeypatch, secret)
    try:
        result = scan(tmp_path / "a", tmp_path / "a" / "train.py", (), tmp_path)
    finally:
        secret.chmod(0o644)
    assert [e.arcname for e in result.entries] == ["train.py"]
    assert result.problems == [f"{secret} cannot be read by you (its owner's permissions); make it readable (chown or "
                               "chmod it) or remove it"]
