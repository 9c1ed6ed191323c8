"""How long a run took, as the commands print it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any


def duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def elapsed(described: Mapping[str, Any], now: datetime) -> float:
    start: datetime = described["startDate"]
    stop: datetime = described.get("stopDate") or now
    return (stop - start).total_seconds()
