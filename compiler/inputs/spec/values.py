"""Free-form values: `hyperparameters`, `environment`, `tags`, `metric_definitions`.

Hyperparameters keep their JSON types (the compiler encodes them as the estimator does). Names must be usable in
the state machine, which addresses each one in JSONPath to apply a run's overrides, so quotes, brackets and `$`
are refused; `sagemaker_*` names are refused: the estimator overwrites the ones it sets, and the training toolkit
(sagemaker-training-toolkit's environment.py) takes every one as its own setting, out of the script's arguments and
SM_HP_* variables.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from compiler.inputs.model import Metric
from compiler.inputs.reader import Reader, describe
from compiler.sdk.limits import limits, matches

HYPERPARAMETER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/+=@-]*")
RESERVED_TAG_PREFIXES = ("aws:", "training-platform:")
PLATFORM_TAGS = 3  # workload, environment and execution tags the platform adds to every job
MAX_DEPTH = 16


def json_problem(value: Any, depth: int = 0) -> str | None:
    """Why a value cannot be sent as JSON (NaN, infinity, odd types, deep nesting), or None."""
    if depth > MAX_DEPTH:
        return "is nested too deeply"
    if value is None or isinstance(value, bool | str):
        return None
    if isinstance(value, int):
        if abs(value) < 2**63:
            return None
        return f"{value} is beyond the 64-bit integers the platform carries as numbers; quote it ('{value}') to pass text"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a JSON number; write a finite number (or text)"
    if isinstance(value, list):
        return next((p for v in value if (p := json_problem(v, depth + 1))), None)
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            return "has keys that are not text"
        return next((p for v in value.values() if (p := json_problem(v, depth + 1))), None)
    return f"holds {type(value).__name__}, which JSON cannot carry"


def read_hyperparameters(r: Reader, framework: str) -> dict[str, Any]:
    hyperparameters = r.child("hyperparameters")
    if hyperparameters is None:
        return {}
    result = {}
    longest = limits().hyperparameter_key_max
    for name, value in hyperparameters.raw.items():
        where = str(name)
        if not HYPERPARAMETER_NAME.fullmatch(str(name)) or len(str(name)) > longest:
            hyperparameters.problem(where, f"hyperparameter names are 1-{longest} letters, digits and _.:/+=@- "
                                    "(the state machine addresses each one by name to apply a run's overrides)")
            continue
        if str(name).startswith("sagemaker_"):
            hyperparameters.problem(where, "names starting with sagemaker_ are the SDK's and the training toolkit's own: "
                                    "the estimator sets some itself (overwriting yours) and the toolkit keeps every one "
                                    "out of your script's arguments; rename it (the code to run is entry_point and "
                                    "source_dir)")
            continue
        if framework == "tensorflow" and name == "model_dir":
            hyperparameters.problem(where, "the TensorFlow estimator sets model_dir itself; use the model_dir argument")
            continue
        problem = json_problem(value)
        if problem:
            hyperparameters.problem(where, problem)
            continue
        result[str(name)] = value
    return result


def read_choices(r: Reader, hyperparameters: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """`choices: {name: [values]}`: the only values a run may give a text hyperparameter (`compiler.compilation.overrides`)."""
    choices = r.child("choices")
    if choices is None:
        return {}
    result = {}
    longest = limits().hyperparameter_value_max
    for name, values in choices.raw.items():
        where = str(name)
        if not isinstance(hyperparameters.get(name), str):
            choices.problem(where, "choices are for the spec's text hyperparameters; add it to hyperparameters with "
                            "text as its value (its default), or remove it from choices")
        elif not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            choices.problem(where, f"a list of text values, e.g. [{hyperparameters[name]}], not {describe(values)}")
        elif hyperparameters[name] not in values:
            choices.problem(where, f"must include the spec's own value {hyperparameters[name]!r}")
        elif any(len(json.dumps(v)) > longest for v in values):
            choices.problem(where, f"a value is longer than SageMaker's {longest} characters as sent")
        else:
            result[str(name)] = tuple(dict.fromkeys(values))
    return result


def read_environment(r: Reader) -> dict[str, str] | None:
    environment = r.child("environment")
    if environment is None:
        return None
    result = {}
    lim = limits()
    for name, value in environment.raw.items():
        where = str(name)
        if not matches(lim.environment_key_pattern, str(name)) or len(str(name)) > lim.environment_key_max:
            environment.problem(where, "variable names are letters, digits and _, not starting with a digit")
            continue
        if not isinstance(value, str):
            hint = f" (quote it: '{value}')" if isinstance(value, int | float | bool) else ""
            environment.problem(where, f"values are text: SageMaker refuses {describe(value)}{hint}")
            continue
        if len(value) > lim.environment_value_max:
            environment.problem(where, f"is {len(value)} characters; SageMaker allows {lim.environment_value_max}")
            continue
        result[str(name)] = value
    return result


def read_tags(r: Reader) -> dict[str, str]:
    """The spec's tags, in either shape, each checked against SageMaker's limits; the problems go to the reader."""
    raw = r.raw.get("tags")
    if raw is None:
        return {}
    tags = _tags_as_mapping(r, raw)
    if tags is None:
        return {}
    lim = limits()
    if len(tags) > lim.tags_max - PLATFORM_TAGS:
        r.problem("tags", f"{len(tags)} tags; SageMaker allows {lim.tags_max} and the platform adds {PLATFORM_TAGS}: "
                  f"keep at most {lim.tags_max - PLATFORM_TAGS}")
    result = {}
    for key, value in tags.items():
        problem = _tag_problem(key, value)
        if problem:
            r.findings.problem(f"tags.{key}", problem)
        else:
            result[key] = value
    return result


def _tags_as_mapping(r: Reader, raw: Any) -> Mapping[Any, Any] | None:
    """Tags as {key: value}, from a mapping or the SDK's [{Key, Value}] list; None (after a problem) for neither."""
    if isinstance(raw, list):
        return _tags_from_list(r, raw)
    if isinstance(raw, Mapping):
        # whole numbers are tag text as written (the SDK would send them unquoted, which SageMaker refuses); anything
        # else (empty, true/false, 2.10 read as 2.1, a list or mapping) has no one text a reader would expect
        return {k: str(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in raw.items()}
    r.problem("tags", "must be a mapping of tag keys to values (or the SDK's [{Key, Value}] list)")
    return None


def _tags_from_list(r: Reader, raw: list[Any]) -> dict[str, Any] | None:
    """The SDK's own shape, [{Key, Value}]; a key given twice is refused, not resolved."""
    if not all(isinstance(t, Mapping) and set(t) == {"Key", "Value"} and isinstance(t["Key"], str) for t in raw):
        r.problem("tags", "as a list, each tag is {Key: <text>, Value: <text>}")
        return None
    twice = sorted(k for k, n in Counter(t["Key"] for t in raw).items() if n > 1)
    if twice:  # keeping the last one would deploy what the reader did not see
        r.problem("tags", f"key {twice[0]!r} is given twice; keep one")
        return None
    return {t["Key"]: t["Value"] for t in raw}


def _tag_problem(key: Any, value: Any) -> str | None:
    """Why SageMaker would refuse one tag (or the platform would clash with it), or None."""
    lim = limits()
    if not isinstance(key, str) or not 1 <= len(key) <= lim.tag_key_max or not matches(lim.tag_pattern, key):
        return f"tag keys are 1-{lim.tag_key_max} letters, digits, spaces or _.:/=+-@"
    if key.lower().startswith(RESERVED_TAG_PREFIXES):
        return ("keys starting with aws: belong to AWS and training-platform: to the platform, "
                "which tags every job with its workload, environment and execution; pick another key")
    if not isinstance(value, str) or len(value) > lim.tag_value_max or not matches(lim.tag_pattern, value):
        return (f"tag values are text of at most {lim.tag_value_max} letters, digits, spaces "
                f"or _.:/=+-@, not {describe(value)} (quote it; '' for an empty value)")
    return None


def read_metrics(r: Reader) -> tuple[Metric, ...] | None:
    """The metric definitions, or None without any (the SDK sends a given list as is, even an empty one)."""
    raw = r.raw.get("metric_definitions")
    if raw is None:
        return None
    lim = limits()
    if not isinstance(raw, list):
        r.problem("metric_definitions", "must be a list of {Name, Regex}")
        return None
    if len(raw) > lim.metrics_max:
        r.problem("metric_definitions", f"{len(raw)} metrics; SageMaker allows {lim.metrics_max}")
    result: list[Metric] = []
    for index, item in enumerate(raw):
        where = f"metric_definitions[{index}]"
        if not isinstance(item, Mapping) or set(item) != {"Name", "Regex"}:
            r.problem(where, "each metric is {Name: ..., Regex: ...}")
            continue
        name, regex = item["Name"], item["Regex"]
        if not isinstance(name, str) or not 1 <= len(name) <= lim.metric_name_max:
            r.problem(where + ".Name", f"must be 1-{lim.metric_name_max} characters")
            continue
        if not isinstance(regex, str) or not 1 <= len(regex) <= lim.metric_regex_max:
            r.problem(where + ".Regex", f"must be 1-{lim.metric_regex_max} characters")
            continue
        if not (r.shaped(where + ".Name", name, "MetricName") and r.shaped(where + ".Regex", regex, "MetricRegex")):
            continue
        try:
            compiled = re.compile(regex)
        except re.error as exc:
            r.problem(where + ".Regex", f"is not a valid regular expression: {exc}")
            continue
        if compiled.groups < 1:
            r.warn(where + ".Regex", "has no capture group: SageMaker reads a metric's value from the first group, "
                   "e.g. 'loss=([0-9.]+)'")
        if any(m.name == name for m in result):
            r.problem(where + ".Name", f"metric {name!r} is defined twice")
            continue
        result.append(Metric(name, regex))
    return tuple(result)
