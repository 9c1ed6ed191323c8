"""SageMaker model parallel v1 (`smdistributed.modelparallel.torch`): pipeline-partitioned training.

Used only when the job passes `mp_parameters` and the container has SMP v1 (PyTorch 2.0 DLCs, launched by
mpirun). SMP owns process groups, partitioning and the pipeline schedule: `smp.init()` reads the workload's
modelparallel parameters, `smp.DistributedModel` partitions the model on the first `@smp.step` call, and
each step's batch is split into `microbatches` pipeline pieces. Data is split by `smp.dp_rank()`: ranks of
one model-parallel group read the same batch. Forward and backward run inside `@smp.step` functions, with
`model.backward(loss)` in place of `loss.backward()`.

Checkpoints use SMP's partial checkpoints (each partition saves its part; SMP keeps the newest
`keep_checkpoints`), plus a `smp_v1_latest.json` note naming the newest complete save. SMP v1 containers
ship PyTorch 2.0 without the distributed-checkpoint APIs: nothing this module imports may need them.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

from gptlm import checkpoint, optim
from gptlm.backends.base import Backend
from gptlm.checkpoint import CheckpointError, Found, Saved
from gptlm.distenv import DistEnv
from gptlm.hparams import ConfigError, TrainConfig
from gptlm.model import GPT

LATEST = "smp_v1_latest.json"


def _tag(step: int) -> str:
    return f"step_{step:09d}"


class SmpV1Backend(Backend):
    name = "smp_v1"

    def __init__(self, config: TrainConfig, env: DistEnv):
        super().__init__(config, env)
        self.microbatches = int(config.mp_parameters.get("microbatches", 1))
        if config.micro_batch_size % self.microbatches:
            raise ConfigError(f"hyperparameter micro_batch_size: {config.micro_batch_size} must be divisible by "
                              f"the modelparallel microbatches ({self.microbatches})")
        self.init_device = torch.device("cpu")  # SMP moves each partition to its own GPU
        self.smp: Any = None
        self._saved: Saved | None = None  # the last save, until finish_checkpoint reports it

    def setup(self) -> None:
        import smdistributed.modelparallel.torch as smp

        self.smp = smp
        smp.init()
        if self.cuda:  # always on SageMaker; the CPU branch only serves the stand-in test
            torch.cuda.set_device(smp.local_rank())
            self.device = torch.device("cuda", smp.local_rank())
        self.is_main = smp.rank() == 0
        self.dp_rank, self.dp_size = smp.dp_rank(), smp.dp_size()
        accum = self.config.grad_accum_steps

        def train(model: Any, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            with self.autocast():
                loss = model(x, y) / accum
            model.backward(loss)
            return loss

        def evaluate(model: Any, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            with self.autocast():
                return model(x, y)

        self._train_step = smp.step(train)  # module calls and model.backward must happen inside @smp.step
        self._eval_step = smp.step(evaluate)

    def close(self) -> None:
        """Meet the other ranks. SMP owns its process groups and offers no call to destroy them; the entry point
        leaves with os._exit (gptlm.shutdown), so their destructors never run at interpreter exit."""
        if self.smp is not None:
            self.smp.barrier()

    def describe(self) -> str:
        partitions = self.config.mp_parameters.get("partitions", 1)
        return (f"parallelism=smp_v1 partitions={partitions} microbatches={self.microbatches} "
                f"launcher={self.env.launcher} world_size={self.env.world_size} dp_size={self.dp_size} "
                f"device={self.device.type} bf16={self.bf16} compile=False")

    def wrap(self, model: GPT) -> nn.Module:
        if self.config.compile:
            self.log("compile=True is ignored with SMP v1 (SMP traces and partitions the eager model)")
        accum = self.config.grad_accum_steps
        # With `ddp: true`, SMP all-reduces gradients only after this many backward passes.
        kwargs = {"backward_passes_per_step": accum} if accum > 1 else {}
        return self.smp.DistributedModel(model, **kwargs)

    def build_optimizer(self, module: nn.Module) -> torch.optim.Optimizer:
        inner = optim.build_optimizer(module, self.config.learning_rate, self.config.weight_decay, fused=False)
        return self.smp.DistributedOptimizer(inner)

    def forward_backward(self, module: nn.Module, x: torch.Tensor, y: torch.Tensor, sync: bool) -> torch.Tensor:
        return self._train_step(module, x, y).reduce_mean().detach()  # SMP syncs per backward_passes_per_step

    def optimizer_step(self, module: nn.Module, optimizer: torch.optim.Optimizer, lr: float) -> torch.Tensor:
        optim.set_lr(optimizer, lr)
        model: Any = module  # smp.DistributedModel
        grads = [p.grad for p in model.local_parameters() if p.grad is not None]
        norm = self._global_norm(grads)
        if self.config.grad_clip and norm > self.config.grad_clip:
            scale = self.config.grad_clip / (norm + 1e-6)
            for grad in grads:
                grad.mul_(scale)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return torch.tensor(norm)

    def _global_norm(self, grads: list[torch.Tensor]) -> float:
        """Each rank holds only its partition's gradients (already averaged over data-parallel ranks by SMP):
        the model's norm sums the squares over the model-parallel group."""
        local = torch.stack([g.detach().float().pow(2).sum() for g in grads]).sum() if grads else torch.zeros(())
        return math.sqrt(sum(self.smp.allgather(float(local), self.smp.MP_GROUP)))

    def eval_loss(self, module: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return self._eval_step(module, x, y).reduce_mean()

    def mean(self, value: torch.Tensor) -> float:
        values = self.smp.allgather(float(value), self.smp.DP_GROUP)
        return sum(values) / len(values)

    def any_rank(self, flag: bool) -> bool:
        return any(self.smp.allgather(flag, self.smp.WORLD))

    def find_checkpoint(self, root: Path) -> Found | None:
        note = root / LATEST
        if not note.is_file():
            return None
        try:
            meta = json.loads(note.read_text())
            step = int(meta["step"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"{note} names no checkpoint step ({exc}); delete it, or point checkpoint_dir "
                                  "(or the job's checkpoint S3 URI) at an empty location to start fresh") from exc
        return Found(path=root / f"{_tag(step)}_partial", step=step, meta=meta)

    def load_checkpoint(self, found: Found, module: nn.Module, optimizer: torch.optim.Optimizer,
                        meta: dict[str, Any]) -> None:
        checkpoint.check_compatible(found, meta)
        # SMP applies the state when the model is partitioned, on the first @smp.step call.
        self.smp.resume_from_checkpoint(str(found.path.parent), tag=_tag(found.step), partial=True)

    def save_checkpoint(self, root: Path, step: int, module: nn.Module, optimizer: torch.optim.Optimizer,
                        meta: dict[str, Any]) -> Saved | None:
        """Synchronous (SMP's own save): complete on return; `finish_checkpoint` reports it."""
        started = time.perf_counter()
        self.smp.save_checkpoint(str(root), tag=_tag(step), partial=True, model=module, optimizer=optimizer,
                                 user_content={"step": step},
                                 num_kept_partial_checkpoints=self.config.keep_checkpoints)
        self.smp.barrier()
        if self.is_main:  # only now is every partition's part on disk
            tmp = root / f"{LATEST}.tmp"
            tmp.write_text(json.dumps({**meta, "step": step}, sort_keys=True))
            tmp.replace(root / LATEST)
        self._saved = Saved(step, root / f"{_tag(step)}_partial", time.perf_counter() - started, 0.0)
        return None

    def finish_checkpoint(self) -> Saved | None:
        saved, self._saved = self._saved, None
        return saved

    def prune_checkpoints(self, root: Path, keep: int) -> None:
        """Nothing to do: SMP deletes old partial checkpoints itself (`num_kept_partial_checkpoints`)."""

    def export(self, module: nn.Module, directory: Path, config: dict[str, Any]) -> Path | None:
        model: Any = module  # smp.DistributedModel: gathers every partition's weights to rank 0
        state = model.state_dict(gather_to_rank0=True)
        return checkpoint.write_model(state, directory, config) if self.is_main else None
