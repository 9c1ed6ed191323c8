"""A run's summary (compiler/facts/summaries.py's `RunSummary`, the execution's output the state machine writes), found
for a run that ended either way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.facts.summaries import RunSummary
from trainctl.run.history import json_or_none


def summary(described: Mapping[str, Any], events: list[dict[str, Any]]) -> RunSummary | None:
    """The run's summary: the execution's output; for a failed run, the summary its last states carried."""
    found = RunSummary.of(json_or_none(described.get("output")))
    if found is not None:
        return found
    for event in reversed(events):
        output = json_or_none((event.get("stateExitedEventDetails") or {}).get("output"))
        found = RunSummary.of(output.get("result")) if isinstance(output, dict) else None
        if found is not None:
            return found
    return None
