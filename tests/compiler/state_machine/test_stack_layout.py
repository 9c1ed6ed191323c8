"""Workload stacks stay inside CloudFormation's template limit: the size estimate is safe, and a shard that would
be too large stops `validate` and synth alike, naming `workload_shards` in cdk.json."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from compiler.errors import SpecError
from compiler.inputs.environments import CONTEXT_KEY
from compiler.inputs.project import Project
from tests.project import ROOT

pytestmark = pytest.mark.synth
COPIES = 30  # of the shipped single-node spec, about 50 KB each: over 800 KB in one shard


def test_the_estimate_covers_every_workload_stack_as_written(synthesized_app) -> None:
    """The estimate is what `validate` refuses on, so it must not be below the template file CloudFormation gets."""
    for env, group in synthesized_app.platform.workload_stacks.items():
        for shard in group.shards:
            written = (synthesized_app.outdir / f"assembly-{env}" / shard.template_file).stat().st_size
            assert written <= shard.template_bytes <= 1.5 * written, (env, shard.node.id)


def project_with_one_shard(root: Path, shards: int) -> Project:
    """This project's settings and code, `COPIES` workloads, and dev's workload_shards set to `shards`."""
    root.mkdir()
    shutil.copy(ROOT / "cdk.context.json", root / "cdk.context.json")
    settings = json.loads((ROOT / "cdk.json").read_text())
    environments = settings["context"][CONTEXT_KEY]
    settings["context"][CONTEXT_KEY] = {"dev": environments["dev"] | {"workload_shards": shards}}
    # each copy reads the dataset the spec reads, as a declared reader (cdk.json dev.datasets.<name>.readers)
    environments["dev"]["datasets"]["gpt-tokens"]["readers"] += [f"w{i:02d}" for i in range(COPIES)]
    (root / "cdk.json").write_text(json.dumps(settings))
    shutil.copytree(ROOT / "training", root / "training", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "workloads").mkdir()
    spec = yaml.safe_load((ROOT / "workloads" / "gpt-finetune-single.yaml").read_text())
    spec.pop("environments", None)
    for i in range(COPIES):
        (root / "workloads" / f"w{i:02d}.yaml").write_text(yaml.safe_dump(spec | {"name": f"w{i:02d}"}))
    return Project(root)


def validate(project: Project) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trainctl", "--project-dir", str(project.root), "validate"],
                          capture_output=True, text=True, timeout=120, cwd=project.root)


def test_a_shard_over_the_template_limit_stops_validate_and_synth_naming_the_setting(tmp_path: Path) -> None:
    from stacks.app import build_app

    crowded = project_with_one_shard(tmp_path / "one", shards=1)
    result = validate(crowded)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"cdk.json: dev.workload_shards: dev/Workloads00 would hold {COPIES} workloads" in result.stderr
    assert "raise workload_shards above 1" in result.stderr
    with pytest.raises(SpecError) as refused:
        build_app(crowded, outdir=str(tmp_path / "out"), builtin_validation=False)
    assert f"dev.workload_shards: dev/Workloads00 would hold {COPIES} workloads" in str(refused.value)

    spread = validate(project_with_one_shard(tmp_path / "spread", shards=8))
    assert spread.returncode == 0, spread.stderr


@pytest.mark.parametrize("value", [0, 1001, "64", 2.5])
def test_workload_shards_out_of_range_is_refused(value) -> None:
    from compiler.inputs.environments import parse_environments

    settings = json.loads((ROOT / "cdk.json").read_text())["context"][CONTEXT_KEY]["dev"]
    with pytest.raises(SpecError, match=r"dev\.workload_shards: must be (a whole number )?from 1 to 1000"):
        parse_environments({"dev": settings | {"workload_shards": value}})
