"""The entry point's source directory, packed as `sourcedir.tar.gz` the way the SDK uploads it.

The archive is byte-identical for identical files: entries sorted, owners, times and modes normalised,
gzip header without name or time. The CDK asset built from it therefore keeps its hash until a file
really changes, and a deploy never churns the tarball (or the state machines that point at it).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
from pathlib import Path

from compiler.environments import PROJECT_ROOT

EXCLUDED_DIRS = {"__pycache__", ".git", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints", ".mypy_cache"}
EXCLUDED_SUFFIXES = (".pyc", ".pyo")
EXCLUDED_NAMES = {".DS_Store"}
BUILD_DIR = PROJECT_ROOT / "build" / "sourcedirs"


def _files(source_dir: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(source_dir):
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS)
        for name in sorted(files):
            if name in EXCLUDED_NAMES or name.endswith(EXCLUDED_SUFFIXES):
                continue
            found.append(Path(root) / name)
    return sorted(found, key=lambda p: p.relative_to(source_dir).as_posix())


def pack(source_dir: Path) -> bytes:
    """The gzip tarball of a directory's files, at the archive root (as the SDK packs `source_dir`)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in _files(source_dir):
            info = tarfile.TarInfo(path.relative_to(source_dir).as_posix())
            data = path.read_bytes()
            info.size = len(data)
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def build_sourcedir(source_dir: Path, build_dir: Path = BUILD_DIR) -> Path:
    """Write the tarball under build/sourcedirs/<sha256>/sourcedir.tar.gz and return its path.

    The folder is named for the content hash, so workloads that share a source directory share one file
    (and one CDK asset), and the file name stays `sourcedir.tar.gz` as the SDK names it.
    """
    data = pack(Path(source_dir))
    digest = hashlib.sha256(data).hexdigest()[:32]
    target = Path(build_dir) / digest / "sourcedir.tar.gz"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
    return target
