"""The Step Functions state machine of one workload, as Amazon States Language (JSONPath), in pure Python.

Why pure Python and not the CDK's state-machine constructs: one definition per workload must synthesize in
milliseconds for a fleet of 1,000 workloads, must run in moto's interpreter in the tests, and must express parts of
CreateTrainingJob that the CDK task cannot (FSx channels, checkpoints, spot, retry strategy). The compiled request
goes in as it is; this module only adds what exists at run time:

- the execution input is checked first (`input_check`); anything wrong ends the execution with `InvalidInput`;
- unless the spec allows concurrent runs, a run that finds an older one of the same state machine in progress ends
  with `AlreadyRunning` before any job (`concurrency`);
- `${RunId}` (12 hex characters, once per execution) and `${Attempt}` (0, 1, ... per capacity relaunch) are made
  with intrinsic functions, so job names are unique whatever the execution was named;
- hyperparameter overrides are encoded like the estimator encodes them (`encoding`) and merged over the spec's;
- quota errors on CreateTrainingJob are retried with backoff; throttling is retried with jittered backoff by states
  of its own, because the optimized integration reports throttling and refusals under one error name
  (`AmazonSageMakerException`) and only the Cause tells them apart; a refused request ends at once in
  `InvalidInput`, except a refused execution tag, which is replaced by the state machine's ARN once; a job that
  failed with `CapacityError` is relaunched under a new name on the next instance type of the schedule, resuming
  from the same checkpoint prefix; where a job may exist without the run knowing its state, `recovery` looks for it
  (after a 5xx) or stops it by name (when the describe fails too);
- the outcome goes to the environment's SNS topic, and the execution's output summarizes the run.

Deploy-time values stay `${Name}` placeholders: Step Functions `DefinitionSubstitutions` fill them.
"""

from __future__ import annotations

import json
from typing import Any

from compiler import catalog, run_metrics
from compiler import placeholders as ph
from compiler.errors import SpecError
from compiler.request import TAG_EXECUTION
from compiler.state_machine import concurrency, cost, input_check, integrations, intrinsics, recovery
from compiler.state_machine.asl import INVALID_INPUT, literal, run_time_format, with_run_time
from compiler.state_machine.encoding import encoding_states, portable_defaults
from compiler.state_machine.machine import MachineSpec

SYNC_RESOURCE = "arn:aws:states:::sagemaker:createTrainingJob.sync"
DESCRIBE_RESOURCE = recovery.DESCRIBE_RESOURCE
STOP_RESOURCE = recovery.STOP_RESOURCE  # StopTrainingJob has no optimized form
PUBLISH_RESOURCE = "arn:aws:states:::sns:publish"
METRICS_RESOURCE = integrations.sdk_resource("cloudwatch", "putMetricData")
NOTIFICATION_TOPIC_ARN = "NotificationTopicArn"  # deploy-time placeholder: the environment's topic ARN

# How SageMaker errors reach Step Functions, per integration kind (the names and their sources:
# `compiler.state_machine.integrations`). The optimized CreateTrainingJob reports unmodelled service errors
# (throttling, validation, 5xx) under one generic name, with the service's error code in the Cause
# (`... (Service: AmazonSageMaker; Status Code: 400; Error Code: ThrottlingException; ...)`); the aws-sdk
# DescribeTrainingJob reports them as `SageMaker.SageMakerException`. Quota errors are modelled.
GENERIC_ERROR = integrations.generic_error("sagemaker", sdk=False)
SDK_GENERIC_ERROR = recovery.SDK_GENERIC_ERROR
QUOTA_ERRORS = integrations.modelled_error("sagemaker", "ResourceLimitExceeded", sdk=False)
THROTTLING_ERRORS = (GENERIC_ERROR,)  # the optimized integration's throttling: told apart by the Cause
# Throttled CreateTrainingJob calls are repeated up to THROTTLE_RETRIES times; before repeat n (0-based) the run
# waits a random whole number of seconds between half and all of min(cap, base x 2^n) ("equal jitter"). Server
# errors (status 5xx, e.g. InternalFailure) share the generic name and the budget, but a 5xx does not say whether the
# job was created: the run looks for the job first and waits on it if it exists (`recovery`).
THROTTLE_RETRIES = 6
THROTTLE_BASE_SECONDS = 5
THROTTLE_MAX_SECONDS = 120
# Execution names may contain these characters, SageMaker tag values may not (botocore's Tag.Value pattern). Other
# characters that tags refuse (symbols beyond ASCII such as a check mark) are found by SageMaker's refusal instead.
_UNTAGGABLE = ("!", "'", "(", ")")
# How a refusal names a tag's value: the service's own message (`Value '...' at 'tags.4.member.value' failed to
# satisfy constraint`) and the botocore-path spelling (`Tags[3].Value: ...`). Step Functions' StringMatches knows
# only `*` as a wildcard (moto's interpreter uses fnmatch, where `[` would open a class): no brackets here.
_TAG_VALUE_REFUSALS = ("*tags.*.member.value*", "*Tags*.Value*")
_SERVER_ERROR = "*Status Code: 5*"
_JOB_DEFAULTS = {"TrainingJobName": "", "TrainingJobArn": "", "TrainingJobStatus": "Unknown", "FailureReason": "",
                 "BillableTimeInSeconds": 0, "TrainingTimeInSeconds": 0, "ModelArtifacts": {"S3ModelArtifacts": ""}}
# The cause of a failed run: workload, job, status and attempts, then SageMaker's FailureReason as it is.
_FAILURE_CAUSE = ("States.Format('{} {} {} after {} attempt(s): {}', $.result.workload, $.result.job_name, "
                  "$.result.status, $.result.attempts, $.result.failure_reason)")
_RUN_ID = "States.ArrayGetItem(States.StringSplit(States.UUID(), '-'), 4)"
TRAIN = "Train"
REFUSED_OR_THROTTLED = "Refused or throttled?"


def _mixed_environments(spec: MachineSpec) -> bool:
    """Whether some instance types send an Environment and others none (EFA variables only some types need)."""
    return len({v.environment is None for v in spec.variants}) > 1


def _train_parameters(spec: MachineSpec) -> dict[str, Any]:
    """CreateTrainingJob parameters: the compiled request with run-time values, overrides and the variant wired in."""
    request = {k: v for k, v in spec.request.items() if k not in ("TrainingJobName", "HyperParameters", "Environment")}
    params = with_run_time(request, "request")
    params["TrainingJobName.$"] = "$.launch.name"
    params["HyperParameters.$"] = "States.JsonMerge($.launch.hyperparameters, $.enc.v, false)"
    resources = {k: v for k, v in params["ResourceConfig"].items() if k not in ("InstanceCount", "InstanceType")}
    if spec.variants:
        resources["InstanceCount.$"] = "$.config.instance_count"
        resources["InstanceType.$"] = "$.launch.variant.instance_type"
        algorithm = {k: v for k, v in params["AlgorithmSpecification"].items() if k != "TrainingImage"}
        params["AlgorithmSpecification"] = {**algorithm, "TrainingImage.$": "$.launch.variant.image"}
        if any(v.environment is not None for v in spec.variants):
            params["Environment.$"] = "$.launch.variant.environment"
    else:
        resources = dict(params["ResourceConfig"])
        if "Environment" in spec.request:
            params["Environment"] = spec.request["Environment"]
    params["ResourceConfig"] = resources
    stopping = {k: v for k, v in params["StoppingCondition"].items() if k != "MaxRuntimeInSeconds"}
    runtime = "$.grant.seconds" if spec.policy.cost_ceiling_usd is not None else "$.config.max_run"
    params["StoppingCondition"] = {"MaxRuntimeInSeconds.$": runtime, **stopping}
    params["Tags"] = [*(t for t in params.get("Tags", []) if t.get("Key") != TAG_EXECUTION),
                      {"Key": TAG_EXECUTION, "Value.$": "$.run.tag.value"}]
    return params


def _summary_parameters(spec: MachineSpec) -> dict[str, Any]:
    """The execution's output and the notification's body."""
    summary: dict[str, Any] = {
        "workload": spec.workload, "environment": spec.environment,
        "execution_arn.$": "$$.Execution.Id", "run_id.$": "$.run.id", "attempts.$": "States.MathAdd($.run.attempt, 1)",
        "job_name.$": "$.job.v.TrainingJobName", "job_arn.$": "$.job.v.TrainingJobArn",
        "status.$": "$.job.v.TrainingJobStatus", "failure_reason.$": "$.job.v.FailureReason",
        "billable_seconds.$": "$.job.v.BillableTimeInSeconds", "training_seconds.$": "$.job.v.TrainingTimeInSeconds",
        "model_artifacts.$": "$.job.v.ModelArtifacts.S3ModelArtifacts",
        "instance_count.$": "$.config.instance_count",
        "cost_estimate": f"cost_per_hour_usd x billable_seconds / 3600 (catalog list prices in {catalog.PRICE_REGION}, "
                         f"{catalog.PRICES_AS_OF}; null where no price is known)",
        "overrides.$": "$.input",
    }
    if spec.policy.cost_ceiling_usd is not None:
        summary["cost_ceiling_usd"] = spec.policy.cost_ceiling_usd
        summary["max_runtime_seconds.$"] = "$.grant.seconds"
        summary["budget_left_seconds.$"] = "$.run.budget"
    if spec.variants:
        summary["instance_type.$"] = "$.launch.variant.instance_type"
        summary["cost_per_hour_usd.$"] = ("States.ArrayGetItem(States.StringToJson($.launch.variant.rates), "
                                          "States.MathAdd($.config.instance_count, -1))")
    else:
        summary["instance_type"] = spec.instance_type
        if spec.group_rate is None:  # a literal null fails the ASL schema in some places: make it at run time
            summary["cost_per_hour_usd.$"] = "States.StringToJson('null')"
        else:
            summary["cost_per_hour_usd"] = spec.group_rate
    return summary


def _defaults(spec: MachineSpec) -> dict[str, Any]:
    defaults: dict[str, Any] = {"job": _JOB_DEFAULTS, "hyperparameters": portable_defaults(spec.policy)}
    if spec.variants:
        defaults["variants"] = [v.as_state_input() for v in spec.variants]
        defaults["schedule"] = spec.schedule()
    return defaults


def _start_states(spec: MachineSpec, encode_entry: str) -> dict[str, Any]:
    untaggable = {"Or": [{"Variable": "$$.Execution.Name", "StringMatches": f"*{c}*"} for c in _UNTAGGABLE]}
    return {
        "Execution name taggable?": {"Type": "Choice", "Choices": [{**untaggable, "Next": "Tag with state machine"}],
                                     "Default": "Tag with execution"},
        "Tag with execution": {"Type": "Pass", "Parameters": {"value.$": "$$.Execution.Id", "execution": True},
                               "ResultPath": "$.tag", "Next": "Start run"},
        "Tag with state machine": {
            "Type": "Pass", "Comment": "The execution name has characters SageMaker tags refuse: tag the state machine.",
            "Parameters": {"value.$": "$$.StateMachine.Id", "execution": False}, "ResultPath": "$.tag",
            "Next": "Start run",
        },
        "Start run": {
            "Type": "Pass",
            "Parameters": {"input.$": "$.input", "config.$": "$.config", "enc": {"v": {}}, "defaults": _defaults(spec),
                           "run": {"id.$": _RUN_ID, "attempt": 0, "tag.$": "$.tag", "throttle": {"n": 0},
                                   **cost.run_budget(spec)}},
            "Next": encode_entry,
        },
    }


def _launch_states(spec: MachineSpec) -> dict[str, Any]:
    """Per attempt: the job's name, its hyperparameters (run-time values filled), the instance type's variant, and
    (with a cost ceiling) the run time it is granted."""
    states = _launch_parts(spec)
    if spec.policy.cost_ceiling_usd is None:
        return states
    for state in states.values():
        if state.get("Next") == TRAIN:
            state["Next"] = cost.GRANT
    return {**states, **cost.grant_states(spec.policy, TRAIN, _JOB_DEFAULTS, "Summarize")}


def _launch_parts(spec: MachineSpec) -> dict[str, Any]:
    name = run_time_format(spec.request["TrainingJobName"]) or "$.run.id"
    compiled = with_run_time(dict(spec.request.get("HyperParameters", {})), "request.HyperParameters")
    if not spec.variants:
        return {"Launch attempt": {"Type": "Pass", "Parameters": {"name.$": name, "hyperparameters": compiled},
                                   "ResultPath": "$.launch", "Next": TRAIN}}
    variant = "States.ArrayGetItem($.defaults.variants, States.ArrayGetItem($.defaults.schedule, $.run.attempt))"
    return {
        "Launch attempt": {"Type": "Pass", "Parameters": {"name.$": name, "variant.$": variant, "compiled": compiled},
                           "ResultPath": "$.launch", "Next": "Variant hyperparameters"},
        "Variant hyperparameters": {
            "Type": "Pass", "Comment": "The instance type's own SDK values (e.g. sagemaker_instance_type) win.",
            "Parameters": {"name.$": "$.launch.name", "variant.$": "$.launch.variant",
                           "hyperparameters.$": "States.JsonMerge($.launch.compiled, $.launch.variant.hyperparameters, "
                                                "false)"},
            "ResultPath": "$.launch", "Next": TRAIN,
        },
    }


def _train_states(spec: MachineSpec) -> dict[str, Any]:
    """The CreateTrainingJob task; twice where only some types send an Environment.

    A Task cannot leave a field out at run time, and `Environment: {}` is not what the SDK sends for a type that
    needs no variables, so such types get their own task without the field.
    """
    parameters = _train_parameters(spec)
    train = {
        "Type": "Task", "Resource": SYNC_RESOURCE, "Parameters": parameters, "ResultPath": "$.job.raw",
        "Retry": [
            {"ErrorEquals": list(QUOTA_ERRORS), "IntervalSeconds": 60, "BackoffRate": 2.0, "MaxAttempts": 8,
             "MaxDelaySeconds": 900, "JitterStrategy": "FULL"},
        ],
        "Catch": [
            {"ErrorEquals": [GENERIC_ERROR], "ResultPath": "$.failure", "Next": REFUSED_OR_THROTTLED},
            {"ErrorEquals": ["States.ALL"], "ResultPath": "$.failure", "Next": "Describe job"},
        ],
        "Next": "Read job",
    }
    if not _mixed_environments(spec):
        return {TRAIN: train}
    bare = {k: v for k, v in parameters.items() if k != "Environment.$"}
    return {
        TRAIN: {"Type": "Choice",
                "Choices": [{"Variable": "$.launch.variant.has_environment", "BooleanEquals": False,
                             "Next": "Train without environment"}],
                "Default": "Train with environment"},
        "Train with environment": train,
        "Train without environment": {**train, "Parameters": bare},
    }


def throttle_delays() -> list[tuple[int, int]]:
    """(shortest, longest) wait in seconds before each repeat of a throttled CreateTrainingJob."""
    caps = [min(THROTTLE_MAX_SECONDS, THROTTLE_BASE_SECONDS * 2**n) for n in range(THROTTLE_RETRIES)]
    return [((cap + 1) // 2, cap) for cap in caps]


def _matches(*pairs: tuple[str, str]) -> dict[str, Any]:
    """A Choice rule true when any (path, pattern) pair matches."""
    rules = [{"Variable": path, "StringMatches": pattern} for path, pattern in pairs]
    return rules[0] if len(rules) == 1 else {"Or": rules}


def _refusal_states() -> dict[str, Any]:
    """What to do when CreateTrainingJob was not accepted: refused (no job exists), or throttled (try again).

    Checked in this order: a refusal that names a tag's value (only a refusal does) while the job is still tagged
    with the execution ARN is tried once more, tagged with the state machine's ARN (an execution name may hold
    characters SageMaker tags refuse; the spec's own tags are checked when it is loaded); any other refusal is
    invalid input; a server error first looks for a job the call may have created (`recovery`); throttling, and a
    server error that left no job, is repeated after a jittered, growing wait (ASL has no multiplication, so the
    delays are precomputed) until the budget is spent; anything else is read from the job, if one exists, and a job
    whose state cannot be read is stopped by name.
    """
    error, cause = "$.failure.Error", "$.failure.Cause"
    refused = _matches((error, "*ValidationException*"), (cause, "*ValidationException*"))
    throttled = _matches((error, "*ThrottlingException*"), (cause, "*ThrottlingException*"))
    delays = throttle_delays()
    shortest = ", ".join(str(low) for low, _ in delays)
    longest = ", ".join(str(high) for _, high in delays)
    return {
        REFUSED_OR_THROTTLED: {
            "Type": "Choice",
            "Choices": [
                {"And": [{"Variable": "$.run.tag.execution", "BooleanEquals": True},
                         _matches(*((cause, pattern) for pattern in _TAG_VALUE_REFUSALS))],
                 "Next": "Tag with state machine instead"},
                {**refused, "Next": "Refused by SageMaker"},
                {**_matches((cause, _SERVER_ERROR)), "Next": recovery.CREATED_ANYWAY},
                {"And": [throttled, {"Variable": "$.run.throttle.n", "NumericLessThan": THROTTLE_RETRIES}],
                 "Next": "Back off"},
                {**throttled, "Next": "Throttled too often"},
            ],
            "Default": "Describe job",
        },
        "Tag with state machine instead": {
            "Type": "Pass",
            "Comment": "SageMaker refused the execution ARN as a tag value (no job exists): tag the state machine.",
            "Parameters": {"value.$": "$$.StateMachine.Id", "execution": False}, "ResultPath": "$.run.tag",
            "Next": TRAIN,
        },
        "Back off": {
            "Type": "Pass",
            "Parameters": {"n.$": "States.MathAdd($.run.throttle.n, 1)",
                           "wait.$": f"States.MathRandom(States.ArrayGetItem(States.Array({shortest}), $.run.throttle.n), "
                                     f"States.ArrayGetItem(States.Array({longest}), $.run.throttle.n))"},
            "ResultPath": "$.run.throttle", "Next": "Wait out throttling",
        },
        "Wait out throttling": {"Type": "Wait", "SecondsPath": "$.run.throttle.wait", "Next": TRAIN},
        **recovery.server_error_states("Back off", "Throttled too often", "Read job", THROTTLE_RETRIES),
        "Throttled too often": {
            "Type": "Pass",
            "Parameters": {"Error.$": "$.failure.Error",
                           "Cause.$": "States.Format('CreateTrainingJob was throttled (or SageMaker was "
                                      "unavailable) {} times in a row; the last answer: {}', "
                                      "States.MathAdd($.run.throttle.n, 1), $.failure.Cause)"},
            "ResultPath": "$.failure", "Next": "Job not created",
        },
    }


def _job_states(spec: MachineSpec) -> dict[str, Any]:
    waits = ", ".join(str(w) for w in spec.capacity_waits())
    return {
        **_train_states(spec),
        **_refusal_states(),
        "Describe job": {
            "Type": "Task", "Comment": "Read the job's own status and FailureReason rather than parsing the task's Cause.",
            "Resource": DESCRIBE_RESOURCE, "Parameters": {"TrainingJobName.$": "$.launch.name"},
            "ResultPath": "$.job.raw",
            "Retry": [{"ErrorEquals": [SDK_GENERIC_ERROR], "IntervalSeconds": 5, "BackoffRate": 2.0,
                       "MaxAttempts": 4}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.describe_error", "Next": "Refused as invalid?"}],
            "Next": "Read job",
        },
        "Refused as invalid?": {
            "Type": "Choice",
            "Comment": "SageMaker refused the request itself (e.g. an overriding value over its length limit): "
                       "invalid input, and no job exists. SageMaker says no job of the name exists: not created. "
                       "Otherwise a job may exist: stop it by name.",
            "Choices": [{"Or": [{"Variable": "$.failure.Error", "StringMatches": "*ValidationException*"},
                                {"Variable": "$.failure.Cause", "StringMatches": "*ValidationException*"}],
                         "Next": "Refused by SageMaker"},
                        {"Variable": "$.describe_error.Error", "StringEquals": recovery.NOT_FOUND_ERRORS[0],
                         "Next": "Job not created"}],
            "Default": recovery.STOP_UNKNOWN,
        },
        **recovery.unknown_job_states(_JOB_DEFAULTS, "Summarize"),
        "Refused by SageMaker": {"Type": "Fail", "Error": INVALID_INPUT,
                                 "CausePath": "States.Format('SageMaker refused the request: {}', $.failure.Cause)"},
        "Job not created": {
            "Type": "Pass",
            "Parameters": {"v": {**{k: v for k, v in _JOB_DEFAULTS.items() if k not in ("TrainingJobName", "FailureReason")},
                                 "TrainingJobName.$": "$.launch.name", "TrainingJobStatus": "NotCreated",
                                 "FailureReason.$": "States.Format('{}: {}', $.failure.Error, $.failure.Cause)"}},
            "ResultPath": "$.job", "Next": "Summarize",
        },
        "Read job": {"Type": "Pass", "Parameters": {"v.$": "States.JsonMerge($.defaults.job, $.job.raw, false)"},
                     "ResultPath": "$.job", "Next": "Job outcome"},
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
            "Type": "Task", "Comment": "The wait for the job broke off while it still runs: stop it rather than leave it "
                                       "billing.",
            "Resource": STOP_RESOURCE, "Parameters": {"TrainingJobName.$": "$.launch.name"}, "ResultPath": "$.stop",
            "Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 5, "BackoffRate": 2.0, "MaxAttempts": 3}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.stop", "Next": "Summarize"}],
            "Next": "Summarize",
        },
        "Wait for capacity": {
            "Type": "Pass",
            "Parameters": {"id.$": "$.run.id", "tag.$": "$.run.tag", "throttle": {"n": 0},
                           "attempt.$": "States.MathAdd($.run.attempt, 1)",
                           "wait.$": f"States.ArrayGetItem(States.Array({waits}), $.run.attempt)",
                           **cost.spent_budget(spec)},
            "ResultPath": "$.run", "Next": "Count relaunch",
        },
        "Count relaunch": _count(spec, run_metrics.CAPACITY_RELAUNCHES, "Wait before relaunch"),
        "Wait before relaunch": {"Type": "Wait", "SecondsPath": "$.run.wait", "Next": "Launch attempt"},
    }


def _count(spec: MachineSpec, metric: str, next_state: str) -> dict[str, Any]:
    """Add 1 to one of the platform's run metrics, for the workload and for the environment as a whole.

    Step Functions publishes started, succeeded and failed executions itself; capacity relaunches it cannot see.
    A metric that cannot be written never changes the run: any error goes on to `next_state`.
    """
    def datum(*dimensions: tuple[str, str]) -> dict[str, Any]:
        return {"MetricName": metric, "Unit": "Count", "Value": 1,
                "Dimensions": [{"Name": name, "Value": value} for name, value in dimensions]}

    environment = (run_metrics.ENVIRONMENT, spec.environment)
    return {
        "Type": "Task", "Resource": METRICS_RESOURCE,
        "Parameters": {"Namespace": run_metrics.NAMESPACE,
                       "MetricData": [datum(environment, (run_metrics.WORKLOAD, spec.workload)), datum(environment)]},
        "ResultPath": None,
        "Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 2, "BackoffRate": 2.0, "MaxAttempts": 2}],
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": None, "Next": next_state}],
        "Next": next_state,
    }


def _end_states(spec: MachineSpec) -> dict[str, Any]:
    subject = f"States.Format({literal(f'[{spec.environment}] {spec.workload}: ')[:-1]}{{}}', $.result.status)"
    states: dict[str, Any] = {
        "Summarize": {"Type": "Pass", "Parameters": _summary_parameters(spec), "ResultPath": "$.result",
                      "Next": "Notify"},
        "Notify": {
            "Type": "Task", "Resource": PUBLISH_RESOURCE,
            "Parameters": {
                "TopicArn": ph.ref(NOTIFICATION_TOPIC_ARN), "Subject.$": subject,
                "Message.$": "States.JsonToString($.result)",
                "MessageAttributes": {
                    "workload": {"DataType": "String", "StringValue": spec.workload},
                    "environment": {"DataType": "String", "StringValue": spec.environment},
                    "status": {"DataType": "String", "StringValue.$": "$.result.status"},
                },
            },
            "ResultPath": "$.notification",
            "Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 5, "BackoffRate": 2.0, "MaxAttempts": 3}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.notification", "Next": "Succeeded?"}],
            "Next": "Succeeded?",
        },
        "Succeeded?": {
            "Type": "Choice",
            "Choices": [
                {"Variable": "$.result.status", "StringEquals": "Completed", "Next": "Done"},
                {"Variable": "$.result.status", "StringEquals": "NotCreated", "Next": "Job was not created"},
                {"Variable": "$.result.failure_reason", "StringMatches": "*CapacityError*",
                 "Next": "Count exhausted capacity"},
            ],
            "Default": "Job failed",
        },
        # A terminal Pass rather than a Succeed with OutputPath: the ASL spec allows both, but cfn-lint's Step
        # Functions schema rejects OutputPath on Succeed (E3601), and every template must lint clean.
        "Done": {"Type": "Pass", "OutputPath": "$.result", "End": True},
        "Job was not created": {"Type": "Fail", "Error": "TrainingJobNotCreated", "CausePath": _FAILURE_CAUSE},
        "Count exhausted capacity": _count(spec, run_metrics.CAPACITY_EXHAUSTED, "No capacity"),
        "No capacity": {"Type": "Fail", "Error": "InsufficientCapacity", "CausePath": _FAILURE_CAUSE},
        "Job failed": {"Type": "Fail", "Error": "TrainingJobFailed", "CausePath": _FAILURE_CAUSE},
    }
    if spec.policy.cost_ceiling_usd is not None:
        states["Succeeded?"]["Choices"].insert(2, {"Variable": "$.result.status", "StringEquals": cost.STATUS,
                                                   "Next": "Cost ceiling reached"})
        states["Cost ceiling reached"] = {"Type": "Fail", "Error": cost.ERROR, "CausePath": _FAILURE_CAUSE}
    return states


def build_definition(spec: MachineSpec) -> dict[str, Any]:
    """The ASL definition (JSONPath) of the workload's state machine."""
    encode_entry, encode_states = encoding_states(spec.policy, "Launch attempt")
    guard_entry, guard_states = concurrency.concurrency_states(spec.workload, spec.concurrent_runs,
                                                               input_check.LAST_NEXT)
    checks = input_check.input_states(spec.policy)
    checks["Input is valid"]["Next"] = guard_entry
    states: dict[str, Any] = {
        **checks,
        **guard_states,
        **_start_states(spec, encode_entry),
        **encode_states,
        **_launch_states(spec),
        **_job_states(spec),
        **_end_states(spec),
    }
    definition = {
        "Comment": f"Training runs of {spec.workload} in {spec.environment}: input {{}} runs the spec as written; "
                   f"optional overrides: {', '.join(spec.policy.fields)}.",
        "QueryLanguage": "JSONPath",
        "StartAt": input_check.FIRST,
        "States": states,
    }
    # What CreateStateMachine would refuse stops validate, synth and the tests here, before any deploy.
    problems = [*input_check.limit_problems(spec.policy, spec.request.get("HyperParameters", {}), spec.source),
                *integrations.definition_problems(definition, spec.source),
                *intrinsics.definition_problems(definition, spec.source)]
    if problems:
        raise SpecError(problems)
    return definition


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


