"""Sharded checkpoints with torch.distributed.checkpoint (DCP), for the native and SMP v2 backends.

Every rank writes only its own shard, in parallel, and a later run may load it with a different world
size or switch between DDP and FSDP (DCP reshards). Folder layout, completeness markers and pruning are
`gptlm.checkpoint`'s; this module needs PyTorch >= 2.2 and is never imported on the SMP v1 path.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dist_cp
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_state_dict,
    set_state_dict,
)

from gptlm import checkpoint

_save = getattr(dist_cp, "save", None) or dist_cp.save_state_dict  # `save`/`load` replaced the *_state_dict names
_load = getattr(dist_cp, "load", None) or dist_cp.load_state_dict


def _barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def save(root: Path, step: int, model: torch.nn.Module, optimizer: torch.optim.Optimizer, meta: Mapping,
         rank: int, world_size: int) -> Path:
    """Collective: every rank calls it at the same step. Returns the checkpoint folder."""
    path = checkpoint.step_dir(root, step)
    path.mkdir(parents=True, exist_ok=True)
    model_sd, optim_sd = get_state_dict(model, optimizer)
    # Explicit FileSystemWriter/Reader: the same call works from PyTorch 2.2 (the SMDDP containers) onwards.
    _save({"model": model_sd, "optim": optim_sd}, storage_writer=dist_cp.FileSystemWriter(str(path)))
    checkpoint.write_marker(path, meta, step, rank, world_size)
    _barrier()
    return path


def load(found: checkpoint.Found, model: torch.nn.Module, optimizer: torch.optim.Optimizer, meta: Mapping) -> None:
    """Collective: restore model and optimizer state in place, after checking the run's shape matches."""
    checkpoint.check_compatible(found, meta)
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state: dict[str, Any] = {"model": model_sd, "optim": optim_sd}
    _load(state, storage_reader=dist_cp.FileSystemReader(str(found.path)))  # fills `state` in place
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])


def export_model(model: torch.nn.Module, directory: Path, config: Mapping, is_main: bool) -> Path | None:
    """Collective: gather the full (unsharded) weights to rank 0, which writes them with the model's config."""
    state = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    return checkpoint.write_model(state, directory, config) if is_main else None
