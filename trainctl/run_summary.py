"""A run's summary (the execution's output, written by the state machine) and what it costs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainctl.history import json_or_none


def summary(described: Mapping[str, Any], events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The run's summary: the execution's output; for a failed run, the summary its last states carried."""
    output = json_or_none(described.get("output"))
    if isinstance(output, dict) and "job_name" in output:
        return output
    for event in reversed(events):
        details = event.get("stateExitedEventDetails") or {}
        result = (json_or_none(details.get("output")) or {}).get("result") if details else None
        if isinstance(result, dict) and "job_name" in result and "execution_arn" in result:
            return result
    return None


def cost(run_summary: Mapping[str, Any] | None) -> float | None:
    """The summary's estimate: catalog price per hour x billable seconds (None where either is unknown)."""
    if not run_summary:
        return None
    rate, seconds = run_summary.get("cost_per_hour_usd"), run_summary.get("billable_seconds")
    if not isinstance(rate, int | float) or not isinstance(seconds, int | float):
        return None
    return float(rate) * float(seconds) / 3600
