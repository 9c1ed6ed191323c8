"""The project image runs a training toolkit that does not pass the job's command line through a shell.

aws/sagemaker-training-toolkit#128: up to 5.1.2 the toolkit runs the command line through a shell, so a
hyperparameter value could carry a command; 5.1.3 fixed it. A DLC tag does not say which toolkit its image holds,
so training/Dockerfile installs a fixed one and fails the build if the result is older.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.version import Version

DOCKERFILE = Path(__file__).resolve().parents[2] / "training" / "Dockerfile"
FIXED_IN = Version("5.1.3")


def _instructions() -> list[str]:
    """The Dockerfile's instructions, continuation lines joined as Docker joins them, comments dropped."""
    lines = [line for line in DOCKERFILE.read_text().splitlines() if not line.lstrip().startswith("#")]
    return [i.strip() for i in re.sub(r"\\\n", "", "\n".join(lines)).splitlines() if i.strip()]


def test_the_image_installs_a_fixed_toolkit_after_its_base() -> None:
    instructions = _instructions()
    base = next(n for n, i in enumerate(instructions) if i.startswith("FROM "))
    pinned = [re.fullmatch(r"ARG TRAINING_TOOLKIT_VERSION=(\S+)", i) for i in instructions]
    versions = [m.group(1) for m in pinned if m]
    assert len(versions) == 1 and Version(versions[0]) >= FIXED_IN
    installs = [n for n, i in enumerate(instructions)
                if i.startswith("RUN ") and '"sagemaker-training==${TRAINING_TOOLKIT_VERSION}"' in i]
    assert len(installs) == 1 and installs[0] > base, "the toolkit must be installed on top of the base image"


def test_the_build_fails_when_the_installed_toolkit_is_older() -> None:
    install = next(i for i in _instructions() if "sagemaker-training==" in i)
    check = re.search(r'python -c "(.+)"$', install)
    assert check is not None
    code = check.group(1)
    for version, ok in (("5.1.2", False), ("5.1.3", True), ("5.1.4", True), ("6.0", True)):
        namespace = {"__name__": "check"}
        source = code.replace("m.version('sagemaker-training')", repr(version))
        try:
            exec(compile(source, "<dockerfile>", "exec"), namespace)
        except AssertionError:
            assert not ok, version
        else:
            assert ok, version


def test_the_image_leaves_the_jobs_code_and_program_to_the_job() -> None:
    """The toolkit unpacks a job's code only into an empty /opt/ml/code (sagemaker_training.files.
    download_and_extract: `if not os.listdir(path)`), and SAGEMAKER_PROGRAM from the environment wins over the
    job's sagemaker_program hyperparameter (sagemaker_training.environment.Environment.__init__)."""
    instructions = _instructions()
    assert not [i for i in instructions if i.startswith(("COPY", "ADD")) and "/opt/ml/code" in i]
    assert not [i for i in instructions if i.startswith("ENV") and re.search(r"\bSAGEMAKER_(PROGRAM|SUBMIT_DIRECTORY)=", i)]
