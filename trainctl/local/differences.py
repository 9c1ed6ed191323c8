"""What run-local needs before it starts, and where this machine's Python differs from the job's container.

run-local launches the entry point with torchrun (PyTorch's) and prepares the default data with numpy: without them
it stops first, with the command that installs them (XGBoost and scikit-learn scripts run as one plain Python process
and need their own framework only: trainctl/local/script_mode.py). The job's container pip-installs the bundle's requirements.txt
and runs the framework its image is named by; this machine runs whatever is installed here. Each difference is a note,
so a run that passes here is not mistaken for proof that the job's environment is the same.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from compiler.facts.image_packages import FRAMEWORK_PACKAGE
from compiler.inputs.model import ProjectImage, Workload
from compiler.inputs.project import Project
from compiler.inputs.requirements import FILE_NAME, read_requirements
from compiler.inputs.sourcedir import Scan
from compiler.pipeline import project_images
from compiler.rules.requirements import ImageContents, image_contents, judge
from trainctl.local.contract import LocalRunError

# What run-local itself imports: torchrun to launch (torch.distributed.run), numpy for the default data's shards.
OWN_MODULES = {"torch": "torchrun, which launches the entry point", "numpy": "the shards of the default data"}


def install_command(project: Project) -> str:
    """The packages the trainer imports, at the versions this repository's tests pin (a CPU build of PyTorch)."""
    constraints = " -c constraints.txt" if (project.root / "constraints.txt").is_file() else ""
    return f"{sys.executable} -m pip install{constraints} -r training/requirements.txt"


def check_own_dependencies(project: Project) -> None:
    """Stop before anything is prepared when this Python lacks what run-local imports, naming how to install it."""
    missing = [name for name in OWN_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        needs = "; ".join(f"{name} for {OWN_MODULES[name]}" for name in missing)
        raise LocalRunError(f"run-local needs {' and '.join(missing)} in this Python ({sys.executable}): {needs}. "
                            f"Install them from the repository root with `{install_command(project)}` (scripts/"
                            "synth.sh installs only what synth needs; scripts/test.sh installs them too)")


def _installed() -> ImageContents:
    versions: dict[str, str | None] = {canonicalize_name(d.metadata["Name"]): d.version
                                       for d in importlib.metadata.distributions() if d.metadata["Name"]}
    return ImageContents("this Python", versions, True, f"{sys.version_info.major}.{sys.version_info.minor}")


def _release(version: str | None) -> tuple[int, ...] | None:
    try:
        return Version(version).release if version else None
    except InvalidVersion:
        return None


def environment_notes(workload: Workload, project: Project, scan: Scan) -> list[str]:
    """Where the job's container and this Python differ: the bundle's requirements, the framework's version."""
    notes = []
    found = read_requirements(scan)
    here = _installed()
    if found is not None:
        unmet = judge(found, here).downloads
        if unmet:
            source = workload.code.source_dir if workload.code is not None else None
            path = (source / FILE_NAME) if source is not None else Path(FILE_NAME)
            shown = path.relative_to(project.root).as_posix() if path.is_relative_to(project.root) else str(path)
            notes.append(f"the job pip-installs {shown} when it starts; this Python lacks "
                         f"{', '.join(line.text for line in unmet)} (or has another version): run "
                         f"`{sys.executable} -m pip install -r {shown}` to run as the job would")
    builds = project_images(project, project.environments()) if isinstance(workload.image, ProjectImage) else {}
    image = image_contents(workload, builds)
    for name in FRAMEWORK_PACKAGE.values():  # the distribution each framework image is named for
        theirs, ours = image.versions.get(name), here.versions.get(name)
        if theirs and ours and _release(theirs) != _release(ours):
            notes.append(f"the job runs {name} {theirs} ({image.what}); this Python has {name} {ours}: what changed "
                         "between them can change the run")
    return notes
