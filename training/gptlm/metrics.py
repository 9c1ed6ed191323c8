"""Log lines that the workloads' `metric_definitions` regexes turn into CloudWatch metrics.

The regexes are `loss=([0-9.]+)`, `tokens_per_sec=([0-9.]+)` and `step_time_ms=([0-9.]+)`: values are
printed in plain decimal (never `1e+05`), and no other field name ends in one of those keys (a
`val_loss=` field would also match `loss=`), so each regex captures exactly its own number.
"""

from __future__ import annotations

import math
import time


def step_line(step: int, loss: float, tokens_per_sec: float, step_time_ms: float, lr: float,
              grad_norm: float | None = None) -> str:
    parts = [
        f"step={step}",
        f"loss={_plain(loss, 4)}",
        f"tokens_per_sec={_plain(tokens_per_sec, 1)}",
        f"step_time_ms={_plain(step_time_ms, 1)}",
        f"lr={lr:.3e}",
    ]
    if grad_norm is not None:
        parts.append(f"grad_norm={_plain(grad_norm, 3)}")
    return " ".join(parts)


def _plain(value: float, digits: int) -> str:
    """Fixed-point text; NaN/inf print as words so a diverged run does not emit a bogus metric point."""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.{digits}f}"


class Interval:
    """Wall time and work done since the last log line."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.steps = 0
        self.tokens = 0

    def add(self, steps: int, tokens: int) -> None:
        self.steps += steps
        self.tokens += tokens

    def exclude(self, seconds: float) -> None:
        """Leave time spent outside training (a checkpoint save) out of the rates."""
        self.start += seconds

    def rates(self) -> tuple[float, float]:
        """(tokens per second, milliseconds per step) over the interval; then restart it."""
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        result = (self.tokens / elapsed, 1000.0 * elapsed / max(self.steps, 1))
        self.__init__()
        return result
