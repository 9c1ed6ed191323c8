"""The code bundle ships as written: no links out, no special files, within its size, no names that clash.

The scan (compiler/inputs/sourcedir.py) finds the problems; this rule reports them under the spec field that named
the files, with paths relative to the project.
"""

from __future__ import annotations

from pathlib import Path

from compiler.inputs.reader import Findings
from compiler.rules.registry import compiled_rule
from compiler.rules.views import CompiledView


@compiled_rule
def the_code_bundle_ships(view: CompiledView, f: Findings) -> None:
    code = view.workload.code
    if code is None or view.bundle is None:
        return
    fields = ["source_dir" if code.source_dir is not None else "entry_point"] + (["dependencies"]
                                                                                  if code.dependencies else [])
    prefix = f"{Path(view.project_root).absolute()}/"
    for problem in view.bundle.problems:
        f.problem("/".join(fields), problem.replace(prefix, ""))
