"""`stall_watchdog:` in a spec: which metric shows progress, how long without it makes a stall, how many relaunches.

The state machine looks in the job's own log streams, on each look at a training job, for a line of the metric
(`compiler/state_machine/watchdog.py`): the metric must be one of the spec's own `metric_definitions`, and its
regex must require some literal text that a CloudWatch Logs filter pattern can look for (`facts/log_patterns.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

from compiler.facts.log_patterns import MIN_TEXT, progress_pattern
from compiler.inputs.model import StallWatchdog
from compiler.inputs.reader import Reader, describe

KEYS = {"metric", "minutes", "max_relaunches"}
MINUTES = (5, 10080)  # five looks at least (each question reaches a minute or two back); a week at most
MAX_RELAUNCHES = (0, 10)


def _metrics(r: Reader) -> dict[str, str]:
    """metric_definitions' names and regexes (their own problems are reported where they are read)."""
    raw = r.raw.get("metric_definitions")
    if not isinstance(raw, list):
        return {}
    return {str(m["Name"]): str(m.get("Regex", "")) for m in raw if isinstance(m, Mapping) and "Name" in m}


def read_stall_watchdog(r: Reader) -> StallWatchdog | None:
    """The watchdog, or None when the spec has none; every problem names its field and the fix."""
    w = r.child("stall_watchdog")
    if w is None:
        return None
    w.unknown_keys(KEYS, hint=f" (stall_watchdog takes {', '.join(sorted(KEYS))})")
    metrics = _metrics(r)
    names = list(metrics)
    metric = w.raw.get("metric")
    if metric is None:
        w.problem("metric", "is required: the name of one of metric_definitions whose lines show progress, "
                            "e.g. train:loss")
    elif not isinstance(metric, str) or metric not in names:
        known = ", ".join(repr(n) for n in names) if names else "none (the spec has no metric_definitions)"
        w.problem("metric", f"{describe(metric)} is not one of metric_definitions' names ({known}); name one of "
                            "them, or add a metric definition {Name, Regex} that matches a line the training "
                            "script logs as it progresses")
    defaults = StallWatchdog(metric="")
    minutes = w.integer("minutes", low=MINUTES[0], high=MINUTES[1], default=defaults.minutes, unit="minutes")
    relaunches = w.integer("max_relaunches", low=MAX_RELAUNCHES[0], high=MAX_RELAUNCHES[1],
                           default=defaults.max_relaunches, unit="relaunches")
    if not isinstance(metric, str) or metric not in names:
        return None
    pattern = progress_pattern(metrics[metric])
    if pattern is None:
        w.problem("metric", f"the Regex of {metric!r} ({metrics[metric]!r}) requires no piece of literal text of "
                            f"{MIN_TEXT} or more characters outside groups, classes and repetitions (and has no "
                            "alternation or case-insensitive flag around it): the watchdog finds the metric's lines in "
                            "the job's log by that text. Start the Regex with the text the line carries before the "
                            "value, e.g. 'train_loss=([0-9.]+)'")
        return None
    return StallWatchdog(metric=metric, minutes=defaults.minutes if minutes is None else minutes,
                         max_relaunches=defaults.max_relaunches if relaunches is None else relaunches,
                         log_pattern=pattern)
