"""What every command shares: which project it works on (one lookup, so every command finds it the same way)."""

from __future__ import annotations

import argparse
from pathlib import Path

from compiler.errors import Problem, SpecError
from compiler.inputs.project import Project


def project_of(args: argparse.Namespace, spec: str | None = None) -> Project:
    """`--project-dir`, else the project holding the working directory.

    `spec`: a spec the command was given; named by path from outside any project, its own project is the one.
    """
    given = getattr(args, "project_dir", None)
    if given:
        root = Path(given).resolve()
        if not (root / "cdk.json").is_file():
            raise SpecError(Problem(str(root), "--project-dir", "holds no cdk.json; name the repository's root folder"))
        return Project(root)
    try:
        return Project.find()
    except SpecError:
        path = Path(spec or "")
        if spec and "\x00" not in spec and (path.suffix in (".yaml", ".yml") or len(path.parts) > 1):
            return Project.find(path.resolve().parent)
        raise


def problem(message: str) -> SpecError:
    """A message for the user (exit 1); the CLI prints it without a traceback."""
    return SpecError(Problem("", "", message))
