"""Where a project's files are: cdk.json (environments), cdk.context.json (cached lookups), workloads/ (specs).

The compiler never derives paths from its own location: the CLI and the CDK app name the project (normally the
folder holding cdk.json, found from the working directory), so the same code compiles any checkout, such as a
second worktree that `trainctl review` synthesizes for comparison.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.errors import Problem, SpecError
from compiler.inputs.dns_firewall import CONTEXT_KEY as FIREWALL_KEY
from compiler.inputs.environments import CONTEXT_KEY, Environment, parse_environments
from compiler.inputs.reader import describe


@dataclass(frozen=True)
class Project:
    """One checkout of the project."""

    root: Path

    @property
    def cdk_json(self) -> Path:
        return self.root / "cdk.json"

    @property
    def cdk_context_json(self) -> Path:
        return self.root / "cdk.context.json"

    @property
    def workloads_dir(self) -> Path:
        return self.root / "workloads"

    @classmethod
    def find(cls, start: Path | None = None) -> Project:
        """The nearest folder at or above `start` (default: the working directory) that holds cdk.json."""
        here = (start or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / "cdk.json").is_file():
                return cls(folder)
        raise SpecError(Problem(str(here), "", "is not inside a project: no cdk.json here or in a parent folder "
                                "(run the command from the repository, or pass --project-dir)"))

    def environments(self) -> dict[str, Environment]:
        """Every environment cdk.json declares, checked."""
        settings = self.settings()
        return parse_environments(settings.get(CONTEXT_KEY), source=self.cdk_json.name,
                                  firewall=settings.get(FIREWALL_KEY))

    def settings(self) -> dict[str, Any]:
        """cdk.json's context: the project's settings (the one reader of cdk.json)."""
        settings = _json_object(self.cdk_json).get("context", {})
        if not isinstance(settings, dict):
            raise SpecError(Problem(self.cdk_json.name, "context", f"must be a JSON object of settings, not "
                                    f"{describe(settings)}"))
        return settings

    def context(self) -> dict[str, Any]:
        """cdk.json's context plus the cached lookups of cdk.context.json, as the CDK CLI passes them to the app."""
        return {**self.settings(), **self.cached_lookups()}

    def cached_lookups(self) -> dict[str, Any]:
        """cdk.context.json: the lookups the CDK (and `trainctl lookup-zones`) cached, empty when there is none."""
        return _json_object(self.cdk_context_json)

    def display(self, path: Path) -> str:
        """A path as people see it in messages: relative to the project when inside it."""
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)


def _json_object(path: Path) -> dict[str, Any]:
    """A JSON file holding one object (empty when the file is absent)."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise SpecError(Problem(path.name, "", f"is not valid JSON: {exc}")) from None
    if not isinstance(data, dict):
        raise SpecError(Problem(path.name, "", f"must be a JSON object ({{\"key\": value, ...}}), not {describe(data)}"))
    return data
