"""Which token windows each rank reads: the held-out split, the training batches and the evaluation batches.

Everything here is a pure function of (number of windows, seed, step, rank), so every rank computes the
same split without talking to the others, and a job that resumes at step s reads exactly the batches the
uninterrupted run would have read (same world size), with no loader state to checkpoint.

- The held-out split takes a fixed fraction of the windows (at least one) from a seeded permutation of
  their own, independent of `eval_every`: turning evaluation on or off, or resuming, never moves a window
  between the two sides, so a validation loss is never measured on windows the model trained on.
- Training: the global batch for step s is a fixed slice of a per-epoch seeded permutation of the
  training windows, and each data-parallel rank reads its own disjoint part of it.
- Evaluation: the same held-out windows at every evaluation (so successive values compare), spread over
  the ranks, wrapping around when the held-out set is smaller than what the evaluation reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gptlm.shards import DataError

HELD_OUT_FRACTION = 0.01
_HELD_OUT_STREAM = 0x484F4C44  # "HOLD": keeps the split's permutation apart from the per-epoch ones


@dataclass(frozen=True)
class HeldOutSplit:
    """Window indices on each side, each sorted: `train` feeds the optimizer, `held_out` only the evaluation."""

    train: np.ndarray
    held_out: np.ndarray

    def eval_indices(self, batch: int, dp_rank: int, dp_size: int, per_rank: int) -> np.ndarray:
        """Held-out windows this rank evaluates in evaluation batch `batch` (0-based); same on every call."""
        start = (batch * dp_size + dp_rank) * per_rank
        positions = np.arange(start, start + per_rank) % len(self.held_out)
        return self.held_out[positions]


def hold_out(num_windows: int, seed: int, fraction: float = HELD_OUT_FRACTION) -> HeldOutSplit:
    """Set aside ceil(fraction * windows), at least one, for evaluation; at least one is left to train on."""
    if num_windows < 2:
        raise DataError(f"the data has {num_windows} window of seq_len + 1 tokens, but training needs one and the "
                        "held-out validation set another; use more data or a smaller seq_len")
    count = min(max(math.ceil(num_windows * fraction), 1), num_windows - 1)
    perm = np.random.default_rng([_HELD_OUT_STREAM, seed]).permutation(num_windows)
    return HeldOutSplit(train=np.sort(perm[count:]), held_out=np.sort(perm[:count]))


class RankSampler:
    """Which windows of `pool` rank `rank` reads at each step: a disjoint slice of that step's global batch."""

    def __init__(self, pool: np.ndarray, global_batch: int, rank: int, world_size: int, seed: int):
        if global_batch % world_size:
            raise ValueError("global batch must be divisible by world size")
        if global_batch > len(pool):
            raise DataError(f"one global batch needs {global_batch} windows but the data has {len(pool)} to train on "
                            "(after holding out the validation windows); use more data or lower micro_batch_size / "
                            "grad_accum_steps / seq_len")
        self.pool = np.asarray(pool)
        self.global_batch = global_batch
        self.per_rank = global_batch // world_size
        self.rank = rank
        self.seed = seed
        self.steps_per_epoch = len(self.pool) // global_batch  # the tail of each epoch's permutation is dropped
        self._epoch = -1
        self._perm = np.empty(0, dtype=np.int64)

    def indices(self, step: int) -> np.ndarray:
        """Window indices for this rank at global step `step` (0-based); same answer on every call."""
        epoch, pos = divmod(step, self.steps_per_epoch)
        if epoch != self._epoch:
            self._perm = np.random.default_rng([self.seed, epoch]).permutation(len(self.pool))
            self._epoch = epoch
        start = pos * self.global_batch + self.rank * self.per_rank
        return self.pool[self._perm[start:start + self.per_rank]]
