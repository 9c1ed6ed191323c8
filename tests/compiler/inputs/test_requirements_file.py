"""A bundle's requirements.txt is read as pip reads it: pip's own parser (pip._internal.req.req_file, the pip of this
environment) is the reference for which lines are requirements, where they are, and which are editable."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from compiler.inputs.requirements import read_requirements
from compiler.inputs.sourcedir import scan
from compiler.inputs.tracked import NotInGitWarning

# What people write: comments, continuations, markers, hashes, includes, editables, URLs, wheels, options.
REQUIREMENTS = """\
# training
numpy>=1.0 ; python_version >= "3.8"  # trailing comment
torch==2.2.0 \\
    --hash=sha256:abc
Transformers[torch]  ~= 4.41
-r more/extra.txt
-e ./local
--find-links ./wheels
--index-url https://pypi.org/simple
peft @ https://example.com/peft-0.1-py3-none-any.whl
git+https://github.com/x/y.git#egg=yyy
./wheels/foo-1.0-py3-none-any.whl
# pinned for the CUDA build \\
flash-attn==2.5.0
"""
EXTRA = "accelerate\n\n# done\nwandb==0.17.0  \n"


@pytest.fixture
def bundle(tmp_path: Path):
    code = tmp_path / "code"
    (code / "more").mkdir(parents=True)
    (code / "train.py").write_text("print(1)\n")
    (code / "requirements.txt").write_text(REQUIREMENTS)
    (code / "more" / "extra.txt").write_text(EXTRA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotInGitWarning)
        return code, scan(code, code / "train.py", (), tmp_path)


def pips_reading(path: Path) -> list[tuple[str, int, str | None, str, bool]]:
    """(file, line, name, specifier, editable) of each requirement, as pip's own parser reads the file."""
    from pip._internal.network.session import PipSession
    from pip._internal.req.req_file import parse_requirements

    found = []
    for parsed in parse_requirements(str(path), session=PipSession()):
        where = parsed.comes_from.removeprefix("-r ")  # "<path> (line N)"
        file, _, line = where.rpartition(" (line ")
        text = parsed.requirement.strip()
        try:
            requirement = Requirement(text)
            name, specifier = canonicalize_name(requirement.name), str(requirement.specifier)
        except ValueError:
            name, specifier = (canonicalize_name(text.partition("#egg=")[2]) if "#egg=" in text else None), ""
        found.append((Path(file).relative_to(path.parent).as_posix(), int(line.rstrip(")")), name, specifier,
                      parsed.is_editable))
    return found


def test_every_requirement_is_read_where_pip_reads_it(bundle) -> None:
    code, scanned = bundle
    read = read_requirements(scanned)
    assert read is not None and read.problems == []
    ours = sorted((line.file, line.number, line.name, line.specifier, line.editable) for line in read.lines)
    assert ours == sorted(pips_reading(code / "requirements.txt"))
    assert read.find_links == ["wheels"] and not read.no_index


def test_no_file_is_none_and_a_missing_include_is_said(tmp_path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text("print(1)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotInGitWarning)
        assert read_requirements(scan(code, code / "train.py", (), tmp_path)) is None
        (code / "requirements.txt").write_text("-r nowhere.txt\nnot a requirement !\n")
        read = read_requirements(scan(code, code / "train.py", (), tmp_path))
    assert read is not None
    assert any("nowhere.txt" in p and "not in the code bundle" in p for p in read.problems)
    assert any("line 2" in p and "not a requirement pip can read" in p for p in read.problems)
