"""Nothing synth refuses for a spec passes `trainctl validate`: every refusal of the CDK layer, planted in a copy
of the project, stops validate with the very message that stops synth.

The list of refusals is read from the CDK layer's source (every function of stacks/ and platform_constructs/ that
raises SpecError or adds a construct validation), so a new one fails `test_every_cdk_refusal_is_enumerated` until
it is listed here with the case that proves validate raises it too.
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from compiler import state_machine as sm
from compiler.errors import SpecError
from compiler.facts import placeholders as ph
from compiler.inputs.project import Project
from compiler.pipeline import provided_names
from compiler.spec import load_spec_workload
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
}

# Every function of the CDK layer that refuses input, and what covers it. stacks/app.py refuses through the pipeline
# (compiler.pipeline.compile_project), the same call validate makes: every case of CASES goes through it.
CDK_REFUSALS = {
    "platform_constructs/source_bundle.py:write_bundle": "the bundle cases of CASES (and test_bundle_refusals_are_"
                                                         "the_cdk_layers)",
    "stacks/workloads.py:WorkloadsStack._check_substitutions": "test_validate_knows_every_value_the_stacks_provide "
                                                               "and the FSx case",
    "stacks/workloads.py:WorkloadsStack.__init__": "shard size: tests/compiler/state_machine/test_stack_layout.py runs validate "
                                                   "and synth on the same crowded project",
    "stacks/workloads.py:source_file_name": "not a spec: the stack synthesizer (a deploy-time asset key)",
    "stacks/workloads.py:WorkloadsStack.__init__/add_validation": "resource count per shard (_SizeGuard): counted on "
                                                                  "the constructs at synth, set by workload_shards",
}


def cdk_refusals() -> set[str]:
    """`file:function` of each `raise SpecError` and each `add_validation` of a class of its own in the CDK layer."""
    found: set[str] = set()
    for folder in ("stacks", "platform_constructs"):
        for path in sorted((ROOT / folder).glob("*.py")):
            tree = ast.parse(path.read_text())
            for scope, node in _walk(tree):
                if isinstance(node, ast.Raise) and "SpecError" in ast.unparse(node):
                    found.add(f"{folder}/{path.name}:{scope}")
                if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("node.add_validation") \
                        and folder == "stacks":
                    found.add(f"{folder}/{path.name}:{scope}/add_validation")
    return found


def _walk(tree: ast.AST, scope: str = "") -> list[tuple[str, ast.AST]]:
    out: list[tuple[str, ast.AST]] = []
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.FunctionDef | ast.ClassDef):
            out += _walk(child, f"{scope}.{child.name}" if scope else child.name)
        else:
            out.append((scope, child))
            out += [(scope, n) for n in ast.walk(child) if n is not child
                    and not isinstance(n, ast.FunctionDef | ast.ClassDef)]
    return out


def test_every_cdk_refusal_is_enumerated() -> None:
    assert cdk_refusals() == set(CDK_REFUSALS)


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


def test_bundle_refusals_are_the_cdk_layers(tmp_path: Path) -> None:
    """The CDK layer's own bundle check refuses the same files (so the pipeline checks what synth would)."""
    from platform_constructs.source_bundle import write_bundle

    root = project_copy(tmp_path)
    _linked_file(root)
    code = load_spec_workload(Project(root), str(root / FINETUNE)).code
    assert code is not None
    with pytest.raises(SpecError, match="hostname is a symbolic link; the bundle holds plain files only"):
        write_bundle(code, root, tmp_path / "build")


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
