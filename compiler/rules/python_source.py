"""The entry point is Python the image can run: a syntax error fails the job only after its instances have started.

The training toolkit runs a `.py` entry point with the image's Python (`python <entry point>`); a syntax error there,
or syntax newer than the image's Python (`match` on 3.9), ends the job after the instances are billed, the image
pulled and the requirements installed. The rule parses every `.py` file the code bundle ships, with the grammar of the
image's Python where the image says its version (`py_version`: `feature_version` of Python's own parser):

- the entry point: refused, naming the line, when this machine's Python is at least the image's (its parser knows that
  grammar); a warning when the image's Python is newer than this machine's or not said (the error may be syntax this
  machine does not know yet);
- any other module: a warning (it fails the job only if imported).

Only the grammar is checked: what the code imports, and whether the image has it, is for the requirements rule and the
job itself. A file over `MAX_PARSED_BYTES` is not parsed: that is generated data, not code someone edits (Python's
parser takes about 2 s and 650 MiB for 8 MB of source), and validate must stay quick and small.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

from compiler.inputs.model import Code
from compiler.inputs.reader import Findings
from compiler.rules.registry import compiled_rule
from compiler.rules.requirements import image_contents
from compiler.rules.views import CompiledView

Version = tuple[int, int]
THIS_PYTHON: Version = sys.version_info[:2]  # the grammar this parser knows
MAX_PARSED_BYTES = 1024 * 1024


def syntax_error(path: Path, grammar: Version | None) -> str | None:
    """Why the file is not Python of that grammar (`line N: message`), or None. Every workload and environment that
    ships a bundle asks again: the answer is kept while the file's size and modification time stay."""
    try:
        info = path.stat()
    except OSError as error:  # it vanished since the scan
        return str(error)
    return _parsed(path, info.st_size, info.st_mtime_ns, grammar)


@functools.lru_cache(maxsize=4096)
def _parsed(path: Path, size: int, modified_ns: int, grammar: Version | None) -> str | None:
    """`syntax_error`, keyed by what says the file changed."""
    try:
        ast.parse(path.read_bytes(), filename=str(path), feature_version=grammar)
    except SyntaxError as error:  # also a bad encoding declaration or undecodable bytes
        return f"line {error.lineno}: {error.msg}" if error.lineno else str(error.msg)
    except (ValueError, OSError) as error:  # a NUL byte (Python 3.11 and older); the file vanished since the scan
        return str(error)
    except (RecursionError, MemoryError):  # nesting past what Python's parser (and so the job's Python) takes
        return "nested too deeply for Python's parser"
    return None


def known_grammar(image: Version | None, here: Version) -> Version | None:
    """The image's Python where this parser knows its grammar (Python 3, not newer than this one); else None."""
    return image if image is not None and image[0] == 3 and image <= here else None


def _version(text: str | None) -> Version | None:
    """`3.10` -> (3, 10)."""
    major, _, minor = (text or "").partition(".")
    return (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None


@compiled_rule
def the_entry_point_is_python_the_image_runs(view: CompiledView, f: Findings) -> None:
    code, bundle = view.workload.code, view.bundle
    if code is None or bundle is None:
        return
    image = _version(image_contents(view.workload, view.image_builds).python)
    here = THIS_PYTHON
    grammar = known_grammar(image, here)
    known = grammar is not None
    python = f"Python {image[0]}.{image[1]}" if image else "the image's Python"
    for entry in bundle.entries:
        if not entry.arcname.endswith(".py") or entry.size > MAX_PARSED_BYTES:
            continue
        error = syntax_error(entry.path, grammar)
        if error is None:
            continue
        where = f"{entry.arcname}: {error}"
        if entry.path == code.entry_point_path and known:
            f.problem("entry_point", f"{where}: not valid {python}, which the job runs it with; the job would fail "
                      "on it after its instances start: fix it")
        elif entry.path == code.entry_point_path:
            f.warn("entry_point", f"{where} (parsed as Python {here[0]}.{here[1]}, this machine's; {python} may take "
                   "it): the job fails on it after its instances start if the image's Python does not")
        else:
            f.warn(_field(code, entry.path), f"{where}: not valid {python if known else f'Python {here[0]}.{here[1]}'}; "
                   "the job fails when it imports this module")


def _field(code: Code, path: Path) -> str:
    """The spec field that shipped the file: one of `dependencies`, else `source_dir`."""
    return "dependencies" if any(path.is_relative_to(folder) for folder in code.dependencies) else "source_dir"
