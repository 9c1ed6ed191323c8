"""Training throughput of the shipped GPT trainer: tokens/s per GPU and model FLOPs utilisation (MFU).

Runs the trainer's own model, DDP / FSDP2 wrapping and fused AdamW on synthetic tokens (so data
loading is not measured), bf16 autocast, optional torch.compile (as the trainer compiles: the whole model under
DDP, each block under FSDP), and reports for each mode: tokens per second per GPU, milliseconds per step, the
seconds a checkpoint (model + AdamW) blocks training (the first, which allocates the staging copy, and the next)
and then writes in the background, and MFU = achieved
model FLOP/s per GPU divided by the GPU's dense bf16 peak from `compiler.facts.catalog.dense_bf16_tflops()` (the single
source of peaks).
Model FLOPs per token follow the PaLM convention, see `gptlm.model.flops_per_token`.

    python bench/train_throughput.py                       # one GPU: gpt-350m, seq 1024, DDP and FSDP
    torchrun --nproc_per_node 8 bench/train_throughput.py  # all GPUs of a host (figures are per GPU)

Without a GPU it says so, runs a few steps of the tiny model on CPU to check the code path, and exits 0.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
from gptlm import dcp, optim, parallel
from gptlm.model import GPT, build_config, count_parameters, flops_per_token

from compiler.facts.catalog import dense_bf16_tflops

# torch.cuda.get_device_name() -> catalog accelerator model; first matching rule wins.
_GPU_RULES: list[tuple[tuple[str, ...], str]] = [
    (("H200",), "H200"),
    (("H100",), "H100"),
    (("A100", "80GB"), "A100-80GB"),
    (("A100",), "A100-40GB"),
    (("A10G",), "A10G"),
    (("L40S",), "L40S"),
    (("V100", "32GB"), "V100-32GB"),
    (("V100",), "V100-16GB"),
    (("T4",), "T4"),
]


def catalog_gpu(device_name: str) -> str | None:
    """The catalog key for a CUDA device name, e.g. "NVIDIA H100 80GB HBM3" -> "H100"; None if unknown."""
    upper = device_name.upper()
    for needles, key in _GPU_RULES:
        if all(n in upper for n in needles):
            return key
    return None


def mfu(tokens_per_sec_per_gpu: float, flops_token: float, peak_tflops: float) -> float:
    return tokens_per_sec_per_gpu * flops_token / (peak_tflops * 1e12)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def init_group(cuda: bool) -> tuple[int, int, int]:
    """Join torchrun's group, or make a one-process group so DDP and FSDP run their real code paths."""
    if "RANK" in os.environ:
        dist.init_process_group("nccl" if cuda else "gloo")
        return dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group("nccl" if cuda else "gloo", init_method=f"tcp://127.0.0.1:{_free_port()}",
                            rank=0, world_size=1)
    return 0, 1, 0


def measure(mode: str, model_name: str, seq_len: int, micro_batch: int, steps: int, warmup: int,
            compile_model: bool, device: torch.device, world: int) -> dict:
    """Time `steps` optimizer steps after `warmup` untimed ones (compilation, allocator warm-up)."""
    cuda = device.type == "cuda"
    cfg = build_config(model_name, seq_len)
    torch.manual_seed(0)
    with torch.device(device):
        model = GPT(cfg)
    if compile_model and cuda:
        parallel.compile_model(model, mode)  # as the trainer does: the whole model under DDP, per block under FSDP
    module = parallel.wrap(model, mode, device, distributed=True, bf16=cuda)
    optimizer = optim.build_optimizer(module, 3e-4, 0.1, fused=cuda)
    x = torch.randint(0, cfg.vocab_size, (micro_batch, seq_len + 1), device=device)
    inputs, targets = x[:, :-1].contiguous(), x[:, 1:].contiguous()

    def step() -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
            loss = module(inputs, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    if cuda:
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    tokens_per_gpu = micro_batch * seq_len * steps / elapsed
    result = {
        "mode": mode, "model": model_name, "params": count_parameters(cfg), "seq_len": seq_len,
        "micro_batch_size": micro_batch, "world_size": world, "compile": compile_model and cuda,
        "tokens_per_sec_per_gpu": tokens_per_gpu, "step_time_ms": 1000 * elapsed / steps,
        "flops_per_token": flops_per_token(cfg),
        "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
    }
    result.update(measure_checkpoint(module, optimizer, mode, world))
    return result


def measure_checkpoint(module: torch.nn.Module, optimizer: torch.optim.Optimizer, mode: str, world: int
                       ) -> dict[str, float]:
    """Two checkpoints (model + AdamW state) the way the trainer saves them, on one kept saver: seconds each blocks
    training (staging to CPU memory; the first also allocates the pinned copy every later save reuses) and seconds
    the second's write then runs in the background. Local disk, a folder every rank shares."""
    folder = Path(tempfile.gettempdir()) / f"train-throughput-checkpoint-{mode}"
    if dist.get_rank() == 0:
        shutil.rmtree(folder, ignore_errors=True)
    dist.barrier()
    saver = dcp.Saver(dist.get_rank(), world, asynchronous=True)
    blocking = []
    saved = None
    for step in (1, 2):
        started = time.perf_counter()
        saver.start(folder, step, module, optimizer, {"bench": mode})
        blocking.append(time.perf_counter() - started)
        saved = saver.finish()  # as in training, where a write ends long before the next save
    dist.barrier()
    if dist.get_rank() == 0:
        shutil.rmtree(folder, ignore_errors=True)
    return {"checkpoint_first_blocking_s": blocking[0], "checkpoint_blocking_s": blocking[1],
            "checkpoint_background_s": saved.background_seconds if saved else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="gpt-350m")
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--micro-batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=8)
    parser.add_argument("--modes", default="ddp,fsdp")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile (on by default on GPU)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--cpu-smoke-steps", type=int, default=3, help="steps of the tiny model when there is no GPU")
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]

    cuda = torch.cuda.is_available()
    if not cuda:
        print("No CUDA GPU found: tokens/s per GPU and MFU need a GPU, so no benchmark figures were measured.\n"
              "Running a tiny CPU smoke run of the same code path instead (its speed means nothing).", flush=True)
        args.model, args.seq_len, args.micro_batch_size = "tiny", 64, 2
        args.steps, args.warmup = args.cpu_smoke_steps, 1
    rank, world, local_rank = init_group(cuda)
    if cuda:
        torch.cuda.set_device(local_rank)
        torch.backends.cuda.matmul.allow_tf32 = True
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    gpu_name = torch.cuda.get_device_name(device) if cuda else "none (CPU)"
    key = catalog_gpu(gpu_name) if cuda else None
    peak = dense_bf16_tflops().get(key) if key else None

    results = []
    try:
        for mode in modes:
            r = measure(mode, args.model, args.seq_len, args.micro_batch_size, args.steps, args.warmup,
                        not args.no_compile, device, world)
            r["mfu"] = mfu(r["tokens_per_sec_per_gpu"], r["flops_per_token"], peak) if peak else None
            results.append(r)
            if cuda:
                torch.cuda.empty_cache()  # the previous mode's model is garbage now
    finally:
        dist.destroy_process_group()
    if rank != 0:
        return 0
    date = datetime.date.today().isoformat()
    peak_text = (f"dense bf16 peak {peak:g} TFLOP/s (catalog {key})" if peak
                 else "no bf16 peak in the catalog for this GPU: MFU n/a" if cuda else "no GPU: MFU n/a")
    print(f"GPU: {gpu_name} x{world}; {peak_text}; torch {torch.__version__}; {platform.node()}; {date}")
    print(f"{'mode':5} {'model':9} {'params':>8} {'seq':>5} {'mbs':>4} {'compile':>7} "
          f"{'tokens/s/GPU':>13} {'step_ms':>8} {'MFU':>6} {'ckpt_first_s':>12} {'ckpt_block_s':>12} "
          f"{'ckpt_write_s':>12}")
    for r in results:
        mfu_text = f"{100 * r['mfu']:.1f}%" if r["mfu"] is not None else "n/a"
        print(f"{r['mode']:5} {r['model']:9} {r['params'] / 1e6:7.1f}M {r['seq_len']:5} {r['micro_batch_size']:4} "
              f"{r['compile']!s:>7} {r['tokens_per_sec_per_gpu']:13.1f} {r['step_time_ms']:8.1f} {mfu_text:>6} "
              f"{r['checkpoint_first_blocking_s']:12.2f} {r['checkpoint_blocking_s']:12.2f} "
              f"{r['checkpoint_background_s']:12.2f}")
    if args.json:
        args.json.write_text(json.dumps({"gpu": gpu_name, "catalog_gpu": key, "peak_tflops": peak, "date": date,
                                         "torch": torch.__version__, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
