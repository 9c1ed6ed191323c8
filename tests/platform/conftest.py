"""The platform stacks of the session's one synthesized app (tests/synth.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PLATFORM_STACKS = ("Network", "Storage", "Registry", "Access")


@dataclass
class Synth:
    """Templates of every platform stack, by environment and stack id, plus the live construct objects."""

    outdir: Path
    stages: dict[str, Any]
    templates: dict[str, dict[str, dict[str, Any]]]

    def template(self, env: str, stack: str) -> dict[str, Any]:
        return self.templates[env][stack]

    def resources(self, env: str, stack: str, kind: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.template(env, stack)["Resources"].items() if v["Type"] == kind}


@pytest.fixture(scope="session")
def synth(synthesized_app) -> Synth:
    """The platform stacks of the session's one synthesized app."""
    templates = {env: {sid: t for sid, t in stacks.items() if sid in PLATFORM_STACKS}
                 for env, stacks in synthesized_app.templates.items()}
    return Synth(outdir=synthesized_app.outdir, stages=synthesized_app.stages, templates=templates)
