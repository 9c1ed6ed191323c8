"""Text a job wrote, and a problem that quotes a spec or cdk.json, reach the terminal with their controls shown, never
obeyed (compiler/errors.py).

The characters are literals from their sources: ECMA-48's C0 and C1 sets (ESC 0x1b and CSI 0x9b start its escape
sequences, OSC 0x9d, BEL 0x07 ends an xterm OSC), Unicode's bidirectional controls (U+202A-U+202E, U+2066-U+2069; the
"Trojan Source" paper, CVE-2021-42574), its line and paragraph separators (U+2028, U+2029).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.errors import Problem, printable
from tests.project import project_copy
from trainctl.cli import main
from trainctl.common.verdicts import FAIL, Result, table
from trainctl.run.listing import table as runs_table


@pytest.mark.parametrize(("text", "shown"), [
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),                       # clear the screen, cursor home
    ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),                  # OSC: set the window title
    ("\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\", "\\x1b]8;;https://x.example\\x1b\\link\\x1b]8;;\\x1b\\"),
    ("ok\rFAILED", "ok\\rFAILED"),                               # a carriage return overwrites the line shown
    ("\x9b31m", "\\x9b31m"), ("\x9d0;t\x9c", "\\x9d0;t\\x9c"),   # C1: CSI, OSC, ST
    ("a\x00b\x08c\x7fd", "a\\x00b\\x08c\\x7fd"),                # NUL, backspace, DEL
    ("\u202egnp.exe", "\\u202egnp.exe"), ("\u2066x\u2069", "\\u2066x\\u2069"),  # bidi override and isolate
    ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),                    # separators some terminals break lines at
    ("\ud800", "\\ud800"),                                       # a lone surrogate (which would fail the write)
])
def test_controls_are_shown_as_repr_writes_them(text, shown) -> None:
    assert printable(text) == shown


@pytest.mark.parametrize("text", ["", "train_loss=2.31 step=100", "données: 1.0 µs, 東京, 🚀", "C:\\path\\x1b",
                                  "tab\there", "two\nlines", "non\u00a0breaking"])
def test_text_without_controls_is_kept(text) -> None:
    assert printable(text) == text


def test_newline_and_tab_are_escaped_where_the_layout_is_one_line() -> None:
    assert printable("a\nb\tc", keep_layout=False) == "a\\nb\\tc"


def test_nothing_escaped_contains_a_control() -> None:
    every = "".join(map(chr, range(0x00, 0xA0))) + "\u200b\u200e\u202e\u2066\u2028\ufeff"
    shown = printable(every)
    assert all(c in "\n\t" or 0x20 <= ord(c) < 0x7f for c in shown)


def test_the_smoke_and_preflight_table_escapes_a_detail() -> None:
    rendered = table([Result("fsx-mount", FAIL, "the job Failed: \x1b]0;pwned\x07line\nnext | x")])
    assert rendered.splitlines()[-1] == "| fsx-mount | FAIL | the job Failed: \\x1b]0;pwned\\x07line next \\| x |"


def test_the_runs_table_escapes_each_cell_on_one_line() -> None:
    rendered = runs_table([["run-1", "FAILED (\x1b[31mx\nB)"]], ["NAME", "STATUS"])
    assert rendered.splitlines() == ["NAME   STATUS", "run-1  FAILED (\\x1b[31mx\\nB)"]


def test_a_problem_shows_the_controls_of_what_it_quotes() -> None:
    assert str(Problem("cdk.json", "st\x1b[2Jg", "quoted \x9b31m\nnext line")) == ("cdk.json: st\\x1b[2Jg: quoted "
                                                                                  "\\x9b31m\nnext line")


def test_validate_prints_a_planted_escape_sequence_escaped(tmp_path: Path, capsys) -> None:
    """An environment named with ESC [2J (clear the screen) in another team's cdk.json."""
    root = project_copy(tmp_path)
    data = json.loads((root / "cdk.json").read_text())
    environments = data["context"]["training-platform:environments"]
    environments["st\x1b[2Jg"] = environments.pop("prod")
    (root / "cdk.json").write_text(json.dumps(data))
    assert main(["--project-dir", str(root), "validate"]) == 1
    err = capsys.readouterr().err
    assert "cdk.json: st\\x1b[2Jg: environment names are 1-16 lowercase letters" in err
    assert "\x1b" not in err
