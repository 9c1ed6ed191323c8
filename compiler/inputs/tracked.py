"""Which files of a folder git tracks: the code bundle and the image's build context ship only those.

Why: a file someone keeps next to the code without committing it (a `.env`, a token, a notebook's output, a
dataset) must not reach a training job, whose code every reader of the bucket or the image can see. What git tracks
is what review saw. A folder outside a git work tree (a copy of the project, a test's temporary folder) has no such
list: the callers then take every file and warn.
"""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

from compiler.errors import ProjectWarning


class NotInGitWarning(ProjectWarning):
    """A bundle or build context was read without git's list of tracked files (every file ships)."""


def tracked_files(folder: Path) -> frozenset[str] | None:
    """Paths (relative to `folder`, POSIX) of the files git tracks under it, staged new files included; None when
    the folder is not in a git work tree or git cannot say (with a warning naming why)."""
    try:
        done = subprocess.run(["git", "-C", str(folder), "ls-files", "-z", "--cached", "--", "."],
                              capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _warn(folder, f"git could not run ({exc})")
        return None
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        _warn(folder, reason[0] if reason else f"git ls-files exited {done.returncode}")
        return None
    return frozenset(name for name in done.stdout.decode("utf-8", errors="surrogateescape").split("\0") if name)


def ignored(folder: Path, paths: list[Path]) -> set[Path]:
    """Which of `paths` (untracked, under `folder`) git ignores (.gitignore, .git/info/exclude, the user's excludes):
    left out on purpose, unlike a file someone forgot to add. An empty set when git cannot say."""
    if not paths:
        return set()
    try:
        done = subprocess.run(["git", "-C", str(folder), "check-ignore", "--no-index", "-z", "--stdin"],
                              input=b"\0".join(os.fsencode(p) for p in paths), capture_output=True, check=False,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    if done.returncode not in (0, 1):  # 1: none is ignored
        return set()
    return {Path(os.fsdecode(name)) for name in done.stdout.split(b"\0") if name}


def _warn(folder: Path, reason: str) -> None:
    warnings.warn(NotInGitWarning(f"{folder}: not read as a git work tree ({reason}); every file in it ships, "
                                  "untracked ones too"), stacklevel=3)


def untracked_paths(folder: Path, tracked: frozenset[str]) -> list[str]:
    """What under `folder` git does not track, relative and POSIX: a folder once when none of its files is tracked,
    else each untracked file (links are not followed)."""
    tracked_dirs = {parent.as_posix() for name in tracked for parent in Path(name).parents} - {"."}
    found: list[str] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        here = Path(root).relative_to(folder)
        kept = []
        for name in sorted(dirs):
            relative = (here / name).as_posix()
            if relative in tracked:  # a tracked link to a folder
                continue
            if relative in tracked_dirs:
                kept.append(name)
            else:
                found.append(relative)
        dirs[:] = kept
        found.extend((here / name).as_posix() for name in sorted(files) if (here / name).as_posix() not in tracked)
    return sorted(found)


def docker_exclude(path: str) -> str | None:
    """`path` as a Docker ignore pattern that matches it alone (`*`, `?`, `[`, `]`, `\\` escaped); None when the
    syntax cannot say it (patterns are trimmed, `#` starts a comment, `!` negates, one pattern per line)."""
    if path != path.strip() or path.startswith(("#", "!")) or "\n" in path or "\r" in path:
        return None
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in path)
