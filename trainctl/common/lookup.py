"""Which project and which environment a command works on: one lookup each, so every command finds them the same
way and says the same thing when `--env` names no environment of cdk.json."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from compiler.errors import Problem, SpecError
from compiler.inputs.environments import Environment
from compiler.inputs.project import Project


class ReadOnceProject(Project):
    """The project as one command sees it: cdk.json's environments and the context (cdk.json with cdk.context.json)
    are read once, however often the command and the compiler ask for them."""

    @functools.cached_property
    def _environments(self) -> dict[str, Environment]:
        return super().environments()

    @functools.cached_property
    def _context(self) -> dict[str, Any]:
        return super().context()

    def environments(self) -> dict[str, Environment]:
        return dict(self._environments)

    def context(self) -> dict[str, Any]:
        return dict(self._context)


def project_of(args: argparse.Namespace, spec: str | None = None) -> Project:
    """`--project-dir`, else the project holding the working directory.

    `spec`: a spec the command was given; named by path from outside any project, its own project is the one.
    """
    given = getattr(args, "project_dir", None)
    if given:
        root = Path(given).resolve()
        if not (root / "cdk.json").is_file():
            raise SpecError(Problem(str(root), "--project-dir", "holds no cdk.json; name the repository's root folder"))
        return ReadOnceProject(root)
    try:
        return ReadOnceProject.find()
    except SpecError:
        path = Path(spec or "")
        if spec and "\x00" not in spec and (path.suffix in (".yaml", ".yml") or len(path.parts) > 1):
            return ReadOnceProject.find(path.resolve().parent)
        raise


class UnknownEnvironment(SpecError):
    """`--env` names no environment of cdk.json: the one message every command prints for it, with exit status 2 as
    argparse gives a wrong argument (trainctl.cli.main)."""

    def __init__(self, name: str, declared: Iterable[str]) -> None:
        super().__init__(Problem("", "", f"unknown environment '{name}'; cdk.json declares {', '.join(declared)}"))


def environment(project: Project, name: str) -> Environment:
    """The environment `--env NAME` names, from one reading of cdk.json."""
    envs = project.environments()
    if name not in envs:
        raise UnknownEnvironment(name, envs)
    return envs[name]
