"""cdk.json and cdk.context.json that are valid JSON but not what the CDK reads (an object of settings, an object of
cached lookups): one problem naming the file and what it must be, before anything is compiled (Project.context)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.errors import SpecError
from compiler.inputs.project import Project
from compiler.pipeline import compile_project
from tests.project import project_copy


@pytest.mark.parametrize(("text", "shown"), [("null", "None (empty)"), ("[]", "[] (a list)"), ('"x"', "'x' (text)")])
def test_a_cache_that_is_no_object_is_one_problem(tmp_path: Path, text: str, shown: str) -> None:
    root = project_copy(tmp_path)
    (root / "cdk.context.json").write_text(text)
    with pytest.raises(SpecError) as info:
        compile_project(Project(root))
    assert str(info.value) == f'cdk.context.json: must be a JSON object ({{"key": value, ...}}), not {shown}'


def test_an_absent_cache_is_no_lookups(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    (root / "cdk.context.json").unlink()
    assert Project(root).cached_lookups() == {}


def test_settings_that_are_no_object_are_one_problem(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    data = json.loads((root / "cdk.json").read_text())
    (root / "cdk.json").write_text(json.dumps({**data, "context": ["training-platform:environments"]}))
    with pytest.raises(SpecError) as info:
        Project(root).context()
    assert str(info.value) == ("cdk.json: context: must be a JSON object of settings, not "
                               "['training-platform:environments'] (a list)")
