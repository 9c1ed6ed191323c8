"""Log lines that the workloads' `metric_definitions` regexes turn into CloudWatch metrics.

Rank 0 prints two kinds of line:
    step=120 train_loss=3.4521 tokens_per_sec=123456.7 step_time_ms=250.1 lr=3.000e-04 grad_norm=0.812
    step=500 val_loss=3.6012
The regexes are `train_loss=([0-9.]+)`, `val_loss=([0-9.]+)`, `tokens_per_sec=([0-9.]+)` and
`step_time_ms=([0-9.]+)`. Values are printed in plain decimal (never `1e+05`), and no field name ends in
another one (which is why the training loss is `train_loss=`, not `loss=`: a `loss=` regex would also
match inside `val_loss=`), so each regex captures exactly its own number, and only on its own line.
"""

from __future__ import annotations

import math
import time


def step_line(step: int, train_loss: float, tokens_per_sec: float, step_time_ms: float, lr: float,
              grad_norm: float | None = None) -> str:
    """The training line: mean loss since the last line, throughput, and the optimizer's state."""
    parts = [
        f"step={step}",
        f"train_loss={_plain(train_loss, 4)}",
        f"tokens_per_sec={_plain(tokens_per_sec, 1)}",
        f"step_time_ms={_plain(step_time_ms, 1)}",
        f"lr={lr:.3e}",
    ]
    if grad_norm is not None:
        parts.append(f"grad_norm={_plain(grad_norm, 3)}")
    return " ".join(parts)


def eval_line(step: int, val_loss: float) -> str:
    """The validation line: mean loss over the held-out batches, on a line of its own."""
    return f"step={step} val_loss={_plain(val_loss, 4)}"


def _plain(value: float, digits: int) -> str:
    """Fixed-point text; NaN/inf print as words so a diverged run does not emit a bogus metric point."""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.{digits}f}"


class Interval:
    """Wall time and work done since the last log line."""

    def __init__(self) -> None:
        self._restart()

    def _restart(self) -> None:
        self.start = time.perf_counter()
        self.steps = 0
        self.tokens = 0

    def add(self, steps: int, tokens: int) -> None:
        self.steps += steps
        self.tokens += tokens

    def exclude(self, seconds: float) -> None:
        """Leave time spent outside training (a checkpoint save, an evaluation) out of the rates."""
        self.start += seconds

    def rates(self) -> tuple[float, float]:
        """(tokens per second, milliseconds per step) over the interval; then restart it."""
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        result = (self.tokens / elapsed, 1000.0 * elapsed / max(self.steps, 1))
        self._restart()
        return result
