"""Checkpoint folders in the place SageMaker syncs to S3 (`/opt/ml/checkpoints`), and the final model files.

Each checkpoint is a `step_<N>` folder. On a multi-node job each node has its own `/opt/ml/checkpoints`,
all synced to one S3 prefix, and SageMaker downloads the whole prefix to every node on restart. So
completeness cannot be judged from one node's disk at save time; instead every rank drops a
`done.rank<R>.json` marker after its shard is written, and a checkpoint counts as complete only when the
writer's `.metadata` and the markers of all ranks that wrote it are present. Interrupted saves (spot,
capacity failures) are skipped on resume, never loaded.

This module only handles folders, markers and plain files: the sharded writes themselves live in
`gptlm.dcp`, because SMP v1 containers (PyTorch 2.0) lack the distributed-checkpoint APIs and must be able
to import everything the SMP v1 backend uses.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from gptlm.errors import UserError

_STEP_DIR = re.compile(r"^step_(\d+)$")
FINAL_MODEL_FILE = "model.pt"
CONFIG_FILE = "config.json"
# Run settings a checkpoint cannot be resumed across; DDP <-> FSDP and world-size changes reshard fine.
SHAPE_KEYS = ("model", "seq_len", "vocab_size")


class CheckpointError(UserError, RuntimeError):
    """A checkpoint that cannot be resumed from by this run; the message says what to change."""


@dataclass(frozen=True)
class Found:
    path: Path
    step: int
    meta: dict


@dataclass(frozen=True)
class Saved:
    """A checkpoint whose write finished and which is marked complete: how long training waited for it (staging,
    and the previous write if it was still running) and how long it was written in the background after that."""

    step: int
    path: Path
    blocking_seconds: float
    background_seconds: float


def step_dir(root: Path, step: int) -> Path:
    return root / f"step_{step:09d}"


def write_marker(path: Path, meta: Mapping, step: int, rank: int, world_size: int) -> None:
    """This rank's `done.rank<R>.json`, written atomically after its part of the checkpoint is on disk."""
    marker = {**meta, "step": step, "world_size": world_size}
    tmp = path / f"done.rank{rank}.json.tmp"
    tmp.write_text(json.dumps(marker, sort_keys=True))
    tmp.replace(path / f"done.rank{rank}.json")


def is_complete(path: Path) -> dict | None:
    """The checkpoint's metadata when the writer finished and every writing rank left its marker, else None."""
    first = path / "done.rank0.json"
    if not (path / ".metadata").is_file() or not first.is_file():
        return None
    try:
        meta = json.loads(first.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    world = int(meta.get("world_size", 0))
    if world < 1 or not all((path / f"done.rank{r}.json").is_file() for r in range(world)):
        return None
    return meta


def find_latest(root: Path) -> Found | None:
    """Newest complete checkpoint under `root`; incomplete ones (a save cut short) are passed over."""
    if not root.is_dir():
        return None
    candidates = []
    for child in root.iterdir():
        match = _STEP_DIR.match(child.name)
        if match and child.is_dir():
            candidates.append((int(match.group(1)), child))
    for step, path in sorted(candidates, reverse=True):
        meta = is_complete(path)
        if meta is not None:
            return Found(path=path, step=step, meta=meta)
    return None


def check_compatible(found: Found, meta: Mapping) -> None:
    """Refuse, with the fix, to resume a checkpoint of another model shape (it would fail deep in a load)."""
    for key in SHAPE_KEYS:
        if key in found.meta and key in meta and found.meta[key] != meta[key]:
            raise CheckpointError(
                f"checkpoint {found.path} was written with {key}={found.meta[key]!r} but this run has "
                f"{key}={meta[key]!r}; set {key} back, or point checkpoint_dir (or the job's checkpoint S3 URI) "
                "at an empty location to start fresh"
            )


def prune(root: Path, keep: int) -> list[Path]:
    """Delete all but the newest `keep` complete checkpoints, and incomplete ones older than those.

    Run by local rank 0 of each node (each node has its own copy of the folder), after a save's barrier.
    """
    complete: list[tuple[int, Path]] = []
    incomplete: list[tuple[int, Path]] = []
    for child in sorted(root.iterdir()) if root.is_dir() else []:
        match = _STEP_DIR.match(child.name)
        if match and child.is_dir():
            (complete if is_complete(child) is not None else incomplete).append((int(match.group(1)), child))
    complete.sort()
    doomed = [p for _, p in complete[:-keep]] if len(complete) > keep else []
    if complete:
        oldest_kept = complete[-keep:][0][0]
        doomed += [p for s, p in incomplete if s < oldest_kept]
    for path in doomed:
        shutil.rmtree(path, ignore_errors=True)
    return doomed


def write_model(state: Mapping[str, Any], directory: Path, config: Mapping) -> Path:
    """The final model as SM_MODEL_DIR expects it: full weights (`model.pt`) beside the run's `config.json`."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / FINAL_MODEL_FILE
    torch.save(dict(state), target)
    (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2, sort_keys=True))
    return target
