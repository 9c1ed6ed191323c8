"""One synthesized app for the whole session: synthesizing costs seconds, reading its templates is free."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Stand-in for training/docker/Dockerfile (written by the training-code engineer): only the build context's
# shape matters at synth time, since the image is built at deploy.
# A framework-image repository some workload pulls from (app.py derives these from the workloads' images).
EXTRA_PULLED_REPOSITORY = "arn:aws:ecr:{region}:763104351884:repository/huggingface-pytorch-training"
FIXTURE_DOCKERFILE = 'ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY gpt /opt/ml/code/gpt\n'


@dataclass
class Synth:
    """Templates of every platform stack, by environment and stack id, plus the live construct objects."""

    outdir: Path
    stages: dict[str, Any]
    templates: dict[str, dict[str, dict[str, Any]]]

    def template(self, env: str, stack: str) -> dict[str, Any]:
        return self.templates[env][stack]

    def resources(self, env: str, stack: str, kind: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.template(env, stack)["Resources"].items() if v["Type"] == kind}


def build_context(root: Path) -> Path:
    (root / "docker").mkdir(parents=True)
    (root / "docker" / "Dockerfile").write_text(FIXTURE_DOCKERFILE)
    (root / "gpt").mkdir()
    (root / "gpt" / "train.py").write_text("print('train')\n")
    return root


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    from stacks.platform import build_app
    from training.core.environments import load_environments

    outdir = tmp_path_factory.mktemp("cdk.out")
    context = build_context(tmp_path_factory.mktemp("training"))
    app, stages = build_app(load_environments(), build_context=context, outdir=str(outdir),
                            pulled_repositories=lambda env: [EXTRA_PULLED_REPOSITORY.format(region=env.region)])
    app.synth()
    templates: dict[str, dict[str, dict[str, Any]]] = {}
    for name, stage in stages.items():
        templates[name] = {}
        for stack in (stage.network_stack, stage.storage_stack, stage.registry_stack, stage.access_stack):
            path = outdir / f"assembly-{name}" / stack.template_file
            templates[name][stack.node.id] = json.loads(path.read_text())
    return Synth(outdir=outdir, stages=stages, templates=templates)
