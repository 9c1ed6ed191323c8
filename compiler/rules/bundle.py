"""The code bundle ships as written: no links out, no special files, within its size, no names that clash; and what
it leaves out because git does not track it is said.

The scan (compiler/inputs/sourcedir.py) finds the problems; these rules report them under the spec field that named
the files, with paths relative to the project.
"""

from __future__ import annotations

from pathlib import Path

from compiler.inputs.reader import Findings
from compiler.inputs.tracked import ignored
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


_LISTED = 8  # untracked paths named in the warning; the rest are counted


@compiled_rule
def what_the_bundle_leaves_out_is_said(view: CompiledView, f: Findings) -> None:
    """The bundle ships only what git tracks (what review saw): a file someone forgot to `git add` (a module, a
    requirements.txt) would vanish from the job without a word. Files .gitignore excludes are left out on purpose and
    only counted; an untracked entry point is already refused (`the_code_bundle_ships`)."""
    code = view.workload.code
    if code is None or view.bundle is None:
        return
    left_out = [p for p in view.bundle.untracked if p != code.entry_point_path]
    if not left_out:
        return
    root = Path(view.project_root).absolute()
    skipped = ignored(root, left_out)
    forgotten = [p for p in left_out if p not in skipped]
    if not forgotten:
        return
    named = ", ".join(_relative(p, root) + ("/" if p.is_dir() else "") for p in forgotten[:_LISTED])
    more = f" and {len(forgotten) - _LISTED} more" if len(forgotten) > _LISTED else ""
    also = f" (and {len(skipped)} that .gitignore excludes)" if skipped else ""
    field = "source_dir" if code.source_dir is not None else "dependencies"
    f.warn(field, f"the code bundle ships only the files git tracks, and leaves out {named}{more}{also}: `git add` "
           "what the job needs (or add the rest to .gitignore)")


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
