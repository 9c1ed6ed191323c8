"""Nothing synth refuses passes `trainctl validate`: a defect planted in a copy of the project stops validate with the
very message that stops synth, and what validate accepts, synth builds.

Two halves. The CDK layer refuses no input itself: stacks/ and platform_constructs/ cannot import the compiler's
errors, its spec readers or its rules (import-linter's `cdk-builds-from-the-plan` contract, pyproject.toml), and
build from the pipeline's plan, so every refusal comes from `compile_project`, the call validate makes. And every
setting of cdk.json, planted with a value it cannot take, gives the same verdict and message both ways (the settings
enumerated from what the compiler reads of cdk.json, so a new setting is planted as soon as it is read).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from compiler import state_machine as sm
from compiler.errors import SpecError
from compiler.facts import placeholders as ph
from compiler.inputs.project import Project
from compiler.pipeline import provided_names
from tests.project import ROOT, project_copy
from trainctl.cli import main

FINETUNE = "workloads/gpt-finetune-single.yaml"


def edit_spec(root: Path, path: str, change: Callable[[dict], None]) -> None:
    spec = yaml.safe_load((root / path).read_text())
    change(spec)
    (root / path).write_text(yaml.safe_dump(spec))


def edit_cdk_json(root: Path, change: Callable[[dict], None]) -> None:
    data = json.loads((root / "cdk.json").read_text())
    change(data["context"])
    (root / "cdk.json").write_text(json.dumps(data))


def _no_such_image(root: Path) -> None:
    edit_spec(root, FINETUNE, lambda s: s.__setitem__("image", {"repository": "no-such-image"}))


def _linked_file(root: Path) -> None:
    (root / "training" / "hostname").symlink_to("/etc/hostname")


def _linked_folder(root: Path) -> None:
    (root / "training" / "home").symlink_to(Path.home(), target_is_directory=True)


def _pipe(root: Path) -> None:
    os.mkfifo(root / "training" / "pipe")


def _too_big(root: Path) -> None:
    with open(root / "training" / "weights.bin", "wb") as handle:  # sparse: no disk used
        handle.truncate(300 * 2**20)


def _clashing_dependency(root: Path) -> None:
    (root / "extra").mkdir()
    (root / "extra" / "train.py").write_text("")
    edit_spec(root, FINETUNE, lambda s: s.__setitem__("dependencies", ["../extra/train.py"]))


def _fsx_without_file_system(root: Path) -> None:
    edit_cdk_json(root, lambda c: [e.pop("fsx") for e in c["training-platform:environments"].values()])


def _no_zone_lookup(root: Path) -> None:
    (root / "cdk.context.json").write_text("{}")


def _image_without_dockerfile(root: Path) -> None:
    (root / "training" / "Dockerfile").unlink()


def _build_context_too_long(root: Path) -> None:
    """A name the file system refuses with ENAMETOOLONG: 256 bytes, one past Linux's NAME_MAX."""
    edit_cdk_json(root, lambda c: c["training-platform:images"]["gpt-trainer"].__setitem__("build_context", "t" * 256))


def _untracked_dockerfile(root: Path) -> None:
    """A repository that tracks everything but the image's Dockerfile (the image is built from tracked files)."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("rm", "-q", "--cached", "training/Dockerfile")


# Each planted defect and a text its refusal must hold (the message itself is compared between validate and synth).
CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "image repository this project does not build": (
        _no_such_image, "workloads/gpt-finetune-single.yaml: image.repository: this project builds no image named "
                        "'no-such-image' (it builds: gpt-trainer; see training-platform:images in cdk.json)"),
    "symbolic link to a file in source_dir": (
        _linked_file, "source_dir: training/hostname is a symbolic link; the bundle holds plain files only"),
    "symbolic link to a folder in source_dir": (
        _linked_folder, "source_dir: training/home is a symbolic link; the bundle holds plain files only"),
    "a pipe in source_dir": (_pipe, "training/pipe is not a regular file (a device, socket or pipe); remove it"),
    "a bundle over the size limit": (_too_big, "the code bundle would be 300 MiB, over the 256 MiB limit for code"),
    "a dependency clashing with a file of source_dir": (
        _clashing_dependency, "source_dir/dependencies: train.py would be in the bundle twice"),
    "an FSx channel where the environment has no file system": (_fsx_without_file_system, "has no file system"),
    "a zone lookup missing from cdk.context.json": (_no_zone_lookup, "trainctl lookup-zones --env dev"),
    "an image build context without its Dockerfile": (
        _image_without_dockerfile, "training/Dockerfile is not a Dockerfile in this repository"),
    "an image build context the file system refuses": (
        _build_context_too_long, "build_context: is not a usable path: the name tttttttttttttttttttttttt... is 256 "
                                 "bytes long; a file system allows at most 255"),
    "an image whose Dockerfile git does not track": (
        _untracked_dockerfile, "training/Dockerfile is not tracked by git; the image is built from tracked files only"),
}

def _planted_settings() -> dict[str, Callable[[dict], None]]:
    """Each setting cdk.json may hold, set to a value of the wrong kind (an object where a value is expected, a word
    where an object is): the environments' keys and their file system's (dev has a file system), the DNS firewall's,
    the project image's."""
    from compiler.inputs import dns_firewall, environments, image_builds

    def env_key(key: str, value: object) -> Callable[[dict], None]:
        return lambda c: c["training-platform:environments"]["dev"].__setitem__(key, value)

    def fsx_key(key: str, value: object) -> Callable[[dict], None]:
        return lambda c: c["training-platform:environments"]["dev"]["fsx"].__setitem__(key, value)

    def image_key(key: str, value: object) -> Callable[[dict], None]:
        return lambda c: c["training-platform:images"]["gpt-trainer"].__setitem__(key, value)

    wrong: object = {"planted": True}
    objects = {"fsx", "training_plans", "datasets", "base_image"}
    cases: dict[str, Callable[[dict], None]] = {}
    for key in sorted(environments._KNOWN_KEYS):
        cases[f"environments.dev.{key}"] = env_key(key, "sometimes" if key in objects else wrong)
    for key in sorted(environments._FSX_KEYS):
        cases[f"environments.dev.fsx.{key}"] = fsx_key(key, "sometimes" if key in objects else wrong)
    for key in sorted(dns_firewall.KEYS):
        cases[f"dns-firewall.dev.{key}"] = (lambda k: lambda c: c.__setitem__(
            dns_firewall.CONTEXT_KEY, {"dev": {k: "sometimes"}}))(key)
    cases["dns-firewall.dev"] = lambda c: c.__setitem__(dns_firewall.CONTEXT_KEY, {"dev": "sometimes"})
    cases["dns-firewall.staging"] = lambda c: c.__setitem__(dns_firewall.CONTEXT_KEY, {"staging": {"mode": "off"}})
    for key in ("build_context", "dockerfile", "base_image"):
        cases[f"images.gpt-trainer.{key}"] = image_key(key, "sometimes" if key in objects else wrong)
    cases["images.gpt-trainer.unknown"] = image_key("unknown", 1)
    assert image_builds.IMAGES_KEY == "training-platform:images"
    return cases


SETTINGS = _planted_settings()


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_a_bad_value_of_any_cdk_json_setting_stops_validate_as_synth(setting: str, tmp_path: Path, capsys) -> None:
    from stacks.app import build_app

    root = project_copy(tmp_path)
    edit_cdk_json(root, SETTINGS[setting])
    code = main(["--project-dir", str(root), "validate"])
    out, err = capsys.readouterr()
    assert (code, out) == (1, ""), f"validate accepted {setting}: {out}"
    with pytest.raises(SpecError) as synth:
        build_app(Project(root), outdir=str(tmp_path / "out"), only=["dev"], builtin_validation=False)
    assert err == f"{synth.value}\n"
    assert not (tmp_path / "out").exists()  # synth stopped before any construct


@pytest.mark.parametrize("case", list(CASES))
def test_what_synth_refuses_validate_refuses_with_the_same_message(case: str, tmp_path: Path, capsys) -> None:
    from stacks.app import build_app

    plant, expected = CASES[case]
    root = project_copy(tmp_path)
    plant(root)
    with pytest.raises(SpecError) as synth:
        build_app(Project(root), outdir=str(tmp_path / "out"), builtin_validation=False)
    assert expected in str(synth.value)
    code = main(["--project-dir", str(root), "validate"])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err == f"{synth.value}\n"
    assert not (tmp_path / "out").exists()  # synth stopped before any construct


# Made by each workload's own constructs (platform_constructs/workload.py): its execution role, and its job security
# group (environment-wide, in PlatformResources.substitutions, until issue 23 makes one per workload).
PER_WORKLOAD = {ph.EXECUTION_ROLE_ARN, ph.TRAINING_SECURITY_GROUP_ID}


def test_validate_knows_every_value_the_stacks_provide() -> None:
    """The pipeline's list of deploy-time values each environment provides is the CDK layer's (stacks/platform.py,
    stacks/workloads.py), so a definition the stacks cannot fill stops validate too."""
    from stacks.app import build_app

    app = build_app(Project(ROOT), builtin_validation=False)
    for name, stage in app.stages.items():
        env = app.environments[name]
        cdk_side = set(stage.platform.substitutions()) | {sm.NOTIFICATION_TOPIC_ARN, ph.SOURCE_DIR_S3_URI,
                                                            ph.SOURCE_DIR_FILE_NAME} | PER_WORKLOAD
        assert provided_names(env, app.images, code=True) == cdk_side, name
