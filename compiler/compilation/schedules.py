"""`schedule:` in a spec: checked as EventBridge Scheduler checks it, and what it may cost a month.

A schedule EventBridge Scheduler refuses fails the workload stack's deploy (CreateSchedule), so validate refuses it
first, naming the field and the fix. The formats are the documented ones ("Schedule types in EventBridge
Scheduler", and EventBridge's cron and rate references): `rate(value unit)` with a positive whole value and the unit
minute/hour/day for 1, minutes/hours/days above; `cron(...)` with six fields (minutes, hours, day-of-month, month,
day-of-week, year), `?` in exactly one of the two day fields. Lengths come from botocore's `scheduler` model
(ScheduleExpression, ScheduleExpressionTimezone); time zones are IANA names, checked against Python's zoneinfo.

The projection (next runs, runs in the busiest month, worst-case cost) follows the service's documented daylight
saving rule: a local time that does not exist is skipped, one that repeats runs once. Pure: no AWS call.
"""

from __future__ import annotations

import calendar
import functools
import itertools
import json
import math
import re
import zoneinfo
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from compiler.compilation.overrides import OverridePolicy
from compiler.errors import Problem
from compiler.facts import catalog
from compiler.inputs.environments import Environment
from compiler.inputs.model import Schedule, Workload
from compiler.inputs.reader import Findings, Reader, describe, suggest

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


# ------------------------------------------------------------------------------------------------- projection


def _offset(zone: zoneinfo.ZoneInfo, day: date) -> timedelta | None:
    return datetime(day.year, day.month, day.day, tzinfo=zone).utcoffset()


def _exists(local: datetime, zone: zoneinfo.ZoneInfo) -> bool:
    """False for a local time skipped by a daylight saving change (the service skips that run)."""
    aware = local.replace(tzinfo=zone)
    return datetime.fromtimestamp(aware.timestamp(), zone).replace(tzinfo=None) == local


def runs_on(cron: Cron, day: date, zone: zoneinfo.ZoneInfo) -> list[datetime]:
    """The runs of one local date, as aware datetimes; a repeated local time runs once (fold 0)."""
    if not cron.on(day):
        return []
    times = [datetime(day.year, day.month, day.day, h, m) for h, m in cron.times()]
    if _offset(zone, day) != _offset(zone, day + timedelta(days=1)):
        times = [t for t in times if _exists(t, zone)]
    return [t.replace(tzinfo=zone) for t in times]


def count_on(cron: Cron, day: date, zone: zoneinfo.ZoneInfo) -> int:
    if not cron.on(day):
        return 0
    if _offset(zone, day) == _offset(zone, day + timedelta(days=1)):
        return len(cron.hours) * len(cron.minutes)
    return len(runs_on(cron, day, zone))


def next_runs(expression: str, timezone: str, after: datetime, count: int = 3) -> list[datetime]:
    """The next runs of a cron schedule after `after` (aware), within 5 years; [] for a rate (it runs from deploy)."""
    parsed = parse_expression(expression)
    if isinstance(parsed, int):
        return []
    zone = zoneinfo.ZoneInfo(timezone)
    found: list[datetime] = []
    day = after.astimezone(zone).date()
    for _ in range(5 * 366):
        found += [t for t in runs_on(parsed, day, zone) if t > after][: count - len(found)]
        if len(found) == count:
            break
        day += timedelta(days=1)
    return found


def _months(start: date, count: int) -> Iterator[tuple[int, int]]:
    year, month = start.year, start.month
    for _ in range(count):
        yield year, month
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)


def runs_per_month(expression: str, timezone: str, start: date) -> int:
    """Runs in the busiest calendar month of the twelve from `start`'s month (a rate: in 31 days)."""
    parsed = parse_expression(expression)
    if isinstance(parsed, int):
        return math.ceil(31 * 86400 / parsed)
    zone = zoneinfo.ZoneInfo(timezone)
    busiest = 0
    for year, month in _months(start, 12):
        days = calendar.monthrange(year, month)[1]
        busiest = max(busiest, sum(count_on(parsed, date(year, month, d), zone) for d in range(1, days + 1)))
    return busiest


def shortest_interval(expression: str, start: date) -> int | None:
    """Seconds between the two closest runs in the year from `start` (daylight saving aside); None: under two runs."""
    parsed = parse_expression(expression)
    if isinstance(parsed, int):
        return parsed
    times = [h * 3600 + m * 60 for h, m in parsed.times()]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    days = [d for d in (start + timedelta(days=i) for i in range(366)) if parsed.on(d)]
    gaps += [(b - a).days * 86400 - times[-1] + times[0] for a, b in itertools.pairwise(days)]
    return min(gaps) if gaps and days else None


# ------------------------------------------------------------------------------------------------- cost


def run_hours(workload: Workload) -> float:
    """The longest a scheduled run may train: its input's max_run, else the spec's."""
    max_run = workload.schedule.input.get("max_run") if workload.schedule else None
    return (max_run if isinstance(max_run, int) else workload.max_run) / 3600


def hourly_worst_case(workload: Workload) -> float | None:
    """List price per hour of the cluster a scheduled run may use: its instance count, the dearest fallback type."""
    if workload.compute.instance_groups:
        return workload.hourly_cost()
    given = workload.schedule.input.get("instance_count") if workload.schedule else None
    count = given if isinstance(given, int) else workload.instance_count
    prices = [catalog.hourly_cost(t, count, workload.price_region)
              for t in (workload.instance_type, *workload.capacity_retry.fallback_instance_types)]
    return None if any(p is None for p in prices) else max(p for p in prices if p is not None)


@dataclass(frozen=True)
class Projection:
    """What a schedule may cost a month at list prices, worst case (every run lasts max_run)."""

    runs_per_month: int
    cost_per_run: float | None
    cost_per_month: float | None


def projection(expression: str, timezone: str, hourly: float | None, run_seconds: int, concurrent: bool,
               start: date) -> Projection:
    """Runs in the busiest month x the longest run. Without concurrent runs a start is skipped while another run goes
    on, so a month never holds more than 31 days of the cluster."""
    runs = runs_per_month(expression, timezone, start)
    if hourly is None:
        return Projection(runs, None, None)
    hours = runs * run_seconds / 3600
    if not concurrent:
        hours = min(hours, HOURS_IN_LONGEST_MONTH)
    return Projection(runs, round(hourly * run_seconds / 3600, 2), round(hourly * hours, 2))


def describe_schedule(workload: Workload, env: str) -> dict[str, Any] | None:
    """The facts `trainctl review` compares and projects (template metadata of the schedule); None: no schedule."""
    schedule = workload.schedule
    if schedule is None:
        return None
    return {"workload": workload.name, "environment": env, "expression": schedule.expression,
            "timezone": schedule.timezone, "input": dict(schedule.input), "worst_cost_per_hour_usd":
            hourly_worst_case(workload), "max_run": int(run_hours(workload) * 3600),
            "concurrent_runs": workload.concurrent_runs, "prices": catalog.price_source(workload.price_region)}


def project(workload: Workload, start: date) -> Projection | None:
    """The workload's schedule projected from `start` at list prices, worst case (every run lasts max_run)."""
    facts = describe_schedule(workload, "")
    if facts is None:
        return None
    return projection(facts["expression"], facts["timezone"], facts["worst_cost_per_hour_usd"], facts["max_run"],
                      workload.concurrent_runs, start)


# ------------------------------------------------------------------------------------------------- checks


def check(workload: Workload, findings: Findings, start: date) -> None:
    """The schedule's input as a console start would be checked, and a warning where runs would overlap."""
    schedule = workload.schedule
    if schedule is None:
        return
    for message in OverridePolicy.of(workload).check(dict(schedule.input)):
        findings.problem(f"{KEY}.input", f"{message} (a scheduled run starts with this input, as a console start "
                         "would)")
    interval = shortest_interval(schedule.expression, start)
    longest = int(run_hours(workload) * 3600)
    if interval is None or interval >= longest:
        return
    if workload.concurrent_runs:
        findings.warn(KEY, f"runs start {interval // 60} minutes apart at the closest, and max_run is {longest} s: with "
                      "concurrent_runs they may pile up, each a full cluster")
    else:
        findings.warn(KEY, f"runs start {interval // 60} minutes apart at the closest, and max_run is {longest} s: a "
                      "start while a run is still going ends at once with AlreadyRunning (skipped, no job), which "
                      "counts as a failed execution and raises the failed-runs alarm; lower max_run or space the runs")


def environment_problems(base: Mapping[str, Workload], deployed: Mapping[str, Mapping[str, Any]]) -> list[Problem]:
    """`schedule.environments` names environments the workload deploys to (`deployed`: environment -> workloads)."""
    problems = []
    for workload in base.values():
        for env in (workload.schedule.environments or ()) if workload.schedule else ():
            if workload.name in deployed.get(env, {}):
                continue
            where = sorted(e for e, names in deployed.items() if workload.name in names)
            known = "is not an environment of cdk.json" if env not in deployed else "is not one the workload deploys to"
            problems.append(Problem(workload.source, f"{KEY}.environments", f"{env!r} {known}; it deploys to "
                                    f"{', '.join(where) or 'none'}"))
    return problems


def budget_warnings(env: Environment, workloads: Iterable[Workload], start: date) -> list[str]:
    """A warning when the environment's schedules may cost more a month than its monthly budget (worst case)."""
    if env.monthly_budget_usd is None:
        return []
    scheduled = [w for w in workloads if w.schedule is not None and w.schedule.applies_to(env.name)]
    projections = {w.name: project(w, start) for w in scheduled}
    unpriced = sorted(name for name, p in projections.items() if p is None or p.cost_per_month is None)
    if unpriced:  # no projection beats a low one: say which and why
        types = {t for w in scheduled if w.name in unpriced
                 for t in (*(g.instance_type for g in w.compute.groups), *w.capacity_retry.fallback_instance_types)
                 if catalog.price(t, env.region) is None}
        return [f"cdk.json: {env.name}.monthly_budget_usd: the schedules of {', '.join(unpriced)} cannot be projected "
                f"against the budget: {catalog.missing_price(types, env.region)}"]
    total = round(sum(p.cost_per_month or 0.0 for p in projections.values() if p is not None), 2)
    if total <= env.monthly_budget_usd:
        return []
    return [f"cdk.json: {env.name}.monthly_budget_usd: the schedules of {env.name} may cost up to ${total:,.2f} a month "
            f"(every run lasting max_run, at {catalog.price_source(env.region)}), more than the budget of "
            f"${env.monthly_budget_usd:,.2f}; raise the budget, or run less often or shorter"]


SCHEDULE_TEMPLATE_BYTES = 3_000  # the schedule, its role and policy as the template file holds them (about 2.6 KB)


def template_bytes(schedule: Schedule) -> int:
    """What a schedule adds to its workload stack's template: its resources, and its input three times over (the
    target's escaped JSON string and the metadata's indented copy)."""
    return SCHEDULE_TEMPLATE_BYTES + 3 * len(json.dumps(dict(schedule.input)))


def layout_bytes(workloads: Iterable[Workload], env: str) -> dict[str, int]:
    """Per workload scheduled in `env`, the bytes its schedule adds to the shard (compiler/compilation/stack_layout.py)."""
    return {w.name: template_bytes(w.schedule) for w in workloads
            if w.schedule is not None and w.schedule.applies_to(env)}
