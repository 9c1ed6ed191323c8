"""From a metric's regular expression to a CloudWatch Logs filter pattern that finds the lines it matches.

The stall watchdog looks for a job's progress in the job's own log streams (FilterLogEvents, `compiler/state_machine
/watchdog.py`), where the spec names its progress as a metric: `metric_definitions` regexes are Python-style and
SageMaker reads them from the same log lines. CloudWatch Logs takes a regex subset in a filter pattern, written
between `%` signs ("Supported regular expressions (regex) syntax", CloudWatch Logs user guide): letters, digits, the
symbols `: _ # = @ / ; , -` and the operators `^ $ ? [ ] { } | \\ * + .`; no parentheses, no multi-byte characters;
`%AUTHORIZED%` finds lines that contain the text anywhere.

So the pattern is the longest piece of literal text the metric's regex requires of every line it matches (outside
groups, classes and repetitions, with no alternation around it), each character the subset lacks written as `.`
(any character) and a literal `.` escaped. Every line the metric matches matches the pattern; a line that carries
the text but no value matches too, which only makes the watchdog more patient.
"""

from __future__ import annotations

import re

SYMBOLS = frozenset(":_#=@/;,-")  # the symbol characters the regex subset takes as themselves
MIN_TEXT = 3  # characters of real text (not wildcards) a pattern needs, or it would match nearly any line
MAX_TEXT = 200
_QUANTIFIER = re.compile(r"[*+?]|\{\d*(,\d*)?\}")
_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")


def _skip_class(regex: str, i: int) -> int:
    """The index after the character class that starts at `regex[i] == '['`."""
    j = i + 1
    if regex[j:j + 1] == "^":
        j += 1
    if regex[j:j + 1] == "]":
        j += 1
    while j < len(regex) and regex[j] != "]":
        j += 2 if regex[j] == "\\" else 1
    return j + 1


def _literal_at(regex: str, i: int) -> tuple[str | None, int, bool]:
    """(the literal character at `i` or None, the next index, whether the current run must end here)."""
    c = regex[i]
    if c == "\\":
        escaped = regex[i + 1:i + 2]
        if not escaped or escaped.isalnum():  # \d \w \s \b, back references, \A \Z: no literal text
            return None, i + 2, True
        return escaped, i + 2, False
    if c == "[":
        return None, _skip_class(regex, i), True
    if c in "().^$|":
        return None, i + 1, True
    quantifier = _QUANTIFIER.match(regex, i)
    if quantifier:
        return None, quantifier.end(), True
    return c, i + 1, False


def literal_runs(regex: str) -> list[str] | None:
    """The pieces of text every match of `regex` contains, in order; None when the regex has an alternation outside
    any group (no piece is then required), matches without regard to case or is written in verbose mode."""
    flags = _FLAGS.match(regex)
    if flags and {"i", "x"} & set(flags.group(1)):
        return None
    runs: list[str] = []
    current = ""
    depth = 0
    i = flags.end() if flags else 0
    while i < len(regex):
        c = regex[i]
        if c == "|" and depth == 0:
            return None
        depth += {"(": 1, ")": -1}.get(c, 0)
        literal, following, ends = _literal_at(regex, i)
        quantified = _QUANTIFIER.match(regex, following) is not None
        if literal is not None and depth == 0 and not quantified and literal.isascii():
            current += literal
        elif literal is not None or ends:
            runs.append(current)
            current = ""
        i = following
    runs.append(current)
    return [r for r in runs if r]


def _pattern_tokens(run: str) -> list[str]:
    """A run in the filter-pattern subset, one token a character: `.` escaped, each character the subset lacks as
    `.` (any character); wildcards at either end dropped (they require nothing)."""
    tokens = [c if c.isalnum() or c in SYMBOLS else "\\." if c == "." else "." for c in run]
    while tokens and tokens[0] == ".":
        tokens.pop(0)
    while tokens and tokens[-1] == ".":
        tokens.pop()
    return tokens


def progress_pattern(regex: str) -> str | None:
    """The filter pattern (`%...%`) that finds every log line `regex` matches; None when no piece of literal text of
    MIN_TEXT characters is required of every match."""
    runs = literal_runs(regex)
    if not runs:
        return None
    candidates = [_pattern_tokens(run[:MAX_TEXT]) for run in runs]
    best = max(candidates, key=lambda tokens: sum(t != "." for t in tokens))
    if sum(t != "." for t in best) < MIN_TEXT:
        return None
    return "%" + "".join(best) + "%"
