"""The model presets have the sizes the workloads promise, and the network is a causal language model."""

from __future__ import annotations

import math

import pytest
import torch
from gptlm.model import GPT, PRESETS, build_config, count_parameters, flops_per_token


@pytest.mark.parametrize("name", list(PRESETS))
def test_parameter_count_matches_the_real_module(name):
    cfg = build_config(name, 128)
    with torch.device("meta"):
        model = GPT(cfg)
    assert count_parameters(cfg) == sum(p.numel() for p in model.parameters())


def test_reference_model_has_at_least_350m_parameters():
    assert count_parameters(build_config("gpt-350m", 1024)) >= 350_000_000


def test_flops_per_token_follows_the_palm_formula():
    cfg = build_config("gpt-350m", 1024)
    with torch.device("meta"):
        model = GPT(cfg)
    non_embedding_positions = sum(p.numel() for n, p in model.named_parameters() if not n.startswith("wpe"))
    assert flops_per_token(cfg) == 6 * non_embedding_positions + 12 * 24 * 1024 * 1024


def test_future_tokens_do_not_change_earlier_predictions():
    torch.manual_seed(0)
    model = GPT(build_config("tiny", 16)).eval()
    a = torch.randint(0, 256, (1, 16))
    b = a.clone()
    b[0, 10:] = (b[0, 10:] + 1) % 256
    with torch.no_grad():
        la, lb = model(a), model(b)
    torch.testing.assert_close(la[0, :10], lb[0, :10])
    assert not torch.allclose(la[0, 10:], lb[0, 10:])


def test_initial_loss_is_near_uniform():
    torch.manual_seed(0)
    model = GPT(build_config("tiny", 32))
    x = torch.randint(0, 256, (4, 33))
    loss = model(x[:, :-1], x[:, 1:])
    assert abs(loss.item() - math.log(256)) < 0.3


def test_sequence_longer_than_the_model_is_refused():
    model = GPT(build_config("tiny", 8))
    with pytest.raises(ValueError, match="max_seq_len"):
        model(torch.zeros(1, 9, dtype=torch.long))
