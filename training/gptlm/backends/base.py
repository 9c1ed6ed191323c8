"""The interface between the training loop and a way of running it.

`gptlm.loop` owns everything every run does the same way: data, model construction, step cadence,
gradient accumulation, metric lines, evaluation, checkpoint and stop cadence, export. A backend owns what
differs between native PyTorch and SageMaker model parallel: joining the process group, wrapping the model,
the optimizer wrapper, how one micro-batch runs forward and backward, collectives, and checkpoint I/O.

Constructing a backend has no side effects (launch picks one, tests build them anywhere); `setup()` joins
the process group and fixes the device and ranks. This module must stay importable on PyTorch 2.0 (the
SMP v1 containers): no torch.distributed.checkpoint here.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import nn

from gptlm import shutdown
from gptlm.checkpoint import Found, Saved
from gptlm.distenv import DistEnv
from gptlm.hparams import ConfigError, TrainConfig
from gptlm.model import GPT


def wants_bf16(precision: str, cuda: bool) -> bool:
    """bf16 autocast on GPU unless fp32 is asked for; CPUs stay fp32 (bf16 there is slow and not the point)."""
    if precision == "bf16" and not cuda:
        raise ConfigError("hyperparameter precision: bf16 needs a GPU here; use auto or fp32 on CPU")
    return precision == "bf16" or (precision == "auto" and cuda)


class Backend(ABC):
    """One way of running the loop. Attributes are valid after `setup()`."""

    name: ClassVar[str]

    def __init__(self, config: TrainConfig, env: DistEnv):
        self.config = config
        self.env = env
        self.cuda = torch.cuda.is_available()
        self.bf16 = wants_bf16(config.precision, self.cuda)
        self.device = torch.device("cuda", env.local_rank) if self.cuda else torch.device("cpu")
        self.init_device = self.device  # where the loop builds the model before `wrap`
        self.is_main = env.is_main  # the one rank that prints
        self.dp_rank = env.rank  # data-parallel rank and size: which part of each global batch this rank reads
        self.dp_size = env.world_size
        self.extra_groups: list[Any] = []  # process groups made beside the default one, torn down before it
        self.store: Any = None  # the rendezvous store, when this process made it (rank 0 then hosts it)

    def log(self, message: str) -> None:
        if self.is_main:
            print(message, flush=True)

    def autocast(self) -> contextlib.AbstractContextManager:
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16)

    # -- process group and model ----------------------------------------------------------------------------

    @abstractmethod
    def setup(self) -> None:
        """Join the process group(s) and pick the device; every rank calls it first."""

    @abstractmethod
    def describe(self) -> str:
        """`key=value` words for the start-up line (parallelism, launcher, world size, device, ...)."""

    @abstractmethod
    def wrap(self, model: GPT) -> nn.Module:
        """The module the loop trains: `model` distributed the backend's way."""

    @abstractmethod
    def build_optimizer(self, module: nn.Module) -> torch.optim.Optimizer:
        """The optimizer over the wrapped module's parameters (gptlm.optim's AdamW, wrapped where needed)."""

    def close(self) -> None:
        """Collective, only when every rank finished or agreed to stop: meet, then destroy the process groups
        (gptlm.shutdown). The loop's module and optimizer must be released by then."""
        shutdown.close_groups(self.extra_groups, self.store, self.env.rank, self.env.world_size)
        self.extra_groups, self.store = [], None

    # -- one step ---------------------------------------------------------------------------------------------

    @abstractmethod
    def forward_backward(self, module: nn.Module, x: torch.Tensor, y: torch.Tensor, sync: bool) -> torch.Tensor:
        """One gradient-accumulation micro-batch: loss / grad_accum_steps, backward; gradients are synchronised
        across ranks only when `sync` (the last micro-batch). Returns that scaled loss, detached."""

    @abstractmethod
    def optimizer_step(self, module: nn.Module, optimizer: torch.optim.Optimizer, lr: float) -> torch.Tensor | None:
        """Clip to grad_clip, step with learning rate `lr`, clear the gradients; returns the gradient norm."""

    @abstractmethod
    def eval_loss(self, module: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Mean loss of one batch, forward only (the loop has put the module in eval mode)."""

    # -- collectives ------------------------------------------------------------------------------------------

    @abstractmethod
    def mean(self, value: torch.Tensor) -> float:
        """Collective: mean of a scalar over the data-parallel ranks."""

    @abstractmethod
    def any_rank(self, flag: bool) -> bool:
        """Collective: True on every rank when any rank's flag is set (all ranks stop at the same step)."""

    # -- checkpoints and the final model -------------------------------------------------------------------

    @abstractmethod
    def find_checkpoint(self, root: Path) -> Found | None:
        """The newest complete checkpoint under `root`, or None to start from step 0."""

    @abstractmethod
    def load_checkpoint(self, found: Found, module: nn.Module, optimizer: torch.optim.Optimizer,
                        meta: dict[str, Any]) -> None:
        """Collective: restore model and optimizer state; refuses a checkpoint of another model shape."""

    @abstractmethod
    def save_checkpoint(self, root: Path, step: int, module: nn.Module, optimizer: torch.optim.Optimizer,
                        meta: dict[str, Any]) -> Saved | None:
        """Collective: begin the checkpoint of `step`, finishing the write still in flight first (at most one);
        returns that earlier save once it is complete, else None. Training may change the weights on return."""

    @abstractmethod
    def finish_checkpoint(self) -> Saved | None:
        """Collective: wait for the write in flight and mark it complete; None when there was none."""

    @abstractmethod
    def prune_checkpoints(self, root: Path, keep: int) -> None:
        """Delete all but the newest `keep` checkpoints (after a save)."""

    @abstractmethod
    def export(self, module: nn.Module, directory: Path, config: dict[str, Any]) -> Path | None:
        """Collective: write the full weights and `config` to `directory`; returns the weights file on rank 0."""
