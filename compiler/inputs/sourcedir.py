"""The job's code, packed as `sourcedir.tar.gz` the way the SDK packs it, byte-reproducibly and safely.

What goes in (as `fw_utils.tar_and_upload_dir` does): the files of `source_dir` at the archive root, or the entry
point alone without one, plus each of `dependencies` at the root under its own name -- but only the files git
tracks (`compiler.inputs.tracked`): an untracked `.env` or dataset next to the code never ships, and an untracked entry
point is refused. Outside a git work tree every file ships, with a warning.

Safety, because a spec is code review's blind spot: every file must lie inside the project; symbolic links are
refused (following one could ship /etc/hostname or a home directory into a job); the total size is bounded, with
a message that names the largest files; files are streamed into the archive, never read whole into memory.

Reproducibility: entries sorted, owners, times and modes normalised, gzip header without name or time. The CDK
asset built from it keeps its hash until a file really changes, so a deploy never churns the state machines.

Pure: `scan` reads the tree and `pack_to` writes to a file object the caller owns (the CDK layer writes files).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from compiler.inputs.paths import unreadable
from compiler.inputs.tracked import tracked_files

EXCLUDED_DIRS = frozenset({"__pycache__", ".git", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints", ".mypy_cache",
                           ".hypothesis"})
EXCLUDED_SUFFIXES = (".pyc", ".pyo")
EXCLUDED_NAMES = frozenset({".DS_Store"})
MAX_BUNDLE_BYTES = 256 * 1024 * 1024  # code, not data: datasets belong in S3 or FSx
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Entry:
    """One file of the bundle: where it is on disk and its name in the archive."""

    path: Path
    arcname: str
    size: int
    executable: bool


@dataclass
class Scan:
    """The files a bundle would hold, and every reason it cannot be built."""

    entries: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    untracked: list[Path] = field(default_factory=list)  # files left out because git does not track them

    @property
    def total_bytes(self) -> int:
        return sum(e.size for e in self.entries)


def _inside(path: Path, root: Path) -> bool:
    return os.path.commonpath([os.path.abspath(path), os.path.abspath(root)]) == os.path.abspath(root)


def _walk(top: Path, arc_prefix: str, scan: Scan) -> Iterator[Entry]:
    """Files under `top` that git tracks (all without git; not following links), reporting links and unreadable
    entries."""
    tracked = tracked_files(top)
    tracked_dirs = {p for n in tracked or () for p in Path(n).parents}
    for root, dirs, files in os.walk(top, followlinks=False, onerror=lambda e: scan.problems.append(
            f"{e.filename}: cannot be read ({e.strerror})")):
        here = Path(root)
        kept = []
        for name in sorted(dirs):
            if name in EXCLUDED_DIRS:
                continue
            relative = (here / name).relative_to(top)
            if tracked is not None and relative not in tracked_dirs and relative.as_posix() not in tracked:
                scan.untracked.append(here / name)
                continue
            if (here / name).is_symlink():
                scan.problems.append(f"{here / name} is a symbolic link; the bundle holds plain files only (copy what "
                                     "it points to into the folder, or remove it)")
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if name in EXCLUDED_NAMES or name.endswith(EXCLUDED_SUFFIXES):
                continue
            if tracked is not None and (here / name).relative_to(top).as_posix() not in tracked:
                scan.untracked.append(here / name)
                continue
            entry = _entry(here / name, f"{arc_prefix}{(here / name).relative_to(top).as_posix()}", scan)
            if entry is not None:
                yield entry


def _tracked_file(path: Path, arcname: str, scan: Scan) -> Entry | None:
    """A single file of the bundle (the entry point alone, a file dependency): refused when git does not track it."""
    tracked = tracked_files(path.parent)
    if tracked is not None and path.name not in tracked:
        scan.untracked.append(path)
        scan.problems.append(f"{path} is not tracked by git, and the bundle ships only tracked files; git add it")
        return None
    return _entry(path, arcname, scan)


def _entry(path: Path, arcname: str, scan: Scan) -> Entry | None:
    try:
        info = path.lstat()
    except OSError as exc:
        scan.problems.append(f"{path}: cannot be read ({exc.strerror})")
        return None
    if stat.S_ISLNK(info.st_mode):
        scan.problems.append(f"{path} is a symbolic link; the bundle holds plain files only (copy what it points to "
                             "into the folder, or remove it)")
        return None
    if not stat.S_ISREG(info.st_mode):
        scan.problems.append(f"{path} is not a regular file (a device, socket or pipe); remove it")
        return None
    if (refusal := unreadable(path)) is not None:  # synth would fail packing it
        scan.problems.append(refusal)
        return None
    return Entry(path=path, arcname=arcname, size=info.st_size, executable=bool(info.st_mode & stat.S_IXUSR))


def scan(source_dir: Path | None, entry_point: Path, dependencies: tuple[Path, ...], project_root: Path,
         limit: int = MAX_BUNDLE_BYTES) -> Scan:
    """The bundle's files as the SDK would pack them, with every problem (links, outside paths, size)."""
    result = Scan()
    tops: list[tuple[Path, str]] = []
    if source_dir is not None:
        tops.append((source_dir, ""))
    else:
        entry = _tracked_file(entry_point, entry_point.name, result)
        if entry is not None:
            result.entries.append(entry)
    for dependency in dependencies:
        if dependency.is_dir():
            tops.append((dependency, f"{dependency.name}/"))
        else:
            entry = _tracked_file(dependency, dependency.name, result)
            if entry is not None:
                result.entries.append(entry)
    for top, prefix in tops:
        if not _inside(top, project_root):
            result.problems.append(f"{top} is outside the project")
            continue
        result.entries.extend(_walk(top, prefix, result))
    if source_dir is not None and entry_point in result.untracked:
        result.problems.append(f"{entry_point} is not tracked by git, and the bundle ships only tracked files; git "
                               "add it")
    names = [e.arcname for e in result.entries]
    for name in sorted({n for n in names if names.count(n) > 1}):
        result.problems.append(f"{name} would be in the bundle twice (a dependency's name clashes with a file of "
                               "source_dir); rename one")
    result.entries.sort(key=lambda e: e.arcname)
    if result.total_bytes > limit:
        largest = sorted(result.entries, key=lambda e: e.size, reverse=True)[:3]
        listing = ", ".join(f"{e.arcname} ({e.size / 2**20:.0f} MiB)" for e in largest)
        result.problems.append(f"the code bundle would be {result.total_bytes / 2**20:.0f} MiB, over the "
                               f"{limit // 2**20} MiB limit for code (largest: {listing}); keep data and model files "
                               "in S3 or FSx and read them through inputs")
    return result


def pack_to(entries: list[Entry], out: BinaryIO) -> str:
    """Write the gzip tarball of `entries` to `out`, streaming each file; return the archive's sha256."""
    digest = hashlib.sha256()

    class _Hashing:
        def write(self, data: bytes) -> int:
            digest.update(data)
            return out.write(data)

        def flush(self) -> None:
            out.flush()

    with gzip.GzipFile(filename="", mode="wb", fileobj=_Hashing(), mtime=0, compresslevel=9) as gz, \
            tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.arcname)
            info.size = entry.size
            info.mode = 0o755 if entry.executable else 0o644
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(entry.path, "rb") as handle:
                tar.addfile(info, _Exact(handle, entry.size, entry.path))
    return digest.hexdigest()


class _Exact:
    """A file read that fails loudly if the file changed size between scan and pack (the archive would be wrong)."""

    def __init__(self, handle: BinaryIO, size: int, path: Path) -> None:
        self.handle, self.left, self.path = handle, size, path

    def read(self, n: int = -1) -> bytes:
        want = self.left if n < 0 else min(n, self.left, _CHUNK)
        data = self.handle.read(want)
        if len(data) < want:
            raise OSError(f"{self.path} changed while it was being packed; run the command again")
        self.left -= len(data)
        return data
