"""How synth scales with the number of workloads: 0 (platform only), 10, 100 and 1,000 in one environment.

Each size runs in a fresh subprocess (a fresh jsii/Node kernel) that writes a temporary project (this project's
cdk.json, cached lookups and training code, and that many workload specs: copies of the shipped ones under new
names, each added to the readers of the datasets its template reads in cdk.json, as `datasets` requires),
synthesizes its `dev` stage with `stacks.app.build_app` (what `cdk synth` runs) and reports:

- wall time of the whole synth process (Python start, imports, compile, synth, cdk-nag);
- peak memory: the peak RSS of the Python process plus the peak RSS of each Node (jsii) descendant;
- stacks, resources per stack (max) and the largest template, against CloudFormation's 500 / 1 MB limits.

Usage: `.venv/bin/python bench/synth_scale.py [--sizes 0,10,100,1000]`
From 500 workloads the generated project raises `workload_shards` (cdk.json) to 256 in every environment (synth checks
them all), as `validate` asks at 64.
Framework images are resolved from the SDK's data files without importing it, so the lookups are included.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compiler.inputs.environments import CONTEXT_KEY, DEFAULT_WORKLOAD_SHARDS  # noqa: E402
from compiler.inputs.grants import DATASETS_DIRECTORY  # noqa: E402


def _peak_kib(pid: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(pid: str = "self") -> list[str]:
    """Every process below this one (the jsii runtime starts Node, which starts the kernel in another Node)."""
    found: list[str] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child_pid in children:
            found += [child_pid, *_descendants(child_pid)]
    return found


def dataset_reads(raw: object) -> set[str]:
    """The datasets a spec's channels read (`datasets/<name>/...` of the data bucket, `/datasets/<name>...` on FSx, in
    the base or an environment)."""
    if isinstance(raw, str):
        return {raw.lstrip("/").split("/")[1]} if raw.lstrip("/").startswith(f"{DATASETS_DIRECTORY}/") else set()
    if isinstance(raw, dict):
        return set().union(*(dataset_reads(v) for v in raw.values()))
    if isinstance(raw, list):
        return set().union(*(dataset_reads(v) for v in raw))
    return set()


def generate(count: int, target: Path) -> dict[str, list[str]]:
    """`count` specs named w0000-<template>..., cycling through the shipped workloads; returns, per dataset, the
    generated workloads that read it (cdk.json must name them among its readers, as it names the shipped ones)."""
    import yaml

    templates = sorted((ROOT / "workloads").glob("*.yaml"))
    readers: dict[str, list[str]] = {}
    for i in range(count):
        source = templates[i % len(templates)]
        raw = yaml.safe_load(source.read_text())
        raw["name"] = f"w{i:04d}-{raw['name']}"[:40].rstrip("-")
        (target / f"{raw['name']}.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
        for dataset in dataset_reads(raw):
            readers.setdefault(dataset, []).append(raw["name"])
    return readers


def shards_for(count: int) -> int:
    """The `workload_shards` setting a platform team would choose: the default, and 4x it from 500 workloads."""
    return DEFAULT_WORKLOAD_SHARDS if count < 500 else 4 * DEFAULT_WORKLOAD_SHARDS


def project(count: int, root: Path) -> Path:
    """A project with this one's settings, lookups and training code, and `count` generated workloads."""
    root.mkdir()
    shutil.copy(ROOT / "cdk.context.json", root / "cdk.context.json")
    shutil.copytree(ROOT / "training", root / "training", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "workloads").mkdir()
    readers = generate(count, root / "workloads")
    settings = json.loads((ROOT / "cdk.json").read_text())
    environments = settings["context"][CONTEXT_KEY]
    for env in environments.values():  # synth checks every environment, though it synthesizes dev only
        env["workload_shards"] = shards_for(count)
        # each copy reads the datasets its template reads, as a declared reader
        declared = env.get("datasets", {})
        for dataset, names in readers.items():
            if dataset in declared:
                declared[dataset]["readers"] = [*declared[dataset].get("readers", []), *names]
    (root / "cdk.json").write_text(json.dumps(settings, indent=2))
    return root


def child(count: int) -> None:
    """Synthesize dev with `count` generated workloads and print one JSON line of measurements."""
    from compiler.inputs.project import Project
    from stacks.app import build_app

    with tempfile.TemporaryDirectory() as tmp:
        outdir = Path(tmp, "cdk.out")
        build_app(Project(project(count, Path(tmp, "project"))), outdir=str(outdir), only=["dev"]).synth()
        peak = _peak_kib("self") + sum(_peak_kib(pid) for pid in _descendants())
        stacks = []
        for template in sorted((outdir / "assembly-dev").glob("*.template.json")):
            body = json.loads(template.read_text())
            stacks.append({"stack": template.name.removesuffix(".template.json"),
                           "resources": len(body.get("Resources", {})), "bytes": template.stat().st_size})
        print(json.dumps({"workloads": count, "peak_rss_mib": round(peak / 1024), "stacks": stacks}))


def measure(count: int) -> dict:
    env = dict(os.environ, SAGEMAKER_SUPPRESS_V2_WARNING="1", JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--child", str(count)],
                          capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"synth of {count} workloads failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = round(wall, 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0,10,100,1000")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    print("| Workloads | workload_shards | Wall s | Peak RSS MiB (Python + Node) | Stacks | Max resources/stack "
          "| Largest template KiB |")
    print("|---|---|---|---|---|---|---|")
    for count in (int(s) for s in args.sizes.split(",")):
        r = measure(count)
        workload_stacks = [s for s in r["stacks"] if "Workloads" in s["stack"]]
        largest = max(r["stacks"], key=lambda s: s["bytes"])
        print(f"| {count} | {shards_for(count)} | {r['wall_s']} | {r['peak_rss_mib']} | {len(r['stacks'])} "
              f"({len(workload_stacks)} workload shards) | {max(s['resources'] for s in r['stacks'])} "
              f"| {largest['bytes'] / 1024:.0f} ({largest['stack']}) |", flush=True)


if __name__ == "__main__":
    main()
