"""Data parallel (DDP) and sharded data parallel (FSDP2 `fully_shard`) wrapping, plus the GPU fast paths.

Both modes give the training loop the same two things: the module to call, and a context that skips
gradient synchronisation on the non-final micro-steps of gradient accumulation (one all-reduce or
reduce-scatter per optimizer step instead of one per micro-batch). Used by the native backend and the
throughput benchmark; the SMP backends wrap the model their own way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from gptlm.errors import UserError
from gptlm.model import GPT


class ParallelismError(UserError, RuntimeError):
    """The requested parallelism cannot run in this container."""


def compile_model(model: GPT, mode: str) -> None:
    """Compile in place for `mode`; parameter names stay the same, so checkpoints do not depend on it.

    DDP: the whole model as one graph (per-block compilation cost 9% of throughput at gpt-350m on an H200: graph
    breaks between blocks and no fusion across them). FSDP (and SMP v2's FSDP1): each transformer block, so FSDP
    keeps one all-gather per block, the granularity torch.compile handles best with sharded parameters.
    """
    if mode == "ddp":
        model.compile()
        return
    for block in model.blocks:
        block.compile()


def _fsdp2() -> tuple[Any, Any] | None:
    """(fully_shard, MixedPrecisionPolicy), public since PyTorch 2.6 and under _composable from 2.4; else None."""
    try:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    except ImportError:  # pragma: no cover - depends on the container's PyTorch
        try:
            from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
        except ImportError:
            return None
    return fully_shard, MixedPrecisionPolicy


def wrap(model: GPT, mode: str, device: torch.device, distributed: bool, bf16: bool) -> nn.Module:
    """Return the module the training loop calls; it owns the parameters the optimizer must see."""
    if mode == "fsdp":
        fsdp2 = _fsdp2()
        if fsdp2 is None:
            raise ParallelismError(
                f"parallelism fsdp needs FSDP2 (torch.distributed.fsdp.fully_shard, PyTorch >= 2.4); this "
                f"container has PyTorch {torch.__version__}: use a newer DLC or set parallelism to ddp"
            )
        if not distributed:
            return model  # one process: nothing to shard
        fully_shard, precision_policy = fsdp2
        # bf16 compute with fp32 gradient reduction on GPU; the default policy (no casts) on CPU.
        policy = precision_policy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16 else precision_policy()
        for block in model.blocks:
            fully_shard(block, mp_policy=policy)
        fully_shard(model, mp_policy=policy)  # the root holds embeddings, final norm and the tied head
        return model
    if not distributed:
        return model
    device_ids = [device.index] if device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids, gradient_as_bucket_view=True)


def no_sync(module: nn.Module, sync: bool) -> contextlib.AbstractContextManager:
    """Skip the gradient all-reduce / reduce-scatter unless this is the last accumulation micro-step."""
    if sync:
        return contextlib.nullcontext()
    wrapped: Any = module  # DDP and FSDP1 have no_sync(); FSDP2 modules a sync switch
    if isinstance(module, DistributedDataParallel) or hasattr(module, "no_sync"):
        return wrapped.no_sync()
    if hasattr(module, "set_requires_gradient_sync"):
        return _fsdp2_no_sync(wrapped)
    return contextlib.nullcontext()


@contextlib.contextmanager
def _fsdp2_no_sync(module: Any) -> Iterator[None]:
    module.set_requires_gradient_sync(False)
    try:
        yield
    finally:
        module.set_requires_gradient_sync(True)
