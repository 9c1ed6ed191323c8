"""The entry point is Python the image runs (compiler/rules/python_source.py): refused at validate, not after the
instances start.

The grammar boundary is Python's own ("What's New in Python 3.10": structural pattern matching, `match`), and so are
the messages (CPython's parser); the image's Python is the spec's `py_version`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from compiler.inputs.tracked import NotInGitWarning
from compiler.pipeline import _Bundles, compile_workload
from compiler.rules.python_source import syntax_error
from tests.project import ENVIRONMENTS

DEV = ENVIRONMENTS["dev"]
MATCH = "match command:\n    case 'go':\n        pass\n"  # Python 3.10 and later


def found(make, spec_dir: Path, source: str, module: str | None = None, **changes) -> tuple[list[str], list[str]]:
    """(problems, warnings) of the rule for a workload whose train.py (or `module`, beside it) holds `source`."""
    (spec_dir / "code" / (module or "train.py")).write_text(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotInGitWarning)  # the test's folder is no git work tree: every file ships
        result, problems = compile_workload(make(**changes), DEV, {}, _Bundles(spec_dir))
    mine = ("entry_point: ", "source_dir: ")
    return ([str(p) for p in problems if any(m in str(p) for m in mine) and "valid" in str(p)],
            [w for w in result.warnings if "valid" in w])


def test_a_syntax_error_in_the_entry_point_is_refused_naming_the_line(make, spec_dir) -> None:
    problems, _ = found(make, spec_dir, "import os\n\ndef main(:\n    pass\n")
    assert problems == ["demo.yaml: entry_point: train.py: line 3: invalid syntax: not valid Python 3.11, which the "
                        "job runs it with; the job would fail on it after its instances start: fix it"]


def test_syntax_newer_than_the_images_python_is_refused_at_its_boundary(make, spec_dir) -> None:
    code = f"command = 'go'\n{MATCH}"
    py39, _ = found(make, spec_dir, code, framework_version="1.13.1", py_version="py39")
    assert py39 == ["demo.yaml: entry_point: train.py: line 4: Pattern matching is only supported in Python 3.10 and "
                    "greater: not valid Python 3.9, which the job runs it with; the job would fail on it after its "
                    "instances start: fix it"]
    assert found(make, spec_dir, code, framework_version="2.0.1", py_version="py310") == ([], [])


def test_an_image_newer_than_this_machine_only_warns(make, spec_dir, monkeypatch) -> None:
    """This parser cannot know a newer grammar: what it refuses may be valid there (the `type` statement of 3.12 read
    by 3.11), so the entry point is then warned about, not refused. Here the spec's image runs Python 3.11 and the
    parser stands in for a 3.10 one."""
    from compiler.rules import python_source

    monkeypatch.setattr(python_source, "THIS_PYTHON", (3, 10))
    problems, warned = found(make, spec_dir, "def main(:\n")
    assert problems == []
    assert warned == ["demo.yaml: entry_point: train.py: line 1: invalid syntax (parsed as Python 3.10, this "
                      "machine's; Python 3.11 may take it): the job fails on it after its instances start if the "
                      "image's Python does not"]


def test_the_parser_is_asked_only_for_a_grammar_it_knows() -> None:
    """Python's parser takes `feature_version` from (3, 4) up to its own version (an assertion fails on (2, 7))."""
    from compiler.rules.python_source import known_grammar

    assert known_grammar((3, 11), (3, 11)) == (3, 11) and known_grammar((3, 9), (3, 11)) == (3, 9)
    assert known_grammar((3, 12), (3, 11)) is None  # newer than this parser
    assert known_grammar((2, 7), (3, 11)) is None and known_grammar(None, (3, 11)) is None


def test_another_module_with_a_syntax_error_is_a_warning(make, spec_dir) -> None:
    problems, warned = found(make, spec_dir, "def broken(:\n", module="helpers.py")
    assert problems == []
    assert warned == ["demo.yaml: source_dir: helpers.py: line 1: invalid syntax: not valid Python 3.11; the job fails "
                      "when it imports this module"]


def test_a_nul_byte_and_a_bad_encoding_are_refused(spec_dir) -> None:
    (spec_dir / "code" / "train.py").write_bytes(b"print('a')\x00\n")
    nul = syntax_error(spec_dir / "code" / "train.py", None)
    (spec_dir / "code" / "train.py").write_bytes(b"print('\xff')\n")
    latin = syntax_error(spec_dir / "code" / "train.py", None)
    assert nul and latin  # Python refuses both: the job would too


@pytest.mark.parametrize("source", ["-" * 100_000 + "1", "1" + "+1" * 200_000])
def test_nesting_past_what_pythons_parser_takes_is_an_answer_not_a_traceback(spec_dir, source) -> None:
    """CPython's parser gives up with MemoryError (a stack of unary minus) or RecursionError (a long sum): so would
    the job's Python."""
    path = spec_dir / "code" / "deep.py"
    path.write_text(source)
    assert syntax_error(path, None) == "nested too deeply for Python's parser"


def test_shell_entry_points_and_valid_code_pass(make, spec_dir) -> None:
    assert found(make, spec_dir, "print('hi')\n") == ([], [])
    (spec_dir / "code" / "run.sh").write_text("#!/bin/sh\nif then fi (\n")  # not Python: not parsed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotInGitWarning)
        _, problems = compile_workload(make(framework=..., entry_point="run.sh", image_uri="1.dkr.ecr.us-east-1."
                                            "amazonaws.com/x:1", framework_version=..., py_version=...,
                                            distribution=...), DEV, {}, _Bundles(spec_dir))
    assert not [p for p in problems if "valid" in str(p)]


def test_a_file_changed_between_compiles_is_parsed_again(spec_dir) -> None:
    path = spec_dir / "code" / "train.py"
    path.write_text("x = 1\n")
    assert syntax_error(path, (3, 10)) is None
    path.write_text("x = (\n")  # another size: the kept answer is not reused
    assert syntax_error(path, (3, 10)) == "line 1: '(' was never closed"


def test_a_dependencys_module_is_warned_about_under_dependencies(make, spec_dir) -> None:
    (spec_dir / "lib").mkdir()
    (spec_dir / "lib" / "util.py").write_text("def broken(:\n")
    problems, warned = found(make, spec_dir, "print('hi')\n", dependencies=["lib"])
    assert problems == []
    assert warned == ["demo.yaml: dependencies: lib/util.py: line 1: invalid syntax: not valid Python 3.11; the job "
                      "fails when it imports this module"]


def test_files_up_to_one_mebibyte_are_parsed_and_larger_ones_left_alone(make, spec_dir) -> None:
    """The limit's boundary: a broken module of exactly 1 MiB is warned about, one byte more is not parsed."""
    from compiler.rules.python_source import MAX_PARSED_BYTES

    broken = "def broken(:\n"
    padding = "#" * (MAX_PARSED_BYTES - len(broken) - 1) + "\n"
    assert len(broken + padding) == 1024 * 1024
    (spec_dir / "code" / "data.py").write_text(broken + padding)
    assert len(found(make, spec_dir, "print('hi')\n")[1]) == 1
    (spec_dir / "code" / "data.py").write_text(broken + padding + "\n")
    assert found(make, spec_dir, "print('hi')\n") == ([], [])
