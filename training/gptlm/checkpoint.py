"""Checkpoint folders in the place SageMaker syncs to S3 (`/opt/ml/checkpoints`), and the final model files.

Each checkpoint is a `step_<N>` folder. On a multi-node job each node has its own `/opt/ml/checkpoints`,
all synced to one S3 prefix, and SageMaker downloads the whole prefix to every node on restart. So
completeness cannot be judged from one node's disk at save time; instead every rank drops a
`done.rank<R>.json` marker after its shard is written, naming its files and their sizes, and a checkpoint counts
as complete only when the writer's `.metadata` and the markers of all ranks that wrote it are present and every
file a marker names is there with that size. Interrupted saves (spot, capacity failures) and damaged ones (a file
lost or cut short on its way through S3) are skipped on resume, never loaded: the resume falls back to the
newest checkpoint that is whole, and says which it passed over.

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
METADATA_FILE = ".metadata"  # DCP's: written by the coordinator once every rank's shards are written
SHARD_SUFFIX = ".distcp"  # DCP's shard files, `__<rank>_<n>.distcp`
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
    passed_over: tuple[str, ...] = ()  # newer checkpoints that were not complete or intact, with the reason


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


def _written_by(path: Path, rank: int) -> dict[str, int]:
    """The files this rank's save left in `path` and their sizes: DCP names a rank's shard files `__<rank>_<n>.distcp`
    and the coordinator (rank 0) writes `.metadata`."""
    names = list(path.glob(f"__{rank}_*{SHARD_SUFFIX}"))
    if rank == 0:
        names.append(path / METADATA_FILE)
    return {p.name: p.stat().st_size for p in names if p.is_file()}


def write_marker(path: Path, meta: Mapping, step: int, rank: int, world_size: int) -> None:
    """This rank's `done.rank<R>.json`, written atomically after its part of the checkpoint is on disk; it names the
    files that part consists of, with their sizes, so a resume can check that they all arrived whole."""
    marker = {**meta, "step": step, "world_size": world_size, "files": _written_by(path, rank)}
    tmp = path / f"done.rank{rank}.json.tmp"
    tmp.write_text(json.dumps(marker, sort_keys=True))
    tmp.replace(path / f"done.rank{rank}.json")


def _read_marker(path: Path, rank: int) -> dict | None:
    try:
        marker = json.loads((path / f"done.rank{rank}.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return marker if isinstance(marker, dict) else None


def _broken_promise(path: Path, marker: Mapping) -> str | None:
    """What in `path` differs from the files `marker` promises (missing or another size), or None."""
    files = marker.get("files", {})
    if not isinstance(files, dict):
        return "a marker's file list is not a mapping"
    for name, size in files.items():
        target = path / str(name)
        if "/" in str(name) or not target.is_file():
            return f"{name} is missing"
        if target.stat().st_size != size:
            return f"{name} has {target.stat().st_size} bytes, its marker promises {size}"
    return None


def inspect(path: Path) -> tuple[dict | None, str]:
    """(the checkpoint's metadata, "") when the writer finished, every writing rank left its marker and every file
    a marker names is there with the size it promises; else (None, why not)."""
    if not (path / METADATA_FILE).is_file():
        return None, "no .metadata (the save did not finish)"
    first = _read_marker(path, 0)
    if first is None:
        return None, "no readable done.rank0.json (the save did not finish)"
    world = int(first.get("world_size", 0) or 0)
    if world < 1:
        return None, "done.rank0.json names no world size"
    for rank in range(world):
        marker = first if rank == 0 else _read_marker(path, rank)
        if marker is None:
            return None, f"no readable done.rank{rank}.json (rank {rank} did not finish its part)"
        broken = _broken_promise(path, marker)
        if broken is not None:
            return None, f"rank {rank}'s part is damaged: {broken}"
    return first, ""


def is_complete(path: Path) -> dict | None:
    """The checkpoint's metadata when it is complete and intact (`inspect`), else None."""
    return inspect(path)[0]


def find_latest(root: Path) -> Found | None:
    """Newest complete, intact checkpoint under `root`; the newer ones passed over (a save cut short, a damaged
    file) are listed in `Found.passed_over` with the reason, so a resume says what it fell back from."""
    if not root.is_dir():
        return None
    candidates = []
    for child in root.iterdir():
        match = _STEP_DIR.match(child.name)
        if match and child.is_dir():
            candidates.append((int(match.group(1)), child))
    passed_over: list[str] = []
    for step, path in sorted(candidates, reverse=True):
        meta, why = inspect(path)
        if meta is not None:
            return Found(path=path, step=step, meta=meta, passed_over=tuple(passed_over))
        passed_over.append(f"{path.name}: {why}")
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
