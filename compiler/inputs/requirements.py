"""The `requirements.txt` a code bundle ships, read as pip reads it, for the check that pip will not need a network.

Why: the SageMaker training toolkit runs `python -m pip install -r requirements.txt` in the job's code folder
(/opt/ml/code, the bundle's root) before a Python entry point starts (aws/sagemaker-training-toolkit,
`entry_point.install` and `modules.install_requirements`), on every host. Under network isolation (the platform's
default) pip reaches no index, so every line must already be satisfied by the image (compiler/rules/requirements.py).

The file format is pip's ("Requirements File Format", pip documentation): one requirement per line (PEP 508, or a URL
or path), `#` comments, `\\` continuations, and options (`-r`/`-c` other files, `-e` editables, index and find-links
options). Each requirement line is parsed with `packaging` (PyPA's own parser, the one pip vendors).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from compiler.inputs.sourcedir import Scan

FILE_NAME = "requirements.txt"  # the toolkit's name for it, at the top of the code folder (modules.has_requirements)
_MAX_INCLUDES = 16  # -r files read at most (a loop of includes ends here)
_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Line:
    """One requirement: where it is, as written, and what pip makes of it."""

    file: str  # its file's path in the bundle
    number: int  # its first line
    text: str  # as written (continuations joined)
    name: str | None  # the distribution, normalised (PEP 503); None for a bare URL or path
    specifier: str  # e.g. ">=2.2"; "" for any version
    marker: Marker | None = None
    url: str | None = None  # `name @ URL`, a bare URL or a path: where pip gets it instead of an index
    editable: bool = False

    @property
    def where(self) -> str:
        return f"{self.file} line {self.number}"

    @property
    def remote(self) -> bool:
        """Whether pip downloads it from a URL (https, a VCS), which a job without a network cannot."""
        return self.url is not None and "://" in self.url and not self.url.startswith("file:")


@dataclass
class Requirements:
    """What a bundle's requirements files ask pip to install, with what cannot be read."""

    lines: list[Line] = field(default_factory=list)
    no_index: bool = False  # --no-index: pip looks at no index, only at --find-links
    find_links: list[str] = field(default_factory=list)  # folders of the bundle (relative to its root) pip looks in
    remote_find_links: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unreadable files and lines
    archives: set[str] = field(default_factory=set)  # distributions a --find-links folder of the bundle holds


def read_requirements(scan: Scan) -> Requirements | None:
    """The bundle's requirements, or None when it ships no `requirements.txt` at its root."""
    files = {e.arcname: e.path for e in scan.entries}
    if FILE_NAME not in files:
        return None
    found = Requirements()
    queue, seen = [FILE_NAME], set[str]()
    while queue and len(seen) < _MAX_INCLUDES:
        name = queue.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name not in files:
            found.problems.append(f"{name} is named by -r but is not in the code bundle")
            continue
        queue += _read_file(name, files[name], found)
    for folder in found.find_links:
        prefix = "" if folder == "." else f"{folder}/"
        for name in files:
            archive = _archive_name(name[len(prefix):]) if name.startswith(prefix) else None
            if archive is not None and "/" not in name[len(prefix):]:
                found.archives.add(archive)
    return found


def _archive_name(file_name: str) -> str | None:
    """The distribution a wheel (`name-version(-build)-python-abi-platform.whl`, the name with `_` for `-`) or a
    source archive (`name-version.tar.gz`) is of (Python Packaging User Guide, "Binary distribution format")."""
    if file_name.endswith(".whl"):
        return canonicalize_name(file_name.split("-", 1)[0])
    for suffix in (".tar.gz", ".zip"):
        if file_name.endswith(suffix):
            return canonicalize_name(file_name[: -len(suffix)].rsplit("-", 1)[0])
    return None


# pip's req_file.COMMENT_RE, as join_lines matches it: a line that starts with a comment is never continued.
_COMMENT_LINE = re.compile(r"(^|\s+)#.*$")


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with `\\` continuations joined and comments dropped, as pip's preprocessor does."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        comment = _COMMENT_LINE.match(raw) is not None  # a comment line ends any continuation, backslash or not
        if raw.endswith("\\") and not comment:
            pending += raw[:-1]
            continue
        line = pending + (" " + raw if comment else raw)
        pending = ""
        cut = next((i for i in range(len(line)) if line[i] == "#" and (i == 0 or line[i - 1] in " \t")), None)
        line = (line[:cut] if cut is not None else line).strip()
        if line:
            out.append((start, line))
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def _read_file(name: str, path: Path, found: Requirements) -> list[str]:
    """Read one requirements file into `found`; returns the files it includes with -r (bundle paths)."""
    try:
        if path.stat().st_size > _MAX_BYTES:
            found.problems.append(f"{name} is over {_MAX_BYTES // 1024} KiB; a requirements file that large is not read")
            return []
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        found.problems.append(f"{name} cannot be read ({exc})")
        return []
    includes = []
    for number, line in _logical_lines(text):
        if line.startswith("-"):
            includes += _option(name, number, line, found)
        else:
            found.lines.append(_requirement(name, number, line, editable=False, found=found))
    return includes


_VALUE_OPTIONS = {"-r": "requirement", "--requirement": "requirement", "-c": "constraint", "--constraint": "constraint",
                  "-e": "editable", "--editable": "editable", "-f": "find-links", "--find-links": "find-links",
                  "-i": "index", "--index-url": "index", "--extra-index-url": "index"}


def _option(name: str, number: int, line: str, found: Requirements) -> list[str]:
    """One option line; returns the file it includes, if it is `-r`."""
    try:
        words = shlex.split(line)
    except ValueError:
        found.problems.append(f"{name} line {number}: {line!r} cannot be read")
        return []
    flag, _, attached = words[0].partition("=")
    if flag.startswith("-") and not flag.startswith("--") and len(flag) > 2:  # -rother.txt
        flag, attached = flag[:2], flag[2:]
    value = attached or (words[1] if len(words) > 1 else "")
    kind = _VALUE_OPTIONS.get(flag)
    if flag == "--no-index":
        found.no_index = True
    elif kind == "requirement" and value:
        return [posixpath.normpath(posixpath.join(posixpath.dirname(name), value))]
    elif kind == "editable" and value:
        found.lines.append(_requirement(name, number, value, editable=True, found=found))
    elif kind == "find-links" and value:
        if "://" in value and not value.startswith("file:"):
            found.remote_find_links.append(value)
        else:
            local = value.removeprefix("file://").removeprefix("file:")
            found.find_links.append(posixpath.normpath(posixpath.join(posixpath.dirname(name), local)))
    return []


def _requirement(file: str, number: int, text: str, *, editable: bool, found: Requirements) -> Line:
    """A requirement line: PEP 508 (`name[extras] specifier ; marker`, or `name @ URL`), else a URL or path."""
    requirement_text = text.split(" --", 1)[0].strip()  # per-requirement options (--hash=...) change nothing here
    try:
        parsed = Requirement(requirement_text)
    except InvalidRequirement:
        if "://" in requirement_text or requirement_text.startswith((".", "/")) or requirement_text.endswith(
                (".whl", ".tar.gz", ".zip")):
            url = requirement_text.split(";", 1)[0].strip()
            egg = url.partition("#egg=")[2].split("&", 1)[0]
            return Line(file, number, text, canonicalize_name(egg) if egg else None, "", url=url, editable=editable)
        found.problems.append(f"{file} line {number}: {text!r} is not a requirement pip can read")
        return Line(file, number, text, None, "", editable=editable)
    return Line(file, number, text, canonicalize_name(parsed.name), str(parsed.specifier), parsed.marker,
                url=parsed.url, editable=editable)
