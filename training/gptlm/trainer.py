"""The training loop: one code path for every launcher, DDP or FSDP, CPU or GPU.

Order of events (after gptlm.launch parsed the hyperparameters and found the launcher): join the process group -> build and
wrap the model -> resume from the newest complete checkpoint -> train, logging metric lines, saving
every `checkpoint_every` steps and when SIGTERM arrives -> write the final model to SM_MODEL_DIR.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from gptlm import checkpoint, distenv, hparams, parallel
from gptlm.metrics import Interval, step_line
from gptlm.model import GPT, build_config, count_parameters
from gptlm.shards import DataError, RankSampler, TokenWindows

EXIT_INTERRUPTED = 143  # 128 + SIGTERM: the run saved a checkpoint and stopped early
# Test hook: rank 0 sends itself SIGTERM after this many steps, to exercise the spot-interruption path.
FAULT_ENV = "GPTLM_FAULT_SIGTERM_AFTER_STEP"
FAULT_TARGET_ENV = "GPTLM_FAULT_SIGTERM_TARGET"  # "self" (default) or "parent" (the launcher)


class StopFlag:
    """Set by SIGTERM (spot interruption, StopTrainingJob, torchrun shutting down its workers)."""

    def __init__(self) -> None:
        self.raised = False
        self._previous = signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        self.raised = True

    def restore(self) -> None:
        signal.signal(signal.SIGTERM, self._previous)


def log(env: distenv.DistEnv, message: str) -> None:
    if env.is_main:
        print(message, flush=True)


class Trainer:
    def __init__(self, config: hparams.TrainConfig, env: distenv.DistEnv, smp_v2: bool = False):
        self.config = config
        self.env = env
        self.smp_v2 = smp_v2
        self.cuda = torch.cuda.is_available()
        if self.cuda:
            torch.cuda.set_device(env.local_rank)
            self.device = torch.device("cuda", env.local_rank)
            torch.backends.cuda.matmul.allow_tf32 = True  # any fp32 matmul left outside autocast
            torch.backends.cudnn.allow_tf32 = True
        else:
            self.device = torch.device("cpu")
        self.bf16 = config.precision == "bf16" or (config.precision == "auto" and self.cuda)
        if config.precision == "bf16" and not self.cuda:
            raise hparams.ConfigError("hyperparameter precision: bf16 needs a GPU here; use auto or fp32 on CPU")

    # -- setup ------------------------------------------------------------------------------------------------

    def _setup_distributed(self) -> None:
        distenv.init_process_group(self.env, self.cuda)
        self.control_group = None
        if dist.is_initialized() and self.env.backend(self.cuda) != "gloo":
            # A CPU (gloo) group for the per-step stop flag, so agreeing on it never waits for the GPU.
            self.control_group = dist.new_group(backend="gloo")
        if self.smp_v2:
            import torch.sagemaker as tsm

            tsm.init()

    def _build(self) -> None:
        cfg = self.config
        data_path = hparams.data_dir(cfg)
        self.windows = TokenWindows.from_directory(data_path, cfg.seq_len)
        self.model_cfg = build_config(cfg.model, cfg.seq_len, cfg.vocab_size or None)
        if self.windows.vocab_size > self.model_cfg.vocab_size:
            raise DataError(
                f"the shards in {data_path} use a vocabulary of {self.windows.vocab_size} tokens but model "
                f"{cfg.model} has {self.model_cfg.vocab_size}; set vocab_size to at least {self.windows.vocab_size}"
            )
        torch.manual_seed(cfg.seed)  # every rank builds identical initial weights
        with torch.device(self.device):
            model = GPT(self.model_cfg)
        if cfg.compile and self.cuda:
            parallel.compile_blocks(model)
        if self.smp_v2:
            import torch.sagemaker as tsm

            model = tsm.transform(model)
            self.module = parallel.wrap_smp_v2_fsdp(model, self.device, self.bf16)
        else:
            self.module = parallel.wrap(model, cfg.parallelism, self.device, dist.is_initialized(), self.bf16)
        self.optimizer = parallel.build_optimizer(self.module, cfg.learning_rate, cfg.weight_decay, fused=self.cuda)
        self.lr_at = parallel.lr_schedule(cfg.learning_rate, cfg.warmup_steps, cfg.max_steps, cfg.min_lr_ratio)
        self.sampler = RankSampler(
            self.windows.num_windows, cfg.micro_batch_size * cfg.grad_accum_steps * self.env.world_size,
            self.env.rank, self.env.world_size, cfg.seed,
        )
        log(self.env, f"model={cfg.model} params={count_parameters(self.model_cfg)} parallelism={cfg.parallelism} "
                      f"launcher={self.env.launcher} backend={self.env.backend(self.cuda) if dist.is_initialized() else 'none'} "
                      f"world_size={self.env.world_size} device={self.device.type} bf16={self.bf16} "
                      f"compile={cfg.compile and self.cuda} windows={self.windows.num_windows}")
        if cfg.compile and not self.cuda:
            log(self.env, "compile=True is ignored on CPU (it only pays off on GPU)")

    def _meta(self) -> dict:
        return {"model": self.config.model, "seq_len": self.config.seq_len,
                "vocab_size": self.model_cfg.vocab_size, "parallelism": self.config.parallelism}

    # -- the loop ---------------------------------------------------------------------------------------------

    def _batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        rows = np.stack([self.windows.window(int(i)) for i in self.sampler.indices(step)])
        batch = torch.from_numpy(rows)
        if self.cuda:
            batch = batch.pin_memory().to(self.device, non_blocking=True)
        return batch[:, :-1].contiguous(), batch[:, 1:].contiguous()

    def _train_step(self, step: int) -> torch.Tensor:
        cfg = self.config
        lr = self.lr_at(step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        x, y = self._batch(step)
        total = torch.zeros((), device=self.device)
        mb = cfg.micro_batch_size
        for m in range(cfg.grad_accum_steps):
            last = m == cfg.grad_accum_steps - 1
            with parallel.no_sync(self.module, sync=last), \
                    torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16):
                loss = self.module(x[m * mb:(m + 1) * mb], y[m * mb:(m + 1) * mb]) / cfg.grad_accum_steps
                loss.backward()
            total += loss.detach()
        self.grad_norm = torch.nn.utils.clip_grad_norm_(self.module.parameters(), cfg.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return total

    def _agree_to_stop(self, flag: StopFlag) -> bool:
        """All ranks must stop at the same step, or the checkpoint's collectives would hang."""
        if not dist.is_initialized():
            return flag.raised
        vote = torch.tensor([1 if flag.raised else 0], dtype=torch.int32)
        dist.all_reduce(vote, op=dist.ReduceOp.MAX, group=self.control_group)
        return bool(vote.item())

    def _mean_across_ranks(self, value: torch.Tensor) -> float:
        if dist.is_initialized():
            value = value.clone()
            dist.all_reduce(value, op=dist.ReduceOp.SUM)
            value /= self.env.world_size
        return float(value.item())

    def _save(self, root: Path, step: int) -> float:
        """Save, prune, and return the seconds it took."""
        started = time.perf_counter()
        path = checkpoint.save(root, step, self.module, self.optimizer, self._meta(), self.env.rank,
                               self.env.world_size)
        if self.env.local_rank == 0:
            checkpoint.prune(root, self.config.keep_checkpoints)
        seconds = time.perf_counter() - started
        log(self.env, f"checkpoint saved step={step} path={path} seconds={seconds:.1f}")
        return seconds

    def run(self) -> int:
        cfg, env = self.config, self.env
        self._setup_distributed()
        self._build()
        root = hparams.checkpoint_dir(cfg)
        start = 0
        found = checkpoint.find_latest(root)
        if found is not None:
            checkpoint.load(found, self.module, self.optimizer, self._meta())
            start = found.step
            log(env, f"resumed from checkpoint step={start} path={found.path}")
        else:
            log(env, f"no complete checkpoint in {root}; starting from step 0")

        flag = StopFlag()
        fault_step = int(os.environ.get(FAULT_ENV, "0") or 0)
        interval = Interval()
        tokens_per_step = cfg.tokens_per_step_per_rank * env.world_size
        loss_sum = torch.zeros((), device=self.device)
        logged_steps = 0
        step = start
        try:
            while step < cfg.max_steps:
                loss_sum += self._train_step(step)
                step += 1
                logged_steps += 1
                interval.add(1, tokens_per_step)
                if step % cfg.log_every == 0 or step == cfg.max_steps:
                    mean_loss = self._mean_across_ranks(loss_sum) / logged_steps  # syncs the device
                    tokens_per_sec, step_ms = interval.rates()
                    grad_norm = float(self.grad_norm.full_tensor() if hasattr(self.grad_norm, "full_tensor")
                                      else self.grad_norm)
                    log(env, step_line(step, mean_loss, tokens_per_sec, step_ms, self.lr_at(step - 1), grad_norm))
                    loss_sum.zero_()
                    logged_steps = 0
                if fault_step and step == fault_step and env.is_main:
                    # "parent": signal torchrun, which forwards SIGTERM to every worker, as on a spot interruption
                    target = os.getppid() if os.environ.get(FAULT_TARGET_ENV) == "parent" else os.getpid()
                    os.kill(target, signal.SIGTERM)
                stop = self._agree_to_stop(flag)
                if stop or (cfg.checkpoint_every and step % cfg.checkpoint_every == 0) or step == cfg.max_steps:
                    interval.exclude(self._save(root, step))
                if stop:
                    log(env, f"SIGTERM received: stopped at step={step} after saving; a relaunch resumes from here")
                    return EXIT_INTERRUPTED
        finally:
            flag.restore()
        target = checkpoint.export_model(self.module, hparams.model_dir(), self._export_config(), env.is_main)
        log(env, f"training complete step={step} model={target}")
        return 0

    def _export_config(self) -> dict:
        return {"model_config": asdict(self.model_cfg), "train_config": asdict(self.config),
                "tokenizer": "bytes" if self.model_cfg.vocab_size <= 256 else "unknown"}

