"""The held-out split never feeds training and is the same everywhere; each rank reads its own part of a batch."""

from __future__ import annotations

import numpy as np
import pytest
from gptlm.sampling import HELD_OUT_FRACTION, RankSampler, hold_out
from gptlm.shards import DataError


@pytest.mark.parametrize("windows", [2, 3, 99, 100, 101, 5000])
def test_split_is_disjoint_covers_everything_and_leaves_one_of_each(windows):
    split = hold_out(windows, seed=1234)
    train, held = set(split.train.tolist()), set(split.held_out.tolist())
    assert not train & held
    assert train | held == set(range(windows))
    assert len(held) == max(1, int(np.ceil(windows * HELD_OUT_FRACTION))) and len(train) >= 1


def test_split_is_a_pure_function_of_the_data_size_and_seed():
    """Every rank computes it alone, and a resumed run computes it again: it must come out the same."""
    first, again = hold_out(5000, seed=7), hold_out(5000, seed=7)
    assert np.array_equal(first.held_out, again.held_out) and np.array_equal(first.train, again.train)
    assert not np.array_equal(first.held_out, hold_out(5000, seed=8).held_out)
    spread = first.held_out
    assert spread.min() < 1000 and spread.max() > 4000  # chosen from a permutation, not the tail of the data


def test_one_window_cannot_be_split():
    with pytest.raises(DataError, match="held-out validation set"):
        hold_out(1, seed=0)


def test_training_never_reads_a_held_out_window():
    split = hold_out(500, seed=3)
    samplers = [RankSampler(split.train, 8, r, 2, seed=3) for r in range(2)]
    read = {int(i) for s in samplers for step in range(300) for i in s.indices(step)}  # many epochs
    assert read == set(split.train.tolist())


def test_evaluation_reads_the_same_held_out_windows_every_time_spread_over_ranks():
    split = hold_out(2000, seed=5)  # 20 held out
    per_rank, ranks = 4, 2
    batches = [[split.eval_indices(b, r, ranks, per_rank).tolist() for r in range(ranks)] for b in range(3)]
    assert batches == [[split.eval_indices(b, r, ranks, per_rank).tolist() for r in range(ranks)] for b in range(3)]
    flat = [i for batch in batches for part in batch for i in part]
    assert set(flat) <= set(split.held_out.tolist())
    assert len(set(flat[:20])) == 20  # distinct until the held-out set is used up, then it wraps around
    assert flat[20:] == flat[:4]


def test_ranks_read_disjoint_parts_of_each_global_batch():
    world, per_rank = 4, 3
    samplers = [RankSampler(np.arange(1000), per_rank * world, r, world, seed=7) for r in range(world)]
    seen: set[int] = set()
    for step in range(20):
        parts = [set(s.indices(step).tolist()) for s in samplers]
        assert all(len(p) == per_rank for p in parts)
        batch = set().union(*parts)
        assert len(batch) == per_rank * world  # disjoint across ranks
        assert not batch & seen  # no window twice within an epoch (83 steps here)
        seen |= batch


def test_sampling_is_a_pure_function_of_the_step():
    """A resumed run must read exactly what the uninterrupted run would have read."""
    first = RankSampler(np.arange(500), 8, 1, 2, seed=3)
    order = [first.indices(s).tolist() for s in range(200)]  # crosses several epochs
    resumed = RankSampler(np.arange(500), 8, 1, 2, seed=3)
    assert [resumed.indices(s).tolist() for s in range(150, 200)] == order[150:]
    assert order[0] != order[62]  # epoch 1 is reshuffled (62 steps per epoch)


def test_too_little_data_for_one_batch_says_what_to_change():
    with pytest.raises(DataError, match="micro_batch_size"):
        RankSampler(np.arange(10), 16, 0, 2, seed=0)
