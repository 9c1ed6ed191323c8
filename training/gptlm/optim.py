"""The optimizer and the learning-rate schedule, the same for every backend.

AdamW decays matrices only: decaying biases and LayerNorm gains pulls them towards zero for no benefit
(GPT-2/3 practice). The schedule is a pure function of the step, so a resumed run needs no scheduler state
in its checkpoint and lands on exactly the learning rate the uninterrupted run would have used.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

BETAS = (0.9, 0.95)
EPS = 1e-8


def build_optimizer(module: nn.Module, lr: float, weight_decay: float, fused: bool) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices (dim >= 2) only; the fused kernel on GPU (one launch per step)."""
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for p in module.parameters():  # a tied parameter is yielded once, so it lands in one group
        if p.requires_grad:
            (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=BETAS, eps=EPS, fused=fused or None)


def lr_schedule(max_lr: float, warmup: int, max_steps: int, min_ratio: float) -> Callable[[int], float]:
    """Linear warmup to max_lr over `warmup` steps, then cosine decay to max_lr * min_ratio at max_steps."""

    def lr_at(step: int) -> float:
        if step < warmup:
            return max_lr * (step + 1) / warmup
        span = max(max_steps - warmup, 1)
        progress = min((step - warmup) / span, 1.0)
        return max_lr * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))

    return lr_at


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """Apply this step's learning rate to every parameter group (the schedule owns it, not the optimizer)."""
    for group in optimizer.param_groups:
        group["lr"] = lr
