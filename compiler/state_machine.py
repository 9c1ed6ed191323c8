"""The Step Functions state machine of one workload, as Amazon States Language (JSONPath), in pure Python.

Why pure Python and not the CDK's state-machine constructs: one definition per workload must synthesize
in milliseconds for a fleet of 1,000 workloads (FACTS.md section 5), must run in moto's interpreter in the
tests, and must express parts of CreateTrainingJob that the CDK task cannot (FSx channels, checkpoints,
spot, retry strategy). The compiled request (`compiler.request`) goes in as it is; this module only
adds what exists at run time:

- the execution input is checked first (see `INPUT_SCHEMA`); anything wrong ends the execution with
  error `InvalidInput` and a cause naming the field, before any job exists;
- `${RunId}` (12 hex characters, once per execution) and `${Attempt}` (0, 1, ... per capacity relaunch)
  are made with intrinsic functions, so job names are unique whatever the execution was named;
- hyperparameter overrides are JSON-encoded with `States.JsonToString` and merged over the spec's;
- throttling and quota errors on CreateTrainingJob are retried with backoff; a job that failed with
  `CapacityError` is relaunched under a new name, resuming from the same checkpoint prefix;
- the outcome goes to the environment's SNS topic, and the execution's output summarizes the run.

Deploy-time values stay `${Name}` placeholders: Step Functions `DefinitionSubstitutions` fill them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from compiler import catalog
from compiler import placeholders as ph
from compiler.errors import Problem, SpecError

SYNC_RESOURCE = "arn:aws:states:::sagemaker:createTrainingJob.sync"
DESCRIBE_RESOURCE = "arn:aws:states:::aws-sdk:sagemaker:describeTrainingJob"
STOP_RESOURCE = "arn:aws:states:::sagemaker:stopTrainingJob"
PUBLISH_RESOURCE = "arn:aws:states:::sns:publish"

# Deploy-time placeholder this module adds (the CDK layer maps it to the environment's topic ARN).
NOTIFICATION_TOPIC_ARN = "NotificationTopicArn"

INVALID_INPUT = "InvalidInput"
TAG_EXECUTION = "training-platform:execution-arn"

# Overrides accepted in the execution input. A larger cluster than this needs a spec change (and a review).
MAX_INSTANCE_COUNT_OVERRIDE = 64
MAX_RUNTIME_SECONDS = 28 * 24 * 3600  # SageMaker's MaxRuntimeInSeconds limit
MAX_CAPACITY_WAIT_SECONDS = 24 * 3600  # one relaunch never waits longer than a day, whatever the backoff

# How CreateTrainingJob errors reach Step Functions. Throttling is not a modelled SageMaker error, so it
# arrives as the generic AmazonSageMakerException (AWS's own examples retry that name); quota errors are
# modelled. The FACTS.md spelling (`SageMaker.<Code>`) is listed too: the names are unverified offline.
THROTTLING_ERRORS = ("SageMaker.AmazonSageMakerException", "SageMaker.ThrottlingException", "ThrottlingException")
QUOTA_ERRORS = ("SageMaker.ResourceLimitExceededException", "SageMaker.ResourceLimitExceeded")

# Execution names may contain these characters, SageMaker tag values may not (botocore's Tag.Value pattern).
_UNTAGGABLE = ("!", "'", "(", ")")

# The execution input: every field optional; `{}` runs the spec as written.
INPUT_SCHEMA = {
    "hyperparameters": "object: spec hyperparameter name -> new value of the same JSON type (integers stay "
                       "integers); merged over the spec's, JSON-encoded like the SDK; unknown names are refused",
    "instance_count": f"integer, 1 to {MAX_INSTANCE_COUNT_OVERRIDE} (or the spec's count if larger)",
    "max_run": f"integer seconds, 1 to {MAX_RUNTIME_SECONDS} (with spot: at most the spec's max_wait)",
}

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class MachineSpec:
    """What the definition needs from a workload: its compiled request plus the run-time policy."""

    workload: str
    environment: str
    base_job_name: str
    request: dict[str, Any]  # CreateTrainingJob with ${...} placeholders (compiler.request)
    hyperparameters: dict[str, Any]  # the spec's raw values: the ones an execution may override
    capacity_relaunches: int = 3
    capacity_wait_seconds: int = 600
    capacity_backoff_rate: float = 2.0
    source: str = ""

    @property
    def instance_type(self) -> str:
        return str(self.request["ResourceConfig"]["InstanceType"])

    @property
    def instance_count(self) -> int:
        return int(self.request["ResourceConfig"]["InstanceCount"])

    @property
    def max_run(self) -> int:
        return int(self.request["StoppingCondition"]["MaxRuntimeInSeconds"])

    @property
    def max_wait(self) -> int | None:
        if not self.request.get("EnableManagedSpotTraining"):
            return None
        wait = self.request["StoppingCondition"].get("MaxWaitTimeInSeconds")
        return int(wait) if wait is not None else None

    @property
    def max_instance_count(self) -> int:
        return max(MAX_INSTANCE_COUNT_OVERRIDE, self.instance_count)

    @property
    def max_run_limit(self) -> int:
        return min(MAX_RUNTIME_SECONDS, self.max_wait) if self.max_wait else MAX_RUNTIME_SECONDS

    def hourly_rates(self) -> list[float]:
        """Catalog price of the cluster per hour for 1..max instances (JSONPath ASL cannot multiply)."""
        return [catalog.hourly_cost(self.instance_type, n) for n in range(1, self.max_instance_count + 1)]

    def capacity_waits(self) -> list[int]:
        """Seconds to wait before relaunch n+1 after n capacity failures, backoff applied and capped."""
        waits = []
        for n in range(self.capacity_relaunches + 1):
            waits.append(int(min(MAX_CAPACITY_WAIT_SECONDS, self.capacity_wait_seconds * self.capacity_backoff_rate**n)))
        return waits


def spec_for(workload: Any, env: Any, *, training_image: str | None = None) -> MachineSpec:
    """The MachineSpec of a checked `compiler.spec.Workload` in an environment."""
    from compiler.request import compile_request

    request = compile_request(workload, env, training_image=training_image)
    return MachineSpec(
        workload=workload.name,
        environment=env.name,
        base_job_name=workload.base_job_name,
        request=request,
        hyperparameters=dict(workload.hyperparameters),
        capacity_relaunches=workload.capacity_retry.max_attempts,
        capacity_wait_seconds=workload.capacity_retry.wait_seconds,
        capacity_backoff_rate=workload.capacity_retry.backoff_rate,
        source=str(workload.path),
    )


def state_machine_name(environment: str, workload: str) -> str:
    """The state machine's name in the console: `<env>-<workload>` (<= 80 characters)."""
    return f"{environment}-{workload}"[:80]


# ---------------------------------------------------------------------------------------------------------
# Small helpers for intrinsic functions and paths
# ---------------------------------------------------------------------------------------------------------


def literal(text: str) -> str:
    """A string literal inside an intrinsic function: quote it and escape the reserved characters."""
    return "'" + re.sub(r"([\\'{}])", r"\\\1", text) + "'"


def member(base: str, key: str) -> str:
    """A reference path to an object member: dot notation where it parses, bracket notation otherwise."""
    if _IDENTIFIER.match(key):
        return f"{base}.{key}"
    return f"{base}['{key}']"


def _run_time_format(text: str) -> str | None:
    """`States.Format(...)` for a string holding run-time placeholders; None when it holds none.

    Deploy-time placeholders in the same string become literal arguments, so Step Functions' textual
    substitution still finds `${Name}` unescaped (an escaped `$\\{Name\\}` would never be substituted).
    """
    parts = ph.PLACEHOLDER.split(text)  # text, name, text, name, ...
    names = parts[1::2]
    if not any(n in ph.RUN_TIME for n in names):
        return None
    template = ""
    args: list[str] = []
    for i, piece in enumerate(parts):
        if i % 2 == 0:
            template += re.sub(r"([\\'{}])", r"\\\1", piece)
            continue
        template += "{}"
        if piece == ph.RUN_ID:
            args.append("$.run.id")
        elif piece == ph.ATTEMPT:
            args.append("$.run.attempt")
        else:
            args.append("'" + ph.ref(piece) + "'")
    return f"States.Format('{template}', {', '.join(args)})"


def _with_run_time(value: Any, where: str) -> Any:
    """Copy of a request part where strings with run-time placeholders become `Key.$` intrinsic calls."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(item, str) and (expr := _run_time_format(item)) is not None:
                out[key + ".$"] = expr
            else:
                out[key] = _with_run_time(item, f"{where}.{key}")
        return out
    if isinstance(value, list):
        result = []
        for i, item in enumerate(value):
            if isinstance(item, str) and _run_time_format(item) is not None:
                raise SpecError(Problem("", f"{where}[{i}]", "a run-time value cannot sit directly in a list"))
            result.append(_with_run_time(item, f"{where}[{i}]"))
        return result
    return value


def _fail(cause: str) -> dict[str, Any]:
    return {"Type": "Fail", "Error": INVALID_INPUT, "Cause": cause}


def _type_rule(path: str, value: Any) -> tuple[dict[str, Any] | None, str]:
    """A Choice rule that matches a value of the wrong JSON type for `value`, and the expected type."""
    if isinstance(value, bool):
        return {"Not": {"Variable": path, "IsBoolean": True}}, "(true/false)"
    if isinstance(value, int):
        return {"Not": {"Variable": path, "IsNumeric": True}}, "(integer)"
    if isinstance(value, float):
        return {"Not": {"Variable": path, "IsNumeric": True}}, "(number)"
    if isinstance(value, str):
        return {"Not": {"Variable": path, "IsString": True}}, "(string)"
    if value is None:
        return None, "(any)"
    scalars = [{"Variable": path, k: True} for k in ("IsString", "IsNumeric", "IsBoolean", "IsNull")]
    return {"Or": scalars}, "(list or object)"


def _parts(path: str) -> str:
    """Count of the pieces of a number's JSON text split at '.', 'e', 'E': 1 exactly when it is an integer."""
    return f"States.ArrayLength(States.StringSplit(States.JsonToString({path}), '.eE'))"


# ---------------------------------------------------------------------------------------------------------
# Checking the execution input
# ---------------------------------------------------------------------------------------------------------


def _validation_states(spec: MachineSpec) -> dict[str, Any]:
    """States that check the execution input first; the last one leaves only the checked values."""
    hp_names = list(spec.hyperparameters)
    known_hp = ", ".join(hp_names) if hp_names else "(none: this workload's spec has no hyperparameters)"
    max_count = spec.max_instance_count
    max_run = spec.max_run_limit
    spot_note = f" (spot: at most max_wait, {spec.max_wait})" if spec.max_wait else ""
    fixes = {
        "keys": "the execution input has a field this state machine does not know; allowed (all optional): "
                "hyperparameters, instance_count, max_run. Start with {} to run the spec as written",
        "hp_type": "hyperparameters: must be an object of name -> value, e.g. "
                   '{"hyperparameters": {"' + (hp_names[0] if hp_names else "name") + '": ...}}',
        "hp_keys": f"hyperparameters: unknown name; this workload's hyperparameters are: {known_hp}. "
                   "Add new ones to the spec (training/workloads/) instead",
        "count": f"instance_count: must be an integer from 1 to {max_count}; the spec uses {spec.instance_count}",
        "max_run": f"max_run: must be an integer number of seconds from 1 to {max_run}{spot_note}; "
                   f"the spec uses {spec.max_run}",
    }
    states: dict[str, Any] = {
        "Read input": {
            "Type": "Pass",
            "Parameters": {
                "given.$": "$",
                "text.$": "States.JsonToString($)",
                "keys": {"top": dict.fromkeys(INPUT_SCHEMA, 0), "hyperparameters": dict(spec.hyperparameters)},
                "defaults": {"hyperparameters": {}, "instance_count": spec.instance_count, "max_run": spec.max_run},
            },
            "Next": "Input is an object?",
        },
        "Input is an object?": {
            "Type": "Choice",
            "Choices": [{"Not": {"Variable": "$.text", "StringMatches": "{*"}, "Next": "Input is not an object"}],
            "Default": "Find unknown fields",
        },
        "Input is not an object": _fail(
            "the execution input must be a JSON object: {} runs the spec as written; overrides look like "
            '{"hyperparameters": {...}, "instance_count": 2, "max_run": 3600}'
        ),
        # Known keys merged over (input merged with known keys) equals the known keys exactly when the input
        # has no other key: both sides list the known keys first, in the same order.
        "Find unknown fields": {
            "Type": "Pass",
            "Parameters": {
                "known.$": "States.JsonToString($.keys.top)",
                "seen.$": "States.JsonToString(States.JsonMerge($.keys.top, "
                          "States.JsonMerge($.given, $.keys.top, false), false))",
            },
            "ResultPath": "$.top",
            "Next": "Unknown fields?",
        },
        "Unknown fields?": {
            "Type": "Choice",
            "Choices": [{"Not": {"Variable": "$.top.seen", "StringEqualsPath": "$.top.known"}, "Next": "Bad fields"}],
            "Default": "Merge defaults",
        },
        "Bad fields": _fail(fixes["keys"]),
        "Merge defaults": {
            "Type": "Pass",
            "Parameters": {"value.$": "States.JsonMerge($.defaults, $.given, false)"},
            "ResultPath": "$.merged",
            "Next": "Describe hyperparameters",
        },
        "Describe hyperparameters": {
            "Type": "Pass",
            "Parameters": {"text.$": "States.JsonToString($.merged.value.hyperparameters)"},
            "ResultPath": "$.hp",
            "Next": "Check types",
        },
        "Check types": {
            "Type": "Choice",
            "Choices": [
                {"Not": {"Variable": "$.hp.text", "StringMatches": "{*"}, "Next": "Bad hyperparameters"},
                {"Not": {"Variable": "$.merged.value.instance_count", "IsNumeric": True}, "Next": "Bad instance_count"},
                {"Not": {"Variable": "$.merged.value.max_run", "IsNumeric": True}, "Next": "Bad max_run"},
            ],
            "Default": "Measure values",
        },
        "Bad hyperparameters": _fail(fixes["hp_type"]),
        "Bad instance_count": _fail(fixes["count"]),
        "Bad max_run": _fail(fixes["max_run"]),
        "Measure values": {
            "Type": "Pass",
            "Parameters": {
                "count_parts.$": _parts("$.merged.value.instance_count"),
                "max_run_parts.$": _parts("$.merged.value.max_run"),
                "hp_known.$": "States.JsonToString($.keys.hyperparameters)",
                "hp_seen.$": "States.JsonToString(States.JsonMerge($.keys.hyperparameters, States.JsonMerge("
                             "$.merged.value.hyperparameters, $.keys.hyperparameters, false), false))",
            },
            "ResultPath": "$.measured",
            "Next": "Check values",
        },
    }
    value_rules: list[dict[str, Any]] = [
        {"Not": {"Variable": "$.measured.count_parts", "NumericEquals": 1}, "Next": "Bad instance_count"},
        {"Variable": "$.merged.value.instance_count", "NumericLessThan": 1, "Next": "Bad instance_count"},
        {"Variable": "$.merged.value.instance_count", "NumericGreaterThan": max_count, "Next": "Bad instance_count"},
        {"Not": {"Variable": "$.measured.max_run_parts", "NumericEquals": 1}, "Next": "Bad max_run"},
        {"Variable": "$.merged.value.max_run", "NumericLessThan": 1, "Next": "Bad max_run"},
        {"Variable": "$.merged.value.max_run", "NumericGreaterThan": max_run, "Next": "Bad max_run"},
        {"Not": {"Variable": "$.measured.hp_seen", "StringEqualsPath": "$.measured.hp_known"},
         "Next": "Unknown hyperparameter"},
    ]
    states["Unknown hyperparameter"] = _fail(fixes["hp_keys"])
    # Per hyperparameter: the override keeps the spec value's JSON type (and integers stay integers). The
    # rules read the spec values merged with the overrides, so every name is present and only overrides differ.
    int_parts: dict[str, str] = {}
    expected_types: list[str] = []
    for i, (name, value) in enumerate(spec.hyperparameters.items()):
        if not _addressable(name):
            continue  # not addressable by a JSONPath member; the name check above still applies
        rule, expected = _type_rule(member("$.hp_values.values", name), value)
        expected_types.append(f"{name} {expected}")
        if rule is not None:
            value_rules.append({**rule, "Next": "Bad hyperparameter type"})
        if isinstance(value, int) and not isinstance(value, bool):
            int_parts[f"h{i}"] = name
            value_rules.append({"Not": {"Variable": f"$.hp_parts.h{i}", "NumericEquals": 1},
                                "Next": "Bad hyperparameter type"})
    if expected_types:
        states["Bad hyperparameter type"] = _fail(
            "hyperparameters: an override must keep the JSON type of the spec's value: " + "; ".join(expected_types)
        )
    if spec.hyperparameters:
        states["Measure values"]["Next"] = "Measure integers"
        # Only after the type rules: measuring a missing member would fail, so merge the spec values first.
        states["Measure integers"] = {
            "Type": "Pass",
            "Parameters": {
                "values.$": "States.JsonMerge($.keys.hyperparameters, $.merged.value.hyperparameters, false)",
            },
            "ResultPath": "$.hp_values",
            "Next": "Count integer parts" if int_parts else "Check values",
        }
    if int_parts:
        states["Count integer parts"] = {
            "Type": "Pass",
            "Parameters": {f"{k}.$": _parts(member("$.hp_values.values", n)) for k, n in int_parts.items()},
            "ResultPath": "$.hp_parts",
            "Next": "Check values",
        }
    states["Check values"] = {"Type": "Choice", "Choices": value_rules, "Default": "Input is valid"}
    states["Input is valid"] = {
        "Type": "Pass",
        "Parameters": {
            "input.$": "$.given",
            "config": {
                "hyperparameters.$": "$.merged.value.hyperparameters",
                "instance_count.$": "$.merged.value.instance_count",
                "max_run.$": "$.merged.value.max_run",
            },
        },
        "Next": "Execution name taggable?",
    }
    return states


# ---------------------------------------------------------------------------------------------------------
# The whole machine
# ---------------------------------------------------------------------------------------------------------


def _train_parameters(spec: MachineSpec) -> dict[str, Any]:
    """CreateTrainingJob parameters: the compiled request with run-time values and overrides wired in."""
    request = {k: v for k, v in spec.request.items() if k not in ("TrainingJobName", "HyperParameters")}
    params = _with_run_time(request, "request")
    params["TrainingJobName.$"] = "$.launch.name"
    params["HyperParameters.$"] = "States.JsonMerge($.launch.hyperparameters, $.enc.v, false)"
    resources = dict(params["ResourceConfig"])
    if "InstanceCount" in resources:
        del resources["InstanceCount"]
        resources["InstanceCount.$"] = "$.config.instance_count"
    params["ResourceConfig"] = resources
    stopping = dict(params["StoppingCondition"])
    stopping.pop("MaxRuntimeInSeconds", None)
    params["StoppingCondition"] = {"MaxRuntimeInSeconds.$": "$.config.max_run", **stopping}
    tags = [t for t in params.get("Tags", []) if t.get("Key") != TAG_EXECUTION]
    tags.append({"Key": TAG_EXECUTION, "Value.$": "$.run.execution_tag"})
    params["Tags"] = tags
    return params


def _addressable(name: str) -> bool:
    """Whether a JSONPath member expression can name this key (bracket notation has no escapes)."""
    return "'" not in name and "\\" not in name and "]" not in name


def _portable(value: Any) -> bool:
    """Whether every JSON serializer writes this value exactly as json.dumps does.

    Integers, booleans, null and printable-ASCII strings have one JSON text; floats (0.0003 vs 3.0E-4),
    non-ASCII strings and containers (separators) do not, so those are re-encoded only when overridden.
    """
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) < 2**53
    if isinstance(value, str):
        return all(" " <= ch <= "~" for ch in value)
    return False


def _encode_states(spec: MachineSpec, first_next: str) -> tuple[str, dict[str, Any]]:
    """States that JSON-encode the hyperparameters into `$.enc.v`, to be merged over the compiled ones.

    Portable values are encoded all at once from the spec merged with the overrides (an unchanged value
    encodes to the compiled text). Other values are encoded only when the input overrides them, so an
    unchanged float keeps the SDK's exact json.dumps text.
    """
    names = [n for n in spec.hyperparameters if _addressable(n)]
    portable = [n for n in names if _portable(spec.hyperparameters[n])]
    others = [n for n in names if n not in portable]
    states: dict[str, Any] = {}
    entry = first_next
    for i in reversed(range(len(others))):
        name = others[i]
        path = member("$.config.hyperparameters", name)
        choice, encode, merge = f"Override {i}?", f"Encode override {i}", f"Merge override {i}"
        states[choice] = {
            "Type": "Choice",
            "Comment": name[:200],
            "Choices": [{"Variable": path, "IsPresent": True, "Next": encode}],
            "Default": entry,
        }
        states[encode] = {
            "Type": "Pass",
            "Parameters": {f"{name}.$": f"States.JsonToString({path})"},
            "ResultPath": "$.one",
            "Next": merge,
        }
        states[merge] = {
            "Type": "Pass",
            "Parameters": {"v.$": "States.JsonMerge($.enc.v, $.one, false)"},
            "ResultPath": "$.enc",
            "Next": entry,
        }
        entry = choice
    if portable:
        states["Encode hyperparameters"] = {
            "Type": "Pass",
            "Parameters": {f"{n}.$": f"States.JsonToString({member('$.hp.v', n)})" for n in portable},
            "ResultPath": "$.enc.v",
            "Next": entry,
        }
        states["Merge hyperparameters"] = {
            "Type": "Pass",
            "Parameters": {"v.$": "States.JsonMerge($.defaults.hyperparameters, $.config.hyperparameters, false)"},
            "ResultPath": "$.hp",
            "Next": "Encode hyperparameters",
        }
        entry = "Merge hyperparameters"
    return entry, states


def _summary_parameters(spec: MachineSpec) -> dict[str, Any]:
    """The execution's output and the notification's body."""
    return {
        "workload": spec.workload,
        "environment": spec.environment,
        "execution_arn.$": "$$.Execution.Id",
        "run_id.$": "$.run.id",
        "attempts.$": "States.MathAdd($.run.attempt, 1)",
        "job_name.$": "$.job.v.TrainingJobName",
        "job_arn.$": "$.job.v.TrainingJobArn",
        "status.$": "$.job.v.TrainingJobStatus",
        "failure_reason.$": "$.job.v.FailureReason",
        "billable_seconds.$": "$.job.v.BillableTimeInSeconds",
        "training_seconds.$": "$.job.v.TrainingTimeInSeconds",
        "model_artifacts.$": "$.job.v.ModelArtifacts.S3ModelArtifacts",
        "instance_type": spec.instance_type,
        "instance_count.$": "$.config.instance_count",
        "cost_per_hour_usd.$": "States.ArrayGetItem($.defaults.rates, States.MathAdd($.config.instance_count, -1))",
        "cost_estimate": f"cost_per_hour_usd x billable_seconds / 3600 (catalog list price of "
                         f"{spec.instance_type} in {catalog.PRICE_REGION}, {catalog.PRICES_AS_OF})",
        "overrides.$": "$.input",
    }


_JOB_DEFAULTS = {
    "TrainingJobName": "",
    "TrainingJobArn": "",
    "TrainingJobStatus": "Unknown",
    "FailureReason": "",
    "BillableTimeInSeconds": 0,
    "TrainingTimeInSeconds": 0,
    "ModelArtifacts": {"S3ModelArtifacts": ""},
}


# The cause of a failed run: workload, job, status and attempts, then SageMaker's FailureReason as it is.
_FAILURE_CAUSE = (
    "States.Format('{} {} {} after {} attempt(s): {}', $.result.workload, $.result.job_name, $.result.status, "
    "$.result.attempts, $.result.failure_reason)"
)


def build_definition(spec: MachineSpec) -> dict[str, Any]:
    """The ASL definition (JSONPath) of the workload's state machine."""
    if spec.instance_type not in catalog.CATALOG:
        raise SpecError(Problem(spec.source, "instance_type", f"{spec.instance_type} is not in the catalog"))
    hp = spec.request.get("HyperParameters", {})
    encode_entry, encode_states = _encode_states(spec, "Launch attempt")
    untaggable = {"Or": [{"Variable": "$$.Execution.Name", "StringMatches": f"*{c}*"} for c in _UNTAGGABLE]}
    start_common = {
        "input.$": "$.input",
        "config.$": "$.config",
        "enc": {"v": {}},
        "defaults": {
            "job": _JOB_DEFAULTS,
            "rates": spec.hourly_rates(),
            "hyperparameters": {n: v for n, v in spec.hyperparameters.items() if _portable(v)},
        },
    }
    run_id = "States.ArrayGetItem(States.StringSplit(States.UUID(), '-'), 4)"
    waits = ", ".join(str(w) for w in spec.capacity_waits())
    publish_retry = [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 5, "BackoffRate": 2.0, "MaxAttempts": 3}]
    states: dict[str, Any] = {
        **_validation_states(spec),
        "Execution name taggable?": {
            "Type": "Choice",
            "Choices": [{**untaggable, "Next": "Tag with state machine"}],
            "Default": "Tag with execution",
        },
        "Tag with execution": {
            "Type": "Pass", "Parameters": {"v.$": "$$.Execution.Id"}, "ResultPath": "$.tag", "Next": "Start run",
        },
        "Tag with state machine": {
            "Type": "Pass",
            "Comment": "The execution name has characters SageMaker tags refuse: tag the state machine instead.",
            "Parameters": {"v.$": "$$.StateMachine.Id"},
            "ResultPath": "$.tag",
            "Next": "Start run",
        },
        "Start run": {
            "Type": "Pass",
            "Parameters": {**start_common, "run": {"id.$": run_id, "attempt": 0, "execution_tag.$": "$.tag.v"}},
            "Next": encode_entry,
        },
        **encode_states,
        "Launch attempt": {
            "Type": "Pass",
            "Parameters": {
                "name.$": _run_time_format(spec.request["TrainingJobName"]) or "$.run.id",
                "hyperparameters": _with_run_time(hp, "request.HyperParameters"),
            },
            "ResultPath": "$.launch",
            "Next": "Train",
        },
        "Train": {
            "Type": "Task",
            "Resource": SYNC_RESOURCE,
            "Parameters": _train_parameters(spec),
            "ResultPath": "$.job.raw",
            "Retry": [
                {"ErrorEquals": list(QUOTA_ERRORS), "IntervalSeconds": 60, "BackoffRate": 2.0,
                 "MaxAttempts": 8, "MaxDelaySeconds": 900, "JitterStrategy": "FULL"},
                {"ErrorEquals": list(THROTTLING_ERRORS), "IntervalSeconds": 5, "BackoffRate": 2.0,
                 "MaxAttempts": 6, "MaxDelaySeconds": 120, "JitterStrategy": "FULL"},
            ],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.failure", "Next": "Describe job"}],
            "Next": "Read job",
        },
        "Describe job": {
            "Type": "Task",
            "Comment": "Read the job's own status and FailureReason rather than parsing the task's Cause.",
            "Resource": DESCRIBE_RESOURCE,
            "Parameters": {"TrainingJobName.$": "$.launch.name"},
            "ResultPath": "$.job.raw",
            "Retry": [{"ErrorEquals": list(THROTTLING_ERRORS), "IntervalSeconds": 5, "BackoffRate": 2.0,
                       "MaxAttempts": 4}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.describe_error", "Next": "Job not created"}],
            "Next": "Read job",
        },
        "Job not created": {
            "Type": "Pass",
            "Parameters": {
                "v": {
                    **{k: v for k, v in _JOB_DEFAULTS.items() if k not in ("TrainingJobName", "FailureReason")},
                    "TrainingJobName.$": "$.launch.name",
                    "TrainingJobStatus": "NotCreated",
                    "FailureReason.$": "States.Format('{}: {}', $.failure.Error, $.failure.Cause)",
                },
            },
            "ResultPath": "$.job",
            "Next": "Summarize",
        },
        "Read job": {
            "Type": "Pass",
            "Parameters": {"v.$": "States.JsonMerge($.defaults.job, $.job.raw, false)"},
            "ResultPath": "$.job",
            "Next": "Job outcome",
        },
        "Job outcome": {
            "Type": "Choice",
            "Choices": [
                {"And": [{"Variable": "$.job.v.TrainingJobStatus", "StringEquals": "Failed"},
                         {"Variable": "$.job.v.FailureReason", "StringMatches": "*CapacityError*"},
                         {"Variable": "$.run.attempt", "NumericLessThan": spec.capacity_relaunches}],
                 "Next": "Wait for capacity"},
                {"Or": [{"Variable": "$.job.v.TrainingJobStatus", "StringEquals": "InProgress"},
                        {"Variable": "$.job.v.TrainingJobStatus", "StringEquals": "Stopping"}],
                 "Next": "Stop job"},
            ],
            "Default": "Summarize",
        },
        "Stop job": {
            "Type": "Task",
            "Comment": "The wait for the job broke off while it still runs: stop it rather than leave it billing.",
            "Resource": STOP_RESOURCE,
            "Parameters": {"TrainingJobName.$": "$.launch.name"},
            "ResultPath": "$.stop",
            "Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 5, "BackoffRate": 2.0, "MaxAttempts": 3}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.stop", "Next": "Summarize"}],
            "Next": "Summarize",
        },
        "Wait for capacity": {
            "Type": "Pass",
            "Parameters": {
                "id.$": "$.run.id",
                "execution_tag.$": "$.run.execution_tag",
                "attempt.$": "States.MathAdd($.run.attempt, 1)",
                "wait.$": f"States.ArrayGetItem(States.Array({waits}), $.run.attempt)",
            },
            "ResultPath": "$.run",
            "Next": "Wait before relaunch",
        },
        "Wait before relaunch": {"Type": "Wait", "SecondsPath": "$.run.wait", "Next": "Launch attempt"},
        "Summarize": {
            "Type": "Pass",
            "Parameters": _summary_parameters(spec),
            "ResultPath": "$.result",
            "Next": "Notify",
        },
        "Notify": {
            "Type": "Task",
            "Resource": PUBLISH_RESOURCE,
            "Parameters": {
                "TopicArn": ph.ref(NOTIFICATION_TOPIC_ARN),
                "Subject.$": f"States.Format({literal(f'[{spec.environment}] {spec.workload}: ')[:-1]}{{}}', "
                             "$.result.status)",
                "Message.$": "States.JsonToString($.result)",
                "MessageAttributes": {
                    "workload": {"DataType": "String", "StringValue": spec.workload},
                    "environment": {"DataType": "String", "StringValue": spec.environment},
                    "status": {"DataType": "String", "StringValue.$": "$.result.status"},
                },
            },
            "ResultPath": "$.notification",
            "Retry": publish_retry,
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.notification", "Next": "Succeeded?"}],
            "Next": "Succeeded?",
        },
        "Succeeded?": {
            "Type": "Choice",
            "Choices": [
                {"Variable": "$.result.status", "StringEquals": "Completed", "Next": "Done"},
                {"Variable": "$.result.status", "StringEquals": "NotCreated", "Next": "Job was not created"},
                {"Variable": "$.result.failure_reason", "StringMatches": "*CapacityError*", "Next": "No capacity"},
            ],
            "Default": "Job failed",
        },
        # A terminal Pass rather than a Succeed with OutputPath: the ASL spec allows both, but cfn-lint's
        # Step Functions schema rejects OutputPath on Succeed (E3601), and every template must lint clean.
        "Done": {"Type": "Pass", "OutputPath": "$.result", "End": True},
        "Job was not created": {"Type": "Fail", "Error": "TrainingJobNotCreated", "CausePath": _FAILURE_CAUSE},
        "No capacity": {"Type": "Fail", "Error": "InsufficientCapacity", "CausePath": _FAILURE_CAUSE},
        "Job failed": {"Type": "Fail", "Error": "TrainingJobFailed", "CausePath": _FAILURE_CAUSE},
    }
    return {
        "Comment": f"Training runs of {spec.workload} in {spec.environment}: input {{}} runs the spec as written; "
                   "optional overrides: hyperparameters, instance_count, max_run.",
        "QueryLanguage": "JSONPath",
        "StartAt": "Read input",
        "States": states,
    }


def definition_string(definition: dict[str, Any]) -> str:
    """Compact JSON, the form that goes into the template (size matters at 1,000 workloads)."""
    return json.dumps(definition, separators=(",", ":"), ensure_ascii=False)


def deploy_time_names(definition: dict[str, Any] | str) -> set[str]:
    """Every `${Name}` the definition needs from DefinitionSubstitutions."""
    text = definition if isinstance(definition, str) else definition_string(definition)
    return set(ph.PLACEHOLDER.findall(text))


def substitute_definition(text: str, values: dict[str, str]) -> str:
    """What Step Functions does with DefinitionSubstitutions: replace `${key}` text (tests use this)."""
    return ph.PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)

