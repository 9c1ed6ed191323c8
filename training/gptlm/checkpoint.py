"""Sharded, resumable checkpoints in the folder SageMaker syncs to S3 (`/opt/ml/checkpoints`).

Each checkpoint is a `step_<N>` folder written with torch.distributed.checkpoint (DCP): every rank
writes only its own shard, in parallel, and a later run may load it with a different world size.
On a multi-node job each node has its own `/opt/ml/checkpoints`, all synced to one S3 prefix, and
SageMaker downloads the whole prefix to every node on restart. So completeness cannot be judged from
one node's disk at save time; instead every rank drops a `done.rank<R>.json` marker after DCP returns,
and a checkpoint counts as complete only when DCP's `.metadata` and the markers of all ranks that wrote
it are present. Interrupted saves (spot, capacity failures) are skipped on resume, never loaded.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_state_dict,
    set_state_dict,
)

from gptlm.errors import UserError

_dcp_save = getattr(dcp, "save", None) or dcp.save_state_dict  # `save`/`load` replaced the *_state_dict names
_dcp_load = getattr(dcp, "load", None) or dcp.load_state_dict
_STEP_DIR = re.compile(r"^step_(\d+)$")
FINAL_MODEL_FILE = "model.pt"


class CheckpointError(UserError, RuntimeError):
    """A checkpoint that cannot be resumed from by this run; the message says what to change."""


@dataclass(frozen=True)
class Found:
    path: Path
    step: int
    meta: dict


def _barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def step_dir(root: Path, step: int) -> Path:
    return root / f"step_{step:09d}"


def is_complete(path: Path) -> dict | None:
    """The checkpoint's metadata when DCP finished and every writing rank left its marker, else None."""
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


def save(root: Path, step: int, model: torch.nn.Module, optimizer: torch.optim.Optimizer, meta: dict,
         rank: int, world_size: int) -> Path:
    """Collective: every rank calls it at the same step. Returns the checkpoint folder."""
    path = step_dir(root, step)
    path.mkdir(parents=True, exist_ok=True)
    model_sd, optim_sd = get_state_dict(model, optimizer)
    # Explicit FileSystemWriter/Reader: the same call works from PyTorch 2.2 (the SMDDP containers) onwards.
    _dcp_save({"model": model_sd, "optim": optim_sd}, storage_writer=dcp.FileSystemWriter(str(path)))
    marker = {**meta, "step": step, "world_size": world_size}
    tmp = path / f"done.rank{rank}.json.tmp"
    tmp.write_text(json.dumps(marker, sort_keys=True))
    tmp.replace(path / f"done.rank{rank}.json")
    _barrier()
    return path


def load(found: Found, model: torch.nn.Module, optimizer: torch.optim.Optimizer, meta: dict) -> None:
    """Collective: restore model and optimizer state in place, after checking the run's shape matches."""
    for key in ("model", "seq_len", "vocab_size"):  # DDP <-> FSDP and world-size changes reshard fine
        if key in found.meta and key in meta and found.meta[key] != meta[key]:
            raise CheckpointError(
                f"checkpoint {found.path} was written with {key}={found.meta[key]!r} but this run has "
                f"{key}={meta[key]!r}; set {key} back, or point checkpoint_dir (or the job's checkpoint S3 URI) "
                "at an empty location to start fresh"
            )
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {"model": model_sd, "optim": optim_sd}
    _dcp_load(state, storage_reader=dcp.FileSystemReader(str(found.path)))
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])


def prune(root: Path, keep: int) -> list[Path]:
    """Delete all but the newest `keep` complete checkpoints, and incomplete ones older than those.

    Run by local rank 0 of each node (each node has its own copy of the folder), after a save's barrier.
    """
    complete, incomplete = [], []
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


def export_model(model: torch.nn.Module, directory: Path, config: dict, is_main: bool) -> Path | None:
    """Collective: gather the full (unsharded) weights to rank 0 and write them with the model's config."""
    state = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if not is_main:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / FINAL_MODEL_FILE
    torch.save(state, target)
    (directory / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True))
    return target
