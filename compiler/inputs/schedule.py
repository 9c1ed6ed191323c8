"""`schedule:` in a spec, read and checked as EventBridge Scheduler checks it (what it may cost: compiler.compilation.schedules).

A schedule EventBridge Scheduler refuses fails the workload stack's deploy (CreateSchedule), so validate refuses it
first, naming the field and the fix. The formats are the documented ones ("Schedule types in EventBridge
Scheduler", and EventBridge's cron and rate references): `rate(value unit)` with a positive whole value and the unit
minute/hour/day for 1, minutes/hours/days above; `cron(...)` with six fields (minutes, hours, day-of-month, month,
day-of-week, year), `?` in exactly one of the two day fields. Lengths come from botocore's `scheduler` model
(ScheduleExpression, ScheduleExpressionTimezone); time zones are IANA names, checked against Python's zoneinfo.
"""

from __future__ import annotations

import calendar
import functools
import json
import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from compiler.inputs.model import Schedule
from compiler.inputs.reader import Reader, describe, suggest

KEY = "schedule"
_KEYS = {"expression", "timezone", "environments", "input"}
MONTH_NAMES = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")  # 1-7 in cron's day-of-week
RATE_UNITS = {"minute": 60, "hour": 3600, "day": 86400}
HOURS_IN_LONGEST_MONTH = 31 * 24
INPUT_MAX_BYTES = 256 * 1024  # Target.Input: "The maximum size of the Input field is 256 KB" (scheduler model)
_EXAMPLES = "e.g. cron(0 2 * * ? *) for 02:00 every day, or rate(1 day)"


class ScheduleError(ValueError):
    """An expression EventBridge Scheduler would refuse; the message says what to write instead."""


@dataclass(frozen=True)
class Field:
    name: str
    low: int
    high: int
    specials: str  # the wildcards the service documents for the field, besides digits
    names: tuple[str, ...] = ()


FIELDS = (Field("minutes", 0, 59, ",-*/"), Field("hours", 0, 23, ",-*/"), Field("day-of-month", 1, 31, ",-*?/LW"),
          Field("month", 1, 12, ",-*/", MONTH_NAMES), Field("day-of-week", 1, 7, ",-*?L#", DAY_NAMES),
          Field("year", 1970, 2199, ",-*/"))


@dataclass(frozen=True)
class Cron:
    """A parsed cron expression: the values of each field; `None` day fields are `?`."""

    minutes: frozenset[int]
    hours: frozenset[int]
    months: frozenset[int]
    years: frozenset[int]
    days: frozenset[int] | None  # day-of-month values
    last_day: bool = False  # L in day-of-month
    nearest_weekdays: frozenset[int] = frozenset()  # nW in day-of-month
    weekdays: frozenset[int] | None = None  # day-of-week values, 1 = Sunday
    last_weekdays: frozenset[int] = frozenset()  # nL: the month's last such weekday
    nth_weekday: tuple[int, int] | None = None  # d#n: the n-th such weekday of the month

    def on(self, day: date) -> bool:
        """Whether the expression fires on this (local) date at all."""
        if day.month not in self.months or day.year not in self.years:
            return False
        if self.days is not None:
            return self._day_of_month(day)
        return self._day_of_week(day)

    def _day_of_month(self, day: date) -> bool:
        last = calendar.monthrange(day.year, day.month)[1]
        return (day.day in (self.days or ()) or (self.last_day and day.day == last)
                or any(_nearest_weekday(day.year, day.month, n) == day.day for n in self.nearest_weekdays))

    def _day_of_week(self, day: date) -> bool:
        weekday = (day.weekday() + 1) % 7 + 1  # Python: Monday 0; cron: Sunday 1
        if weekday in (self.weekdays or ()):
            return True
        if weekday in self.last_weekdays and (day + timedelta(days=7)).month != day.month:
            return True
        return self.nth_weekday == (weekday, (day.day - 1) // 7 + 1)

    def times(self) -> list[tuple[int, int]]:
        return sorted((h, m) for h in self.hours for m in self.minutes)


def _nearest_weekday(year: int, month: int, n: int) -> int | None:
    """nW: the weekday nearest the n-th, never leaving the month (Quartz's rule, which EventBridge documents)."""
    last = calendar.monthrange(year, month)[1]
    if n > last:
        return None
    weekday = date(year, month, n).weekday()
    if weekday < 5:
        return n
    if weekday == 5:  # Saturday: the Friday before, or Monday the 3rd for the 1st
        return n - 1 if n > 1 else n + 2
    return n + 1 if n < last else n - 2  # Sunday: the Monday after, or the Friday before at the month's end


# ------------------------------------------------------------------------------------------------- parsing


def _value(text: str, f: Field) -> int:
    upper = text.upper()
    if upper in f.names:
        return f.names.index(upper) + 1
    if not text.isdigit():
        named = f" or {f.names[0]}-{f.names[-1]}" if f.names else ""
        raise ScheduleError(f"{f.name} takes {f.low}-{f.high}{named}, not {text!r}")
    value = int(text)
    if not f.low <= value <= f.high:
        raise ScheduleError(f"{f.name} takes {f.low}-{f.high}, not {value}")
    return value


def _range(item: str, f: Field) -> set[int]:
    """One comma-separated item of a plain field: *, a, a-b, with an optional /step."""
    base, slash, step_text = item.partition("/")
    if slash and "/" not in f.specials:
        raise ScheduleError(f"{f.name} takes no '/' (EventBridge allows steps in minutes, hours, day-of-month, month "
                            "and year only)")
    step = 1
    if slash:
        if not step_text.isdigit() or int(step_text) < 1:
            raise ScheduleError(f"{f.name}: the step after '/' must be a whole number from 1, not {step_text!r}")
        step = int(step_text)
    if base == "*":
        low, high = f.low, f.high
    elif "-" in base:
        start, _, end = base.partition("-")
        low, high = _value(start, f), _value(end, f)
        if low > high:
            raise ScheduleError(f"{f.name}: the range {base} runs backwards; write it low to high (split a range that "
                                "wraps around into two, joined by a comma)")
    else:
        low = _value(base, f)
        high = f.high if slash else low
    return set(range(low, high + 1, step))


def _plain(text: str, f: Field) -> frozenset[int]:
    if "?" in text:
        raise ScheduleError(f"{f.name} takes no '?' (only day-of-month and day-of-week do)")
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise ScheduleError(f"{f.name}: an empty item between commas in {text!r}")
        values |= _range(item, f)
    return frozenset(values)


def _day_of_month(text: str, f: Field) -> dict[str, Any]:
    days: set[int] = set()
    last, nearest = False, set()
    for item in text.split(","):
        if item == "L":
            last = True
        elif item.endswith("W") and item[:-1].isdigit():
            nearest.add(_value(item[:-1], f))
        elif "L" in item or "W" in item or "#" in item:
            raise ScheduleError(f"day-of-month: {item!r}; write L for the month's last day or nW (e.g. 15W) for the "
                                "weekday nearest a day")
        else:
            days |= _plain(item, f)
    return {"days": frozenset(days), "last_day": last, "nearest_weekdays": frozenset(nearest)}


def _day_of_week(text: str, f: Field) -> dict[str, Any]:
    if "#" in text:
        if "," in text:
            raise ScheduleError("day-of-week: with '#' the field holds one expression only (3#1,6#3 is two)")
        day, _, nth = text.partition("#")
        if not nth.isdigit() or not 1 <= int(nth) <= 5:
            raise ScheduleError(f"day-of-week: in {text!r} the number after '#' is the week of the month, 1-5")
        return {"weekdays": frozenset(), "nth_weekday": (_value(day, f), int(nth))}
    weekdays: set[int] = set()
    last: set[int] = set()
    for item in text.split(","):
        if item == "L":
            weekdays.add(7)  # the week's last day: Saturday
        elif item.endswith("L"):
            last.add(_value(item[:-1], f))
        else:
            weekdays |= _plain(item, f)
    return {"weekdays": frozenset(weekdays), "last_weekdays": frozenset(last)}


def _check_characters(fields: list[str]) -> None:
    for text, f in zip(fields, FIELDS, strict=True):
        letters = set(re.sub(r"[0-9]", "", text.upper()))
        for name in f.names:
            letters -= set(name) if name in text.upper() else set()
        odd = sorted(letters - set(f.specials))
        if odd:
            raise ScheduleError(f"{f.name} ({text!r}) takes digits{', names' if f.names else ''} and "
                                f"{' '.join(f.specials)} only, not {' '.join(odd)}")


def parse_cron(body: str) -> Cron:
    """The six fields of `cron(...)`, or ScheduleError naming the field and the fix."""
    fields = body.split()
    if len(fields) != 6:
        hint = " (a Unix cron has 5: add the year, usually *, and ? in day-of-month or day-of-week)" \
            if len(fields) == 5 else ""
        raise ScheduleError(f"cron takes 6 fields (minutes hours day-of-month month day-of-week year), not "
                            f"{len(fields)}{hint}; {_EXAMPLES}")
    _check_characters(fields)
    dom, dow = fields[2], fields[4]
    if any("?" in text and text != "?" for text in (dom, dow)):
        raise ScheduleError("? stands alone in its field: write ? or the days, not both")
    if (dom == "?") == (dow == "?"):
        raise ScheduleError("write ? in exactly one of day-of-month and day-of-week (EventBridge takes days from one "
                            f"of them), e.g. cron(0 2 * * ? *) or cron(0 2 ? * MON-FRI *); found {dom!r} and {dow!r}")
    days = {"days": None} if dom == "?" else _day_of_month(dom, FIELDS[2])
    weekdays = {} if dow == "?" else _day_of_week(dow, FIELDS[4])
    return Cron(minutes=_plain(fields[0], FIELDS[0]), hours=_plain(fields[1], FIELDS[1]),
                months=_plain(fields[3], FIELDS[3]), years=_plain(fields[5], FIELDS[5]), **days, **weekdays)


def parse_rate(body: str) -> int:
    """The interval of `rate(value unit)` in seconds, or ScheduleError."""
    parts = body.split(" ")
    if len(parts) != 2 or not parts[0].isdigit():
        raise ScheduleError(f"rate takes a whole number and a unit separated by one space, e.g. rate(5 minutes), not "
                            f"rate({body})")
    value, unit = int(parts[0]), parts[1]
    if value < 1:
        raise ScheduleError("rate's value must be a positive whole number")
    singular = unit.removesuffix("s")
    if singular not in RATE_UNITS:
        raise ScheduleError(f"rate's unit is minute(s), hour(s) or day(s), not {unit!r}")
    if value == 1 and unit != singular:
        raise ScheduleError(f"write rate(1 {singular}): EventBridge takes the singular unit for 1")
    if value > 1 and unit == singular:
        raise ScheduleError(f"write rate({value} {singular}s): EventBridge takes the plural unit above 1")
    return value * RATE_UNITS[singular]


def parse_expression(expression: str) -> Cron | int:
    """A Cron, or a rate's interval in seconds."""
    match = re.fullmatch(r"(cron|rate)\((.*)\)", expression)
    if match is None:
        kind = " (one-time at() schedules are not for recurring runs)" if expression.startswith("at(") else ""
        raise ScheduleError(f"must be cron(...) or rate(...){kind}; {_EXAMPLES}")
    if match.group(1) == "rate":
        return parse_rate(match.group(2))
    return parse_cron(match.group(2))


# ------------------------------------------------------------------------------------------------- the spec key


@functools.cache
def service_lengths() -> dict[str, tuple[int, int]]:
    """(min, max) of ScheduleExpression and ScheduleExpressionTimezone in botocore's scheduler model."""
    from botocore.loaders import Loader

    shapes = Loader().load_service_model("scheduler", "service-2")["shapes"]
    return {name: (int(shapes[name]["min"]), int(shapes[name]["max"]))
            for name in ("ScheduleExpression", "ScheduleExpressionTimezone")}


@functools.cache
def time_zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _timezone(r: Reader) -> str:
    value = r.string("timezone", max_length=service_lengths()["ScheduleExpressionTimezone"][1], default="UTC")
    if value is None or value in time_zones():
        return value or "UTC"
    close = suggest(value, time_zones())
    hint = f"did you mean '{close}'? " if close else ""
    r.problem("timezone", f"{value!r} is not an IANA time zone; {hint}write a name like UTC, Europe/Berlin or "
              "America/New_York")
    return "UTC"


def _expression(r: Reader, key: str) -> str | None:
    value = r.string(key, required=True, max_length=service_lengths()["ScheduleExpression"][1],
                     explain=f"when runs start, {_EXAMPLES}")
    if value is None:
        return None
    try:
        parse_expression(value)
    except ScheduleError as error:
        r.problem(key, f"{value!r}: {error}")
        return None
    return value


def read_schedule(r: Reader) -> Schedule | None:
    """`schedule:` as a string (the expression, in UTC, everywhere) or {expression, timezone, environments, input}."""
    if isinstance(r.raw.get(KEY), str):
        expression = _expression(r, KEY)
        return Schedule(expression=expression) if expression else None
    s = r.child(KEY)
    if s is None:
        return None
    s.unknown_keys(_KEYS)
    expression = _expression(s, "expression")
    timezone = _timezone(s)
    environments = s.strings("environments", min_items=1, explain="the environments where the schedule runs (default: "
                             "every environment the workload deploys to)")
    given = s.raw.get("input", {})
    if not isinstance(given, Mapping):
        s.problem("input", f"must be a mapping like a console start's input, e.g. {{hyperparameters: {{...}}}}, not "
                  f"{describe(given)}")
        given = {}
    elif len(json.dumps(given)) > INPUT_MAX_BYTES:
        s.problem("input", f"is over EventBridge Scheduler's {INPUT_MAX_BYTES // 1024} KB target input")
    if expression is None:
        return None
    return Schedule(expression=expression, timezone=timezone, environments=environments, input=dict(given))
