"""`run-local` for XGBoost and scikit-learn scripts, and why a built-in algorithm cannot run here.

SageMaker's XGBoost and scikit-learn containers start the entry point as one Python process per instance, with the
hyperparameters as `--name value` arguments (the training toolkit's contract, which `run-local` already gives). Here it
runs the same way, with this Python: one host (SM_HOSTS holds one name, so a script that joins hosts, such as
training/xgboost/train.py, trains alone), on CPU. The framework itself must be installed in this Python; the message
names the release of the job's image (`framework_version` 1.7-1 is XGBoost 1.7, 1.2-1 scikit-learn 1.2). A built-in
algorithm ships no code: its program exists only in its SageMaker image.
"""

from __future__ import annotations

import importlib.util
import sys

from compiler.inputs.model import SCRIPT_MODE_TABULAR, AlgorithmImage, Workload
from trainctl.local.contract import LocalRunError

# framework (SCRIPT_MODE_TABULAR) -> (the module a script imports, the package that installs it)
PACKAGES = {"xgboost": ("xgboost", "xgboost"), "sklearn": ("sklearn", "scikit-learn")}


def runs_as_script(workload: Workload) -> bool:
    """Whether the workload's entry point runs as a plain Python process (XGBoost and scikit-learn script mode)."""
    return workload.framework in SCRIPT_MODE_TABULAR


def release_of(framework_version: str | None) -> str | None:
    """The framework release of a SageMaker image version: 1.7-1 -> 1.7, 0.20.0 -> 0.20."""
    if not framework_version:
        return None
    numbers = framework_version.split("-", 1)[0].split(".")
    return ".".join(numbers[:2]) if all(n.isdigit() for n in numbers) else None


def check_installed(workload: Workload) -> None:
    """The framework's package importable in this Python, or a LocalRunError naming the pip command."""
    module, package = PACKAGES[workload.framework]
    if importlib.util.find_spec(module) is not None:
        return
    release = release_of(workload.estimator.framework_version)
    pin = f"'{package}~={release}.0'" if release else package
    raise LocalRunError(f"{workload.framework} script mode runs the entry point with this Python ({sys.executable}), "
                        f"which has no {module} module; install the release the job's image has, e.g. "
                        f"pip install {pin}, and run again")


def python_command(program: str, cli_args: list[str]) -> list[str]:
    """One process, as SageMaker starts one per instance: `python <entry point> --name value ...`."""
    return [sys.executable, program, *cli_args]


def refuse_algorithm(workload: Workload) -> None:
    """A built-in algorithm's program lives in its image only: nothing of it can run here."""
    if isinstance(workload.image, AlgorithmImage):
        raise LocalRunError(f"{workload.name} runs SageMaker's built-in {workload.image.algorithm} algorithm, whose "
                            "program exists only in its SageMaker image (the job ships no code): there is nothing to run "
                            "here; try it on a small dataset in a dev environment (trainctl start "
                            f"{workload.name} --env dev --follow)")
