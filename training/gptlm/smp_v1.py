"""SageMaker model parallel v1 (`smdistributed.modelparallel.torch`): pipeline-partitioned training.

Used only when the job passes `mp_parameters` and the container has SMP v1 (PyTorch 2.0 DLCs, launched
by mpirun). SMP owns process groups, partitioning and the pipeline schedule: `smp.init()` reads the
workload's modelparallel parameters, `smp.DistributedModel` partitions the model on the first
`@smp.step` call, and each step's batch is split into `microbatches` pieces. Data is split by
`smp.dp_rank()`; ranks of one model-parallel group read the same batch.

This path cannot run outside an SMP v1 container, so it is kept small and apart from the main trainer.
It reuses the model, data sampler, learning-rate schedule and metric lines; checkpoints use SMP's own
partial-checkpoint API (each partition saves its part), plus a `smp_v1_latest.json` note naming the
newest complete save.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import numpy as np
import torch

from gptlm import hparams, parallel
from gptlm.metrics import Interval, step_line
from gptlm.model import GPT, build_config
from gptlm.shards import DataError, RankSampler, TokenWindows

LATEST = "smp_v1_latest.json"


def run(config: hparams.TrainConfig) -> int:
    import smdistributed.modelparallel.torch as smp

    microbatches = int(config.mp_parameters.get("microbatches", 1))
    if config.micro_batch_size % microbatches:
        raise hparams.ConfigError(f"hyperparameter micro_batch_size: {config.micro_batch_size} must be divisible by "
                                  f"the modelparallel microbatches ({microbatches})")
    smp.init()
    if torch.cuda.is_available():  # always on SageMaker; the CPU branch only serves the stand-in test
        torch.cuda.set_device(smp.local_rank())
        device = torch.device("cuda", smp.local_rank())
    else:
        device = torch.device("cpu")
    main = smp.rank() == 0

    windows = TokenWindows.from_directory(hparams.data_dir(config), config.seq_len)
    model_cfg = build_config(config.model, config.seq_len, config.vocab_size or None)
    if windows.vocab_size > model_cfg.vocab_size:
        raise DataError(f"the shards use a vocabulary of {windows.vocab_size} tokens but model {config.model} has "
                        f"{model_cfg.vocab_size}; set vocab_size to at least {windows.vocab_size}")
    torch.manual_seed(config.seed)
    model = smp.DistributedModel(GPT(model_cfg))
    optimizer = smp.DistributedOptimizer(
        parallel.build_optimizer(model, config.learning_rate, config.weight_decay, fused=False))
    lr_at = parallel.lr_schedule(config.learning_rate, config.warmup_steps, config.max_steps, config.min_lr_ratio)
    sampler = RankSampler(windows.num_windows, config.micro_batch_size * smp.dp_size(), smp.dp_rank(),
                          smp.dp_size(), config.seed)

    root = hparams.checkpoint_dir(config)
    start = 0
    note = root / LATEST
    if note.is_file():
        start = int(json.loads(note.read_text())["step"])
        smp.resume_from_checkpoint(str(root), tag=f"step_{start:09d}", partial=True)  # loads at the first step
        if main:
            print(f"resumed from checkpoint step={start} path={root}", flush=True)

    @smp.step
    def train_step(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            loss = model(x, y)
        model.backward(loss)
        return loss

    def save(step: int) -> None:
        smp.save_checkpoint(str(root), tag=f"step_{step:09d}", partial=True, model=model, optimizer=optimizer,
                            user_content={"step": step}, num_kept_partial_checkpoints=config.keep_checkpoints)
        smp.barrier()
        if main:
            note.write_text(json.dumps({"step": step}))

    stopped = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stopped.update(flag=True))
    interval = Interval()
    tokens_per_step = config.micro_batch_size * config.seq_len * smp.dp_size()
    step = start
    while step < config.max_steps:
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step)
        rows = np.stack([windows.window(int(i)) for i in sampler.indices(step)])
        batch = torch.from_numpy(rows).to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = train_step(model, batch[:, :-1].contiguous(), batch[:, 1:].contiguous()).reduce_mean()
        optimizer.step()
        step += 1
        interval.add(1, tokens_per_step)
        if step % config.log_every == 0 or step == config.max_steps:
            tokens_per_sec, step_ms = interval.rates()
            if main:
                print(step_line(step, float(loss), tokens_per_sec, step_ms, lr_at(step - 1)), flush=True)
        stop = any(smp.allgather(stopped["flag"], smp.WORLD))
        if stop or (config.checkpoint_every and step % config.checkpoint_every == 0) or step == config.max_steps:
            save(step)
        if stop:
            return 143
    state = model.state_dict(gather_to_rank0=True)
    if main:
        out = hparams.model_dir()
        out.mkdir(parents=True, exist_ok=True)
        torch.save(state, Path(out) / "model.pt")
        print(f"training complete step={step} model={out / 'model.pt'}", flush=True)
    return 0
