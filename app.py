#!/usr/bin/env python3
"""The CDK app (`cdk synth` runs this): one Stage per environment of cdk.json; see stacks/app.py.

Bad input (cdk.json, cached lookups, workload specs) stops synth with every problem listed and what to fix, before
any construct exists: never a traceback, nothing synthesized half-way.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from compiler.errors import SpecError, show_project_warnings, warning_line
from compiler.inputs.project import Project
from stacks.app import build_app


def main(project: Project) -> int:
    """Synthesize, or print what to fix and exit 1."""
    try:
        platform = build_app(project)
    except SpecError as error:
        print(f"cdk synth stopped: fix these settings first\n{error}", file=sys.stderr)
        return 1
    for warning in platform.warnings:
        print(warning_line(warning), file=sys.stderr)
    platform.synth()
    return 0


if __name__ == "__main__":
    show_project_warnings()  # `warning: <text>`, as the compiled rules' warnings above
    sys.exit(main(Project(Path(__file__).resolve().parent)))
