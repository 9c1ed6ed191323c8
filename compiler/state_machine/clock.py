"""A state's entry time as the epoch milliseconds CloudWatch Logs takes, with intrinsic functions only.

The stall watchdog asks FilterLogEvents for the job's progress lines since a moment of the run (`watchdog`), and
FilterLogEvents takes that moment as `startTime`, milliseconds since 1970-01-01 UTC. Step Functions has the moment
only as text: the Context object's `$$.State.EnteredTime`, ISO 8601 in UTC (`2019-03-26T20:14:13.192Z` in the
developer guide's "Accessing the Context object"), and JSONPath states have no date arithmetic and no multiplication
("Intrinsic functions for JSONPath states": `States.MathAdd` adds two integers). So the text is split at its
separators (`States.StringSplit` splits at each of the characters it is given, as the guide's `".+,="` example
shows), each field becomes an index into a table of precomputed products (`States.StringToJson` of the field with
a leading `1`, since JSON refuses a number written `08`), and the products are added.

The sum is kept in units of 10 seconds (six per minute) and written out with four zeros (`States.Format`), then read
back as a number (`States.StringToJson`): every `States.MathAdd` operand stays below 2**31 (the largest, 6 x the
minutes to 2125-01-01, is about 4.5e8), so no 32-bit limit of the service can bite, whatever it is.

The result is the start of the minute before the one the state was entered in: a window that starts there takes
in every line written during the last minute at least, which also covers log lines that reach CloudWatch Logs a
little after their own timestamp. Years 2025 to 2125 are in the tables; a year outside them fails the state
(`States.ArrayGetItem` out of range).

`window_start_parameters` writes the tables' lookups as a Pass state's parameters; `start_time` reads the result in
a Task's parameters. `TABLES` goes into the run's data once (`$.defaults.clock`), not into each expression.
"""

from __future__ import annotations

import calendar
from typing import Any

FIRST_YEAR = 2025
LAST_YEAR = 2125
SEPARATORS = "-T:.Z"  # 2026-11-28T10:15:30.123Z -> 2026, 11, 28, 10, 15, 30, 123
TICKS_PER_MINUTE = 6  # the sum's unit: 10 seconds
MARGIN_MINUTES = 1  # the window opens this long before the minute the state was entered in


def _minutes_to_year(year: int) -> int:
    days = sum(366 if calendar.isleap(y) else 365 for y in range(1970, year))
    return days * 1440


def _month_starts(leap: bool) -> list[int]:
    """Minutes from January 1st to the first of each month."""
    lengths = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return [sum(lengths[:m]) * 1440 for m in range(12)]


def tables() -> dict[str, list[int]]:
    """The lookup tables, each in 10-second units: years from FIRST_YEAR, months (12 of a common year, then 12 of a
    leap year), days of the month from the 1st, hours, minutes; `leap` is 12 for a leap year (the offset into the
    months), else 0."""
    years = range(FIRST_YEAR, LAST_YEAR + 1)
    return {
        "year": [TICKS_PER_MINUTE * _minutes_to_year(y) for y in years],
        "leap": [12 if calendar.isleap(y) else 0 for y in years],
        "month": [TICKS_PER_MINUTE * m for m in (*_month_starts(False), *_month_starts(True))],
        "day": [TICKS_PER_MINUTE * 1440 * d for d in range(31)],
        "hour": [TICKS_PER_MINUTE * 60 * h for h in range(24)],
        "minute": [TICKS_PER_MINUTE * m for m in range(60)],
    }


def _field(parts: str, index: int, offset: int) -> str:
    """Field `index` of the split text as a number minus `offset`, read with a leading 1 (`08` is no JSON number)."""
    return f"States.MathAdd(States.StringToJson(States.Format('1{{}}', States.ArrayGetItem({parts}, {index}))), {-offset})"


def window_start_parameters(parts: str, tables_path: str) -> str:
    """The intrinsic expression (at most 9 functions deep) for the window's start in 10-second units, from `parts`:
    the entry time split at SEPARATORS (year, month, day, hour, minute, ...)."""
    year_index = f"States.MathAdd(States.StringToJson(States.ArrayGetItem({parts}, 0)), {-FIRST_YEAR})"
    year = f"States.ArrayGetItem({tables_path}.year, {year_index})"
    month = (f"States.ArrayGetItem({tables_path}.month, States.MathAdd({_field(parts, 1, 101)}, "
             f"States.ArrayGetItem({tables_path}.leap, {year_index})))")
    day = f"States.ArrayGetItem({tables_path}.day, {_field(parts, 2, 101)})"
    hour = f"States.ArrayGetItem({tables_path}.hour, {_field(parts, 3, 100)})"
    minute = f"States.ArrayGetItem({tables_path}.minute, {_field(parts, 4, 100)})"
    margin = -TICKS_PER_MINUTE * MARGIN_MINUTES
    return (f"States.MathAdd(States.MathAdd({year}, {month}), "
            f"States.MathAdd({day}, States.MathAdd({hour}, States.MathAdd({minute}, {margin}))))")


def split(entered_time: str = "$$.State.EnteredTime") -> str:
    """The entry time's fields: year, month, day, hour, minute, second, fraction (where the text has one)."""
    return f"States.StringSplit({entered_time}, '{SEPARATORS}')"


def start_time(ticks: str) -> str:
    """Epoch milliseconds from a count of 10-second units: the count's digits followed by four zeros."""
    return f"States.StringToJson(States.Format('{{}}0000', {ticks}))"


def defaults() -> dict[str, Any]:
    """The tables as run data (`$.defaults.clock`)."""
    return dict(tables())
