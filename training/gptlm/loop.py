"""The training loop: one code path for every backend (native DDP/FSDP2, SMP v1, SMP v2), CPU or GPU.

Order of events (after gptlm.launch parsed the hyperparameters and picked the backend): join the process
group -> read the data and hold out the validation windows -> build and wrap the model -> resume from the
newest complete checkpoint -> train, and after each step:
- every `log_every` steps and at the last: a training metric line (loss averaged over ranks and steps);
- all ranks vote on the SIGTERM flag, so they stop at the same step (a save's collectives would hang
  otherwise);
- every `eval_every` steps and at the last (not when stopping): the held-out loss, averaged over ranks;
- every `checkpoint_every` steps, at the last, and when stopping: a checkpoint, written in the background (at most
  one write in flight; stopping waits for it, then exits 143);
-> wait for the last checkpoint write, then write the final model to SM_MODEL_DIR.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

import gptlm
from gptlm import hparams, optim
from gptlm.backends.base import Backend
from gptlm.checkpoint import Saved
from gptlm.metrics import Interval, eval_line, step_line
from gptlm.model import GPT, build_config, count_parameters
from gptlm.sampling import RankSampler, hold_out
from gptlm.shards import DataError, TokenWindows

EXIT_INTERRUPTED = 143  # 128 + SIGTERM: the run saved a checkpoint and stopped early
# Test hook: rank 0 sends SIGTERM after this many steps, to exercise the spot-interruption path.
FAULT_ENV = "GPTLM_FAULT_SIGTERM_AFTER_STEP"
FAULT_TARGET_ENV = "GPTLM_FAULT_SIGTERM_TARGET"  # "self" (default) or "parent" (the launcher)


class StopFlag:
    """Set by SIGTERM (spot interruption, StopTrainingJob, torchrun or mpirun shutting down their workers)."""

    def __init__(self) -> None:
        self.raised = False
        self._previous = signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        self.raised = True

    def restore(self) -> None:
        signal.signal(signal.SIGTERM, self._previous)


def run(config: hparams.TrainConfig, backend: Backend) -> int:
    """Train to max_steps (0) or until SIGTERM (143, after a checkpoint every rank agreed on)."""
    return Loop(config, backend).run()


def _due(step: int, every: int, last: int) -> bool:
    return step == last or (every > 0 and step % every == 0)


def _as_float(value: torch.Tensor) -> float:
    """A scalar that may be a sharded DTensor (FSDP2's gradient norm): collective, so every rank calls it."""
    full = getattr(value, "full_tensor", None)
    return float(full() if full is not None else value)


class Loop:
    def __init__(self, config: hparams.TrainConfig, backend: Backend):
        self.config = config
        self.backend = backend
        self.grad_norm: torch.Tensor | None = None

    def run(self) -> int:
        self.backend.setup()
        self._build()
        root = hparams.checkpoint_dir(self.config)
        code = self._train(root, self._resume(root))
        self._release()
        return code

    def _release(self) -> None:
        """Drop the module and optimizer (they hold the process groups), so the teardown frees them before it
        destroys the groups, never the interpreter at exit (gptlm.shutdown). Only after a run every rank ended."""
        self.module = self.optimizer = self.grad_norm = None  # type: ignore[assignment]

    # -- setup ------------------------------------------------------------------------------------------------

    def _build(self) -> None:
        cfg, b = self.config, self.backend
        data_path = hparams.data_dir(cfg)
        self.windows = TokenWindows.from_directory(data_path, cfg.seq_len)
        self.model_cfg = build_config(cfg.model, cfg.seq_len, cfg.vocab_size or None)
        if self.windows.vocab_size > self.model_cfg.vocab_size:
            raise DataError(
                f"the shards in {data_path} use a vocabulary of {self.windows.vocab_size} tokens but model "
                f"{cfg.model} has {self.model_cfg.vocab_size}; set vocab_size to at least {self.windows.vocab_size}"
            )
        self.split = hold_out(self.windows.num_windows, cfg.seed)
        self.sampler = RankSampler(self.split.train, cfg.micro_batch_size * cfg.grad_accum_steps * b.dp_size,
                                   b.dp_rank, b.dp_size, cfg.seed)
        torch.manual_seed(cfg.seed)  # every rank builds identical initial weights
        with torch.device(b.init_device):
            model = GPT(self.model_cfg)
        self.module = b.wrap(model)
        self.optimizer = b.build_optimizer(self.module)
        self.lr_at = optim.lr_schedule(cfg.learning_rate, cfg.warmup_steps, cfg.max_steps, cfg.min_lr_ratio)
        b.log(f"model={cfg.model} params={count_parameters(self.model_cfg)} {b.describe()} "
              f"windows={self.windows.num_windows} train_windows={len(self.split.train)} "
              f"eval_windows={len(self.split.held_out)}")

    def _meta(self) -> dict[str, Any]:
        return {"model": self.config.model, "seq_len": self.config.seq_len,
                "vocab_size": self.model_cfg.vocab_size, "parallelism": self.config.parallelism}

    def _resume(self, root: Path) -> int:
        found = self.backend.find_checkpoint(root)
        for reason in found.passed_over if found is not None else ():
            self.backend.log(f"passed over checkpoint {reason}")
        if found is None:
            self.backend.log(f"no complete checkpoint in {root}; starting from step 0")
            return 0
        self.backend.load_checkpoint(found, self.module, self.optimizer, self._meta())
        self.backend.log(f"resumed from checkpoint step={found.step} path={found.path}")
        return found.step

    # -- the loop ---------------------------------------------------------------------------------------------

    def _tensors(self, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """A batch of windows as (inputs, next-token targets) on the backend's device."""
        batch = torch.from_numpy(rows)
        if self.backend.device.type == "cuda":
            batch = batch.pin_memory().to(self.backend.device, non_blocking=True)
        return batch[:, :-1].contiguous(), batch[:, 1:].contiguous()

    def _train_step(self, step: int) -> torch.Tensor:
        """One optimizer step over grad_accum_steps micro-batches; returns the step's mean loss on this rank."""
        cfg, b = self.config, self.backend
        x, y = self._tensors(self.windows.rows(self.sampler.indices(step)))
        total = torch.zeros((), device=b.device)
        mb, n = cfg.micro_batch_size, cfg.grad_accum_steps
        for m in range(n):
            total += b.forward_backward(self.module, x[m * mb:(m + 1) * mb], y[m * mb:(m + 1) * mb], sync=m == n - 1)
        self.grad_norm = b.optimizer_step(self.module, self.optimizer, self.lr_at(step))
        return total

    def _evaluate(self, step: int) -> float:
        """Print the held-out loss (mean over eval_batches batches and all data-parallel ranks); returns seconds."""
        cfg, b = self.config, self.backend
        started = time.perf_counter()
        total = torch.zeros((), device=b.device)
        self.module.eval()
        try:
            for i in range(cfg.eval_batches):
                indices = self.split.eval_indices(i, b.dp_rank, b.dp_size, cfg.micro_batch_size)
                total += b.eval_loss(self.module, *self._tensors(self.windows.rows(indices))).float()
        finally:
            self.module.train()
        b.log(eval_line(step, b.mean(total) / cfg.eval_batches))
        return time.perf_counter() - started

    def _save(self, root: Path, step: int) -> float:
        """Begin the checkpoint of `step` (the write runs in the background); returns the seconds training waited."""
        started = time.perf_counter()
        self._report(root, self.backend.save_checkpoint(root, step, self.module, self.optimizer, self._meta()))
        return time.perf_counter() - started

    def _finish_save(self, root: Path) -> float:
        """Wait for the checkpoint write in flight (before stopping or exporting); returns the seconds it took."""
        started = time.perf_counter()
        self._report(root, self.backend.finish_checkpoint())
        return time.perf_counter() - started

    def _report(self, root: Path, saved: Saved | None) -> None:
        """A save that is complete now: prune the older ones and log its blocking and background seconds."""
        if saved is None:
            return
        self.backend.prune_checkpoints(root, self.config.keep_checkpoints)
        self.backend.log(f"checkpoint saved step={saved.step} path={saved.path} "
                         f"blocking_seconds={saved.blocking_seconds:.2f} "
                         f"background_seconds={saved.background_seconds:.2f}")

    def _log_step(self, step: int, loss_sum: torch.Tensor, steps: int, interval: Interval) -> None:
        mean_loss = self.backend.mean(loss_sum) / steps  # syncs the device
        tokens_per_sec, step_ms = interval.rates()
        grad_norm = _as_float(self.grad_norm) if self.grad_norm is not None else None
        self.backend.log(step_line(step, mean_loss, tokens_per_sec, step_ms, self.lr_at(step - 1), grad_norm))

    def _train(self, root: Path, start: int) -> int:
        cfg, b = self.config, self.backend
        flag = StopFlag()
        fault_step = int(os.environ.get(FAULT_ENV, "0") or 0)
        interval = Interval()
        tokens_per_step = cfg.tokens_per_step_per_rank * b.dp_size
        loss_sum = torch.zeros((), device=b.device)
        logged_steps = 0
        step = start
        try:
            while step < cfg.max_steps:
                loss_sum += self._train_step(step)
                step += 1
                if step == start + 1:
                    b.log(f"first step done step={step} seconds_since_start={time.monotonic() - gptlm.STARTED:.1f}")
                logged_steps += 1
                interval.add(1, tokens_per_step)
                if _due(step, cfg.log_every, cfg.max_steps):
                    self._log_step(step, loss_sum, logged_steps, interval)
                    loss_sum.zero_()
                    logged_steps = 0
                if fault_step and step == fault_step and b.is_main:
                    # "parent": signal the launcher, which forwards SIGTERM to every worker, as on a spot interruption
                    victim = os.getppid() if os.environ.get(FAULT_TARGET_ENV) == "parent" else os.getpid()
                    os.kill(victim, signal.SIGTERM)
                stop = b.any_rank(flag.raised)
                if not stop and cfg.eval_every and _due(step, cfg.eval_every, cfg.max_steps):
                    interval.exclude(self._evaluate(step))
                if stop or _due(step, cfg.checkpoint_every, cfg.max_steps):
                    interval.exclude(self._save(root, step))
                if stop:
                    self._finish_save(root)  # exit 143 only with the checkpoint of this step complete
                    b.log(f"SIGTERM received: stopped at step={step} after saving; a relaunch resumes from here")
                    return EXIT_INTERRUPTED
        finally:
            flag.restore()
        self._finish_save(root)
        target = b.export(self.module, hparams.model_dir(), self._export_config())
        b.log(f"training complete step={step} model={target}")
        return 0

    def _export_config(self) -> dict[str, Any]:
        return {"model_config": asdict(self.model_cfg), "train_config": asdict(self.config),
                "tokenizer": "bytes" if self.model_cfg.vocab_size <= 256 else "unknown"}
