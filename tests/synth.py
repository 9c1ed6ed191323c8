"""One synthesis of the whole app for the test session: `stacks.app.build_app`, exactly what `cdk synth` runs.

Synthesizing costs seconds while reading templates is free, so the platform, state-machine and review tests share
this one app (both environments, platform and workload stacks) instead of synthesizing the same stacks twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stacks.app import PlatformApp, build_app
from tests.project import PROJECT


@dataclass
class App:
    """The synthesized cloud assembly, the app object, and every template by environment and stack id."""

    outdir: Path
    platform: PlatformApp
    templates: dict[str, dict[str, dict[str, Any]]]

    @property
    def stages(self) -> dict[str, Any]:
        return self.platform.stages


def synthesize(outdir: Path) -> App:
    # The CDK's built-in CloudFormation validation is off here: cfn-lint and checkov lint every template of this
    # assembly (tests/platform), and the CLI test synthesizes with it on and no warning (test_checks.py).
    platform = build_app(PROJECT, outdir=str(outdir), builtin_validation=False)
    platform.synth()
    templates = {
        name: {stack.node.id: json.loads((outdir / f"assembly-{name}" / stack.template_file).read_text())
               for stack in stage.node.children if hasattr(stack, "template_file")}
        for name, stage in platform.stages.items()
    }
    return App(outdir=outdir, platform=platform, templates=templates)
