"""The code a job ships: `entry_point`, `source_dir`, `dependencies`, `container_log_level`.

Paths are relative to the spec file, as the SDK's are relative to the caller's working directory, and must stay
inside the project: a spec cannot ship /root or ../../etc. With `source_dir`, the entry point is a file inside it
(its path there is `sagemaker_program`); without, only the entry point file ships (under its own name).
"""

from __future__ import annotations

import os
from pathlib import Path

from compiler.inputs import paths
from compiler.inputs.model import CONTAINER_LOG_LEVEL, Code
from compiler.inputs.reader import Reader


def _local_path(r: Reader, key: str, text: str, spec_dir: Path, project_root: Path) -> Path | None:
    """A path relative to the spec file, normalised without following links, and checked to stay in the project."""
    refusal = paths.unusable(text)
    if refusal is not None:
        r.problem(key, refusal)
        return None
    if text.lower().startswith(("s3://", "https://", "http://", "file://")):
        r.problem(key, "must be a folder of this repository (relative to the spec file): the platform packs the code "
                  "at synth and uploads it at deploy")
        return None
    path = Path(os.path.abspath(spec_dir / text))  # absolute: a spec named by a relative path has a relative folder
    root = Path(os.path.abspath(project_root))
    if os.path.commonpath([path, root]) != str(root):
        r.problem(key, f"{text} is outside the project; the code a job ships must live in this repository")
        return None
    try:
        current = root
        for part in path.relative_to(root).parts:
            current = current / part
            if current.is_symlink():
                r.problem(key, f"{text} goes through the symbolic link {current.relative_to(root)}; name the real "
                          "folder")
                return None
    except OSError as exc:
        r.problem(key, f"{text} cannot be read ({exc.strerror})")
        return None
    return path


def _kind(r: Reader, key: str, text: str, path: Path) -> str | None:
    """'link', 'file', 'folder', 'missing' or 'other' (None: the file system refused to say, reported on `key`)."""
    try:
        if path.is_symlink():
            return "link"
        return "file" if path.is_file() else "folder" if path.is_dir() else "missing" if not path.exists() else "other"
    except OSError as exc:
        r.problem(key, f"{text} cannot be read ({exc.strerror})")
        return None


def _entry_point(r: Reader, text: str, source_dir: Path | None, spec_dir: Path, root: Path) -> Path | None:
    if source_dir is not None:
        relative = Path(text)
        if relative.is_absolute() or ".." in relative.parts:
            r.problem("entry_point", "must be a path inside source_dir, e.g. train.py")
            return None
        refusal = paths.unusable(text)
        if refusal is not None:
            r.problem("entry_point", refusal)
            return None
        path = source_dir / relative
        kind = _kind(r, "entry_point", text, path)
        if kind in ("link", "folder", "missing", "other"):
            r.problem("entry_point", f"{text} is not a file in source_dir" + (" (it is a symbolic link)"
                                                                             if kind == "link" else ""))
        return path if kind == "file" else None
    local = _local_path(r, "entry_point", text, spec_dir, root)
    kind = None if local is None else _kind(r, "entry_point", text, local)
    if kind in ("link", "folder", "missing", "other"):
        r.problem("entry_point", f"{text} is not a file (paths are relative to the spec file)")
    return local if kind == "file" else None


def read_code(r: Reader, spec_dir: Path, project_root: Path, required: bool) -> Code | None:
    """The job's code, or None for an image-only job (generic Estimator without entry_point)."""
    entry_text = r.string("entry_point", required=required, explain="the script the job runs, e.g. train.py")
    source_text = r.string("source_dir")
    log_level = r.integer("container_log_level", low=0, high=50, default=CONTAINER_LOG_LEVEL)
    source_dir = None
    if source_text is not None:
        source_dir = _local_path(r, "source_dir", source_text, spec_dir, project_root)
        kind = None if source_dir is None else _kind(r, "source_dir", source_text, source_dir)
        if kind in ("file", "link", "missing", "other"):
            r.problem("source_dir", f"folder {source_text} does not exist (paths are relative to the spec file)")
        if kind != "folder":
            source_dir = None
    dependencies = []
    for index, text in enumerate(r.strings("dependencies", max_items=32) or ()):
        path = _local_path(r, f"dependencies[{index}]", text, spec_dir, project_root)
        kind = None if path is None else _kind(r, f"dependencies[{index}]", text, path)
        if kind == "missing":
            r.problem(f"dependencies[{index}]", f"{text} does not exist (paths are relative to the spec file)")
        elif path is not None and kind is not None:
            dependencies.append(path)
    if entry_text is None:
        if source_text is not None or dependencies:
            r.problem("entry_point", "source_dir and dependencies ship code that needs an entry point to run; add "
                      "entry_point")
        return None
    if source_text is not None and source_dir is None:
        return None
    entry_path = _entry_point(r, entry_text, source_dir, spec_dir, project_root)
    if entry_path is None:
        return None
    return Code(entry_point=entry_text if source_dir is not None else Path(entry_text).name, source_dir=source_dir,
                entry_point_path=entry_path, dependencies=tuple(dependencies),
                container_log_level=log_level)
