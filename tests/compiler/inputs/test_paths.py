"""Paths a spec or cdk.json names that the file system refuses outright (compiler/inputs/paths.py): one problem on the
field, never the OSError or ValueError Python raises for them, each rule at its boundary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.errors import SpecError
from compiler.inputs.paths import unusable
from compiler.inputs.project import Project
from compiler.pipeline import project_images
from tests.project import project_copy

# The limits, stated from their sources rather than imported: Linux's NAME_MAX (<linux/limits.h>) and the 255
# UTF-8 bytes of a name on APFS; the platform's own bound on a whole path, macOS's PATH_MAX (<sys/syslimits.h>).
NAME_MAX = 255
PATH_MAX = 1024

pytestmark = pytest.mark.filterwarnings("ignore:.*not read as a git work tree")


@pytest.mark.parametrize("text", ["train.py", "a" * NAME_MAX, "é" * (NAME_MAX // 2) + "a",
                                  "/".join(["a" * 200] * 5)[:PATH_MAX], "../x", "a//b/"])
def test_paths_the_file_system_can_be_asked_about(text: str) -> None:
    assert unusable(text) is None


@pytest.mark.parametrize(("text", "why"), [
    ("a" * (NAME_MAX + 1), "the name aaaaaaaaaaaaaaaaaaaaaaaa... is 256 bytes long; a file system allows at most 255"),
    ("code/" + "é" * 128, "is 256 bytes long; a file system allows at most 255"),  # two bytes each in UTF-8
    ("/".join(["a" * 200] * 6)[:PATH_MAX + 1], "it is 1025 bytes long, at most 1024"),
    ("train\x00.py", "it holds a NUL character"),
    ("code/\ud800.py", "it is not valid UTF-8 text"),  # a lone surrogate: JSON's "\ud800" reads as one
])
def test_paths_it_refuses_say_why(text: str, why: str) -> None:
    refusal = unusable(text)
    assert refusal is not None and refusal.startswith("is not a usable path: ") and refusal.endswith(why)


@pytest.mark.parametrize("field", ["entry_point", "source_dir", "dependencies"])
def test_a_name_too_long_for_the_file_system_is_one_problem_on_its_field(rejects, field: str) -> None:
    long = "b" * (NAME_MAX + 1)
    changes = {"entry_point": {"entry_point": long}, "source_dir": {"source_dir": long},
               "dependencies": {"dependencies": [long]}}[field]
    rejects(field if field != "dependencies" else "dependencies[0]", "is not a usable path", "at most 255", **changes)


def test_a_name_at_the_limit_is_looked_up(rejects) -> None:
    rejects("entry_point", "is not a file in source_dir", entry_point="b" * NAME_MAX)


def test_an_entry_point_without_source_dir_is_held_to_the_same_rule(rejects) -> None:
    rejects("entry_point", "is not a usable path", source_dir=..., entry_point="code/" + "b" * (NAME_MAX + 1))


def _images(root: Path, **build: str) -> SpecError:
    path = root / "cdk.json"
    config = json.loads(path.read_text())
    config["context"]["training-platform:images"]["gpt-trainer"].update(build)
    path.write_text(json.dumps(config))
    project = Project(root)
    with pytest.raises(SpecError) as info:
        project_images(project, project.environments())
    return info.value


@pytest.mark.parametrize(("build", "field", "words"), [
    ({"build_context": "training\x00"}, "build_context", "it holds a NUL character"),
    ({"build_context": "c" * (NAME_MAX + 1)}, "build_context", "at most 255"),
    ({"dockerfile": "D" * (NAME_MAX + 1)}, "dockerfile", "at most 255"),
    ({"dockerfile": "\ud800"}, "dockerfile", "it is not valid UTF-8 text"),
])
def test_an_image_build_path_the_file_system_refuses_is_one_problem(tmp_path: Path, build: dict[str, str],
                                                                      field: str, words: str) -> None:
    [problem] = _images(project_copy(tmp_path), **build).problems
    assert problem.field == f"context.training-platform:images.gpt-trainer.{field}"
    assert words in problem.message


def test_a_dockerfile_outside_its_build_context_is_refused(tmp_path: Path) -> None:
    """The CDK stages the build context alone, so a Dockerfile beside it would be missing at build time."""
    root = project_copy(tmp_path)
    (root / "Dockerfile.outside").write_text("FROM scratch\n")
    [problem] = _images(root, dockerfile="../Dockerfile.outside").problems
    assert problem.message == ("training/../Dockerfile.outside is not a Dockerfile in this repository (the dockerfile "
                               "is a path inside build_context)")

