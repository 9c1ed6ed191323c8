"""docs/aws-assumptions.md's "Step Functions and SageMaker" section names, for each behaviour, the test that checks it.

Each name (`compiler/test_x.py::test_name`, or `::test_name` for the file named before it in the same cell) must be a
test that exists, and each behaviour must name a test, a public source or "preflight".
"""

from __future__ import annotations

import re

from tests.project import ROOT

SECTION = "\n## Step Functions and SageMaker\n"


def section() -> str:
    text = (ROOT / "docs" / "aws-assumptions.md").read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def rows() -> list[list[str]]:
    lines = [line for line in section().splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[1:]]


def test_every_named_test_exists() -> None:
    named = 0
    for _, _, checked in rows():
        current = None
        for file, name in re.findall(r"`((?:compiler|compiler/state_machine)/test_\w+\.py)?::(test_\w+)`", checked):
            current = file or current
            assert current, f"::{name} names no file"
            text = (ROOT / "tests" / current).read_text()
            assert re.search(rf"^def {name}\(", text, re.MULTILINE), f"{current}::{name} does not exist"
            named += 1
    assert named >= 30


def test_every_behaviour_has_a_source_and_a_check() -> None:
    table = rows()
    assert len(table) >= 25
    for behaviour, source, checked in table:
        assert source, behaviour
        assert "::test_" in checked or "preflight" in checked or "not handled" in checked, behaviour
