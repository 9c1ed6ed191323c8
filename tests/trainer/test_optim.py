"""AdamW decays matrices only, and the learning rate is a pure function of the step: warmup, then cosine."""

from __future__ import annotations

import itertools
import random

import pytest
import torch
from gptlm.model import GPT, build_config
from gptlm.optim import BETAS, build_optimizer, lr_schedule, set_lr


def test_weight_decay_applies_to_matrices_only_and_every_parameter_once():
    model = GPT(build_config("tiny", 16))
    optimizer = build_optimizer(model, 3e-4, 0.1, fused=False)
    decayed, plain = optimizer.param_groups
    assert decayed["weight_decay"] == 0.1 and plain["weight_decay"] == 0.0
    assert all(p.dim() >= 2 for p in decayed["params"]) and all(p.dim() < 2 for p in plain["params"])
    ids = [id(p) for group in optimizer.param_groups for p in group["params"]]
    assert sorted(ids) == sorted(id(p) for p in model.parameters())  # the tied embedding/head counted once
    assert len(ids) == len(set(ids))
    assert decayed["betas"] == BETAS and decayed["fused"] is None  # fused is GPU-only; None lets PyTorch pick


def test_frozen_parameters_are_left_out():
    model = GPT(build_config("tiny", 16))
    model.wpe.weight.requires_grad_(False)
    optimizer = build_optimizer(model, 3e-4, 0.1, fused=False)
    assert all(p is not model.wpe.weight for g in optimizer.param_groups for p in g["params"])


def test_warmup_then_cosine_to_the_floor():
    lr_at = lr_schedule(1e-3, warmup=10, max_steps=110, min_ratio=0.1)
    assert lr_at(0) == pytest.approx(1e-4)  # step 0 already trains, at 1/warmup of the peak
    assert lr_at(9) == pytest.approx(1e-3)  # the peak at the end of warmup
    assert lr_at(10) == pytest.approx(1e-3)
    assert lr_at(60) == pytest.approx(1e-3 * (0.1 + 0.9 * 0.5))  # half way down the cosine
    assert lr_at(110) == pytest.approx(1e-4) and lr_at(500) == pytest.approx(1e-4)  # the floor, also past the end
    after = [lr_at(s) for s in range(10, 111)]
    assert all(a >= b for a, b in itertools.pairwise(after))


def test_schedule_needs_no_state():
    """A resumed run computes the rate from the step alone: any order of calls gives the same numbers."""
    steps = list(range(200))
    first = {s: lr_schedule(3e-4, 20, 200, 0.1)(s) for s in steps}
    random.Random(0).shuffle(steps)
    other = lr_schedule(3e-4, 20, 200, 0.1)
    assert {s: other(s) for s in steps} == first


def test_no_warmup():
    assert lr_schedule(1e-3, warmup=0, max_steps=100, min_ratio=0.0)(0) == pytest.approx(1e-3)


def test_set_lr_reaches_every_group():
    optimizer = build_optimizer(GPT(build_config("tiny", 16)), 3e-4, 0.1, fused=False)
    set_lr(optimizer, 1.5e-4)
    assert [g["lr"] for g in optimizer.param_groups] == [1.5e-4, 1.5e-4]
    assert isinstance(optimizer, torch.optim.AdamW)
