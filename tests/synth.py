"""One synthesis of the whole app (both environments, platform and workload stacks) for the test session.

Synthesizing costs seconds while reading templates is free, so the platform and state-machine tests share
this one app, built the way app.py builds it, instead of synthesizing the same stacks twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A framework-image repository some workload pulls from (app.py derives these from the workloads' images).
EXTRA_PULLED_REPOSITORY = "arn:aws:ecr:{region}:763104351884:repository/huggingface-pytorch-training"
# Stand-in for training/docker/Dockerfile: only the build context's shape matters at synth time, since the
# image is built at deploy.
FIXTURE_DOCKERFILE = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY gpt /opt/ml/code/gpt\n"


@dataclass
class App:
    """The synthesized cloud assembly, the live stages, the workload stacks and every template."""

    outdir: Path
    stages: dict[str, Any]
    workload_stacks: dict[str, list[Any]]
    templates: dict[str, dict[str, dict[str, Any]]]  # environment -> stack id -> template


def build_context(root: Path) -> Path:
    (root / "docker").mkdir(parents=True)
    (root / "docker" / "Dockerfile").write_text(FIXTURE_DOCKERFILE)
    (root / "gpt").mkdir()
    (root / "gpt" / "train.py").write_text("print('train')\n")
    return root


def synthesize(outdir: Path, context_root: Path) -> App:
    from stacks.platform import build_app
    from stacks.workloads import add_workload_stacks
    from compiler.environments import load_environments
    from compiler.spec import load_all_workloads

    workloads = load_all_workloads()
    app, stages = build_app(load_environments(), outdir=str(outdir),
                            pulled_repositories=lambda env: [EXTRA_PULLED_REPOSITORY.format(region=env.region)])
    workload_stacks = {name: add_workload_stacks(stage, stage.platform, workloads) for name, stage in stages.items()}
    app.synth()
    templates = {
        name: {stack.node.id: json.loads((outdir / f"assembly-{name}" / stack.template_file).read_text())
               for stack in stage.node.children if hasattr(stack, "template_file")}
        for name, stage in stages.items()
    }
    return App(outdir=outdir, stages=stages, workload_stacks=workload_stacks, templates=templates)
