"""The docs keep up with the code: every spec key is documented, and every relative link resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compiler.inputs.spec.keys import PLATFORM_KEYS, REFUSED, RENAMED, SDK_ARGUMENTS
from compiler.spec.loading import OVERRIDABLE
from tests.project import ROOT

SPEC_DOC = ROOT / "docs" / "workload-spec.md"
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])


def test_every_spec_key_is_in_the_workload_spec_doc() -> None:
    documented = set(re.findall(r"`([a-z_0-9]+)`", SPEC_DOC.read_text()))
    keys = SDK_ARGUMENTS | set(PLATFORM_KEYS) | set(REFUSED) | set(RENAMED) | OVERRIDABLE
    assert sorted(keys - documented) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_resolve(doc: Path) -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text()):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (doc.parent / target).exists(), f"{doc.name} links to {target}, which does not exist"


def test_the_checks_named_in_the_cloudformation_section_of_aws_assumptions_exist() -> None:
    """Each behaviour of docs/aws-assumptions.md's "CloudFormation, CloudWatch Logs and ECR" section names the test
    that checks it (`file.py::test_name`, or `::test_name` for the file named before it): each must exist."""
    text = (ROOT / "docs" / "aws-assumptions.md").read_text()
    start = text.index("\n## CloudFormation, CloudWatch Logs and ECR\n")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end != -1 else len(text)]
    named, current = [], None
    for file, name in re.findall(r"`(test_\w+\.py)?::(test_\w+)`", section):
        current = file or current
        assert current, f"::{name} names no file"
        named.append((current, name))
    assert len(named) >= 15
    for file, name in named:
        (path,) = (ROOT / "tests").rglob(file)
        assert re.search(rf"^def {name}\(", path.read_text(), re.MULTILINE), f"{file}::{name} does not exist"
