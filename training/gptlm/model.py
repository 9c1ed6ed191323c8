"""A GPT-2 style decoder-only language model, sized by named presets.

Pre-LayerNorm blocks, learned position embeddings, tied input/output embeddings, GELU MLP and
`scaled_dot_product_attention` with `is_causal=True`, which dispatches to the flash / memory-efficient
kernels on GPU. Each `Block` is the unit FSDP shards, so it stays a plain `nn.Module` with no
cross-block state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class ModelConfig:
    """Shape of the network. `vocab_size` is padded to a multiple of 64 for tensor-core friendly matmuls."""

    n_layer: int
    n_head: int
    d_model: int
    vocab_size: int = 50304  # GPT-2's 50257 tokens, padded to a multiple of 64
    max_seq_len: int = 1024

    def __post_init__(self) -> None:
        if self.d_model % self.n_head:
            raise ValueError(f"d_model {self.d_model} is not divisible by n_head {self.n_head}")


# Presets the workloads name in the `model` hyperparameter. GPT-2 small/medium/XL shapes.
PRESETS: dict[str, ModelConfig] = {
    "tiny": ModelConfig(n_layer=2, n_head=2, d_model=64, vocab_size=256),
    "gpt-125m": ModelConfig(n_layer=12, n_head=12, d_model=768),
    "gpt-350m": ModelConfig(n_layer=24, n_head=16, d_model=1024),
    "gpt-1.3b": ModelConfig(n_layer=24, n_head=32, d_model=2048),
}


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        # (B, T, C) -> (B, H, T, C/H): the layout SDPA's flash kernel expects.
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, 4 * cfg.d_model)
        self.proj = nn.Linear(4 * cfg.d_model, cfg.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.d_model)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """Returns the mean cross-entropy loss when given targets, else the logits."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = nn.Embedding(cfg.max_seq_len, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied: one matrix, counted once
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """GPT-2 initialisation; residual projections scaled by 1/sqrt(2 * n_layer) to keep activations bounded."""
        for name, p in self.named_parameters():
            if p.dim() < 2:
                nn.init.zeros_(p) if name.endswith("bias") else nn.init.ones_(p)
            else:
                std = 0.02 / math.sqrt(2 * self.cfg.n_layer) if name.endswith("proj.weight") else 0.02
                nn.init.normal_(p, mean=0.0, std=std)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        t = idx.shape[1]
        if t > self.cfg.max_seq_len:
            raise ValueError(f"sequence of {t} tokens exceeds the model's max_seq_len {self.cfg.max_seq_len}")
        pos = torch.arange(t, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), targets.reshape(-1))


def build_config(preset: str, seq_len: int, vocab_size: int | None = None) -> ModelConfig:
    """The preset's shape with the run's sequence length (and optionally a different vocabulary)."""
    base = PRESETS[preset]
    return ModelConfig(
        n_layer=base.n_layer, n_head=base.n_head, d_model=base.d_model,
        vocab_size=vocab_size or base.vocab_size, max_seq_len=seq_len,
    )


def count_parameters(cfg: ModelConfig) -> int:
    """Exact trainable parameter count (tied embedding counted once), without allocating the model."""
    d, layers = cfg.d_model, cfg.n_layer
    per_block = 2 * (2 * d) + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d)
    return cfg.vocab_size * d + cfg.max_seq_len * d + layers * per_block + 2 * d


def flops_per_token(cfg: ModelConfig) -> float:
    """Training FLOPs per token: 6 * N (N without position embeddings) + 12 * L * d * T for attention.

    This is the PaLM appendix-B convention (forward + backward, matmuls only, full attention matrix
    counted even though the causal kernel skips half of it), so MFU figures compare with published ones.
    """
    n = count_parameters(cfg) - cfg.max_seq_len * cfg.d_model
    return 6.0 * n + 12.0 * cfg.n_layer * cfg.d_model * cfg.max_seq_len
