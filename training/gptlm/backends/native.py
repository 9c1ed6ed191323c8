"""Plain PyTorch: one process, DDP or FSDP2, under torchrun, mpirun (incl. SMDDP) or alone; GPU or CPU (gloo).

The process group comes from the launcher (gptlm.distenv); checkpoints are sharded DCP folders with
completeness markers (gptlm.dcp, gptlm.checkpoint), written in the background, so a relaunch may change world
size or DDP/FSDP.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from gptlm import checkpoint, dcp, distenv, hparams, optim, parallel
from gptlm.backends.base import Backend
from gptlm.checkpoint import Found, Saved
from gptlm.distenv import DistEnv
from gptlm.hparams import TrainConfig
from gptlm.model import GPT

COMPILE_CACHE = "compile_cache"  # folder beside the step_<N> checkpoints; pruning leaves it alone


class NativeBackend(Backend):
    name = "native"

    def __init__(self, config: TrainConfig, env: DistEnv):
        super().__init__(config, env)
        self.control_group: Any = None  # gloo group for the stop vote when the main group is NCCL/SMDDP
        self.saver = dcp.Saver(env.rank, env.world_size, asynchronous=config.async_checkpoint)

    def setup(self) -> None:
        if self.cuda:
            torch.cuda.set_device(self.env.local_rank)
            torch.backends.cuda.matmul.allow_tf32 = True  # any fp32 matmul left outside autocast
            torch.backends.cudnn.allow_tf32 = True
        self.store = distenv.init_process_group(self.env, self.cuda)
        if dist.is_initialized() and self.env.backend(self.cuda) != "gloo":
            # A CPU group for the per-step stop flag, so agreeing on it never waits for the GPU.
            self.control_group = dist.new_group(backend="gloo")
            self.extra_groups.append(self.control_group)

    def close(self) -> None:
        self.extra_groups += self.saver.groups  # the background writes' group; finished by now (the loop waits)
        super().close()
        self.control_group = self.saver.group = None

    def describe(self) -> str:
        group = self.env.backend(self.cuda) if dist.is_initialized() else "none"
        return (f"parallelism={self._parallelism()} launcher={self.env.launcher} backend={group} "
                f"world_size={self.env.world_size} device={self.device.type} bf16={self.bf16} "
                f"compile={self.config.compile and self.cuda}")

    def _parallelism(self) -> str:
        return self.config.parallelism

    def _compile_mode(self) -> str:
        """How `parallel.compile_model` compiles for this backend's wrapping."""
        return self.config.parallelism

    def _maybe_compile(self, model: GPT) -> None:
        if self.config.compile and self.cuda:
            # Compiled artefacts go beside the checkpoints, which SageMaker syncs to S3 and restores on a relaunch,
            # so a relaunched job reuses them instead of compiling again (PyTorch's on-disk compile caches).
            cache = hparams.checkpoint_dir(self.config) / COMPILE_CACHE / f"rank{self.env.rank}"
            os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache))
            parallel.compile_model(model, self._compile_mode())
        elif self.config.compile:
            self.log("compile=True is ignored on CPU (it only pays off on GPU)")

    def wrap(self, model: GPT) -> nn.Module:
        self._maybe_compile(model)
        return parallel.wrap(model, self.config.parallelism, self.device, dist.is_initialized(), self.bf16)

    def build_optimizer(self, module: nn.Module) -> torch.optim.Optimizer:
        return optim.build_optimizer(module, self.config.learning_rate, self.config.weight_decay, fused=self.cuda)

    def forward_backward(self, module: nn.Module, x: torch.Tensor, y: torch.Tensor, sync: bool) -> torch.Tensor:
        with parallel.no_sync(module, sync=sync), self.autocast():
            loss = module(x, y) / self.config.grad_accum_steps
            loss.backward()
        return loss.detach()

    def optimizer_step(self, module: nn.Module, optimizer: torch.optim.Optimizer, lr: float) -> torch.Tensor:
        optim.set_lr(optimizer, lr)
        norm = self._clip(module, self.config.grad_clip or math.inf)  # 0 = no clipping: only measure
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return norm

    def _clip(self, module: nn.Module, max_norm: float) -> torch.Tensor:
        """Clip to the global gradient norm and return it (a DTensor under FSDP2, which computes it globally)."""
        return torch.nn.utils.clip_grad_norm_(module.parameters(), max_norm)

    def eval_loss(self, module: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        with torch.no_grad(), self.autocast():
            return module(x, y)

    def mean(self, value: torch.Tensor) -> float:
        if dist.is_initialized():
            value = value.clone()
            dist.all_reduce(value, op=dist.ReduceOp.SUM)
            value /= self.dp_size
        return float(value.item())

    def any_rank(self, flag: bool) -> bool:
        if not dist.is_initialized():
            return flag
        vote = torch.tensor([1 if flag else 0], dtype=torch.int32)
        dist.all_reduce(vote, op=dist.ReduceOp.MAX, group=self.control_group)
        return bool(vote.item())

    def find_checkpoint(self, root: Path) -> Found | None:
        return checkpoint.find_latest(root)

    def load_checkpoint(self, found: Found, module: nn.Module, optimizer: torch.optim.Optimizer,
                        meta: dict[str, Any]) -> None:
        dcp.load(found, module, optimizer, meta)

    def save_checkpoint(self, root: Path, step: int, module: nn.Module, optimizer: torch.optim.Optimizer,
                        meta: dict[str, Any]) -> Saved | None:
        _, previous = self.saver.start(root, step, module, optimizer, meta)
        return previous

    def finish_checkpoint(self) -> Saved | None:
        return self.saver.finish()

    def prune_checkpoints(self, root: Path, keep: int) -> None:
        if self.env.local_rank == 0:  # each node has its own copy of the folder
            checkpoint.prune(root, keep)

    def export(self, module: nn.Module, directory: Path, config: dict[str, Any]) -> Path | None:
        return dcp.export_model(module, directory, config, self.is_main)
