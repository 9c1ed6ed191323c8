"""One spec mapping into a checked `Workload`, or a SpecError listing every problem with its field and fix.

The reading is `compiler.inputs.spec.workload`'s; here the rules (`compiler.rules`) check how the parts go together.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler import rules
from compiler.errors import Problem, SpecError
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.inputs.spec.workload import read_workload


def parse_workload(raw: Any, *, source: str, spec_dir: Path, project_root: Path) -> Workload:
    """Check one spec mapping (without its `environments` block) and return its Workload, or raise SpecError."""
    findings = Findings(source)
    if not isinstance(raw, Mapping):
        raise SpecError(Problem(source, "", "a workload spec is a YAML mapping of estimator arguments"))
    workload = read_workload(raw, findings, source=source, spec_dir=spec_dir, project_root=project_root)
    if workload is None:
        raise SpecError(findings.problems)
    rules.check_workload(workload, findings)
    if findings.problems:
        raise SpecError(findings.problems)
    return _with_warnings(workload, findings)


def _with_warnings(workload: Workload, findings: Findings) -> Workload:
    if not findings.warnings:
        return workload
    return dataclasses.replace(workload, warnings=tuple(str(w) for w in findings.warnings))
