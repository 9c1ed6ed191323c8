"""Sharded checkpoints with torch.distributed.checkpoint (DCP), for the native and SMP v2 backends.

Every rank writes only its own shard, in parallel, and a later run may load it with a different world
size or switch between DDP and FSDP (DCP reshards). Saves run in the background (`Saver`): training waits only
while the state is copied to CPU memory. Folder layout, completeness markers and pruning are
`gptlm.checkpoint`'s; this module needs PyTorch >= 2.2 and is never imported on the SMP v1 path.
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
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
_async_save = getattr(dist_cp, "async_save", None)  # PyTorch >= 2.3


def _barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


# Test hook: the write of this step's checkpoint sleeps this many seconds first (GPTLM_FAULT_SLOW_WRITE=STEP:SECONDS),
# so a test can deliver SIGTERM or SIGKILL while a background write is in flight.
SLOW_WRITE_ENV = "GPTLM_FAULT_SLOW_WRITE"

# FileSystemWriter's `cache_staged_state_dict` (PyTorch >= 2.4): keep the staged CPU copy for the next save.
_CAN_CACHE = "cache_staged_state_dict" in inspect.signature(dist_cp.FileSystemWriter.__init__).parameters


class _Writer(dist_cp.FileSystemWriter):
    """The writer of one checkpoint step, and of every later one when kept (`Saver`); `step` is the one it writes."""

    def __init__(self, path: Path, step: int, cache: bool = False):
        if cache:
            super().__init__(str(path), cache_staged_state_dict=True)
        else:
            super().__init__(str(path))
        self.step = step

    def write_data(self, plan: Any, planner: Any) -> Any:
        fault_step, _, seconds = os.environ.get(SLOW_WRITE_ENV, "").partition(":")
        if fault_step == str(self.step):
            time.sleep(float(seconds or 0))
        return super().write_data(plan, planner)


def _keeps_staged_copy() -> bool:
    """Whether a run keeps one writer and its pinned staged copy: on a GPU, with a PyTorch that offers it."""
    return _CAN_CACHE and torch.cuda.is_available()


def _state_shape(state: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Each tensor's path, dtype and shape: a staged copy fits the next state only if these are the same."""
    if isinstance(state, Mapping):
        for key, value in state.items():
            yield from _state_shape(value, f"{prefix}/{key}")
    elif isinstance(state, (list, tuple)):
        for index, value in enumerate(state):
            yield from _state_shape(value, f"{prefix}/{index}")
    elif isinstance(state, torch.Tensor):
        yield prefix, (state.dtype, tuple(state.shape))


@dataclass
class _Pending:
    path: Path
    step: int
    meta: Mapping
    future: Any  # concurrent.futures.Future of the background write; None when it was written synchronously
    blocking_seconds: float
    written_from: float  # time.perf_counter() when training went on


class Saver:
    """Sharded checkpoints, written in the background with at most one write in flight.

    `start` blocks only while the state is copied to CPU memory (and while the previous write, if any, finishes);
    the write then runs on a thread, its collectives on a gloo group of its own so they never interleave with
    training's (one process alone needs no group). `finish` waits for the write and only then drops this rank's
    completeness marker, so a resume never reads half a checkpoint. Every rank calls both at the same step
    (collective). Without async support (PyTorch < 2.3) or with `asynchronous=False`, `start` writes synchronously.

    On a GPU the writer is kept for the whole run with PyTorch's `cache_staged_state_dict`: the first save allocates
    a pinned CPU copy of the state, every later save only copies into it (one device-to-host copy, no allocation of
    the state's size each time). The copy is refilled only after the previous write finished (`start` waits for it
    first), and dropped when the state's tensors change shape (a new writer stages afresh).
    """

    def __init__(self, rank: int, world_size: int, asynchronous: bool):
        self.rank, self.world_size = rank, world_size
        self.asynchronous = asynchronous and _async_save is not None
        self.group: Any = None  # made on the first asynchronous save, so runs without one make no extra group
        self.pending: _Pending | None = None
        self.writer: _Writer | None = None  # kept between saves while it caches the staged state
        self.shape: list[tuple[str, Any]] = []

    def start(self, root: Path, step: int, model: torch.nn.Module, optimizer: torch.optim.Optimizer, meta: Mapping
              ) -> tuple[Path, checkpoint.Saved | None]:
        """Collective: begin the checkpoint of `step`; returns its folder and the previous save, if this finished it."""
        started = time.perf_counter()
        previous = self.finish()
        path = checkpoint.step_dir(root, step)
        path.mkdir(parents=True, exist_ok=True)
        model_sd, optim_sd = get_state_dict(model, optimizer)
        state = {"model": model_sd, "optim": optim_sd}
        future = None
        if self.asynchronous and _async_save is not None:
            if self.group is None and dist.is_initialized():
                self.group = dist.new_group(backend="gloo")
            response = _async_save(state, checkpoint_id=str(path), storage_writer=self._writer_for(path, step, state),
                                   process_group=self.group)
            future = getattr(response, "upload_completion", response)  # AsyncSaveResponse in newer PyTorch
        else:
            _save(state, storage_writer=_Writer(path, step))
        now = time.perf_counter()
        self.pending = _Pending(path, step, meta, future, now - started, now)
        return path, previous

    def _writer_for(self, path: Path, step: int, state: Mapping) -> _Writer:
        """The kept writer (its staged copy fits this state), or a new one; only a GPU run keeps one."""
        if not _keeps_staged_copy():
            return _Writer(path, step)
        shape = list(_state_shape(state))
        if self.writer is None or shape != self.shape:
            self.writer, self.shape = _Writer(path, step, cache=True), shape
        self.writer.step = step
        return self.writer

    def finish(self) -> checkpoint.Saved | None:
        """Collective: wait for the write in flight, mark it complete on this rank, meet; None if none was."""
        pending, self.pending = self.pending, None
        if pending is None:
            return None
        if pending.future is not None:
            pending.future.result()  # re-raises a failed write here, on the training thread
        checkpoint.write_marker(pending.path, pending.meta, pending.step, self.rank, self.world_size)
        _barrier()
        return checkpoint.Saved(pending.step, pending.path, pending.blocking_seconds,
                                time.perf_counter() - pending.written_from)

    @property
    def groups(self) -> list[Any]:
        return [self.group] if self.group is not None else []


def save(root: Path, step: int, model: torch.nn.Module, optimizer: torch.optim.Optimizer, meta: Mapping,
         rank: int, world_size: int) -> Path:
    """Collective and synchronous: every rank calls it at the same step. Returns the complete checkpoint's folder."""
    saver = Saver(rank, world_size, asynchronous=False)
    path, _ = saver.start(root, step, model, optimizer, meta)
    saver.finish()
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
