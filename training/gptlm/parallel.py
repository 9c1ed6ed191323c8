"""Data parallel (DDP) and sharded data parallel (FSDP2 `fully_shard`) wrapping, plus the GPU fast paths.

Both modes expose the same three things to the training loop: the module to call, a context that
skips gradient synchronisation on non-final gradient-accumulation micro-steps, and an optimizer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from gptlm.errors import UserError
from gptlm.model import GPT, Block

try:  # public since PyTorch 2.6; the composable path has the same API from 2.4
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
except ImportError:  # pragma: no cover - depends on the container's PyTorch
    try:
        from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
    except ImportError:
        fully_shard = None
        MixedPrecisionPolicy = None


class ParallelismError(UserError, RuntimeError):
    """The requested parallelism cannot run in this container."""


def compile_blocks(model: GPT) -> None:
    """Compile each transformer block in place: parameter names stay the same (checkpoints are unaffected)
    and FSDP keeps one all-gather per block, the granularity torch.compile handles best."""
    for block in model.blocks:
        block.compile()


def wrap(model: GPT, mode: str, device: torch.device, distributed: bool, bf16: bool) -> nn.Module:
    """Return the module the training loop calls; it owns the parameters the optimizer must see."""
    if mode == "fsdp":
        if fully_shard is None:
            raise ParallelismError(
                f"parallelism fsdp needs FSDP2 (torch.distributed.fsdp.fully_shard, PyTorch >= 2.4); this "
                f"container has PyTorch {torch.__version__}: use a newer DLC or set parallelism to ddp"
            )
        if not distributed:
            return model  # one process: nothing to shard
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16 else None
        kwargs = {"mp_policy": policy} if policy is not None else {}
        for block in model.blocks:
            fully_shard(block, **kwargs)
        fully_shard(model, **kwargs)  # the root holds embeddings, final norm and the tied head
        return model
    if not distributed:
        return model
    device_ids = [device.index] if device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids, gradient_as_bucket_view=True)


def wrap_smp_v2_fsdp(model: GPT, device: torch.device, bf16: bool) -> nn.Module:
    """Under SMP v2 the model goes through FSDP1, the API whose hybrid sharding SMP v2 extends."""
    from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy

    precision = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16 else None
    return FullyShardedDataParallel(
        model, auto_wrap_policy=ModuleWrapPolicy({Block}), mixed_precision=precision,
        device_id=device, use_orig_params=True,
    )


def no_sync(module: nn.Module, sync: bool) -> contextlib.AbstractContextManager:
    """Skip the gradient all-reduce / reduce-scatter unless this is the last accumulation micro-step."""
    if sync:
        return contextlib.nullcontext()
    if isinstance(module, DistributedDataParallel) or hasattr(module, "no_sync"):
        return module.no_sync()
    if hasattr(module, "set_requires_gradient_sync"):  # FSDP2 module
        return _fsdp2_no_sync(module)
    return contextlib.nullcontext()


@contextlib.contextmanager
def _fsdp2_no_sync(module: nn.Module) -> Iterator[None]:
    module.set_requires_gradient_sync(False)
    try:
        yield
    finally:
        module.set_requires_gradient_sync(True)


def build_optimizer(module: nn.Module, lr: float, weight_decay: float, fused: bool) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (not biases, norms); fused kernel on GPU."""
    decay, no_decay = [], []
    for p in module.parameters():
        if p.requires_grad:
            (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8, fused=fused or None)


def lr_schedule(max_lr: float, warmup: int, max_steps: int, min_ratio: float) -> Callable[[int], float]:
    """Linear warmup, then cosine decay to max_lr * min_ratio at max_steps. A pure function of the step,
    so a resumed run needs no scheduler state."""
    import math

    def lr_at(step: int) -> float:
        if step < warmup:
            return max_lr * (step + 1) / warmup
        span = max(max_steps - warmup, 1)
        progress = min((step - warmup) / span, 1.0)
        return max_lr * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))

    return lr_at
