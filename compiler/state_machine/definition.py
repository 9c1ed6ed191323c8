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

from compiler.errors import SpecError
from compiler.facts import catalog, run_metrics
from compiler.facts import placeholders as ph
from compiler.state_machine import (
    clock,
    concurrency,
    cost,
    create,
    input_check,
    integrations,
    intrinsics,
    poll,
    preferences,
    recovery,
    relaunch,
    watchdog,
)
from compiler.state_machine.asl import INVALID_INPUT, format_call, run_time_format, with_run_time
from compiler.state_machine.encoding import encoding_states, portable_defaults
from compiler.state_machine.machine import MachineSpec

CREATE_RESOURCE = create.CREATE_RESOURCE
DESCRIBE_RESOURCE = recovery.DESCRIBE_RESOURCE
STOP_RESOURCE = recovery.STOP_RESOURCE  # StopTrainingJob has no optimized form
PUBLISH_RESOURCE = "arn:aws:states:::sns:publish"
METRICS_RESOURCE = integrations.sdk_resource("cloudwatch", "putMetricData")
NOTIFICATION_TOPIC_ARN = "NotificationTopicArn"  # deploy-time placeholder: the environment's topic ARN

# How SageMaker errors reach Step Functions (names and sources: `integrations`; how they are told apart: `create`).
GENERIC_ERROR = create.GENERIC_ERROR
SDK_GENERIC_ERROR = recovery.SDK_GENERIC_ERROR
QUOTA_ERRORS = create.QUOTA_ERRORS
THROTTLING_ERRORS = create.THROTTLING_ERRORS
THROTTLE_RETRIES = create.THROTTLE_RETRIES
throttle_delays = create.throttle_delays
# Execution names may contain these characters, SageMaker tag values may not (botocore's Tag.Value pattern). Other
# characters that tags refuse (symbols beyond ASCII such as a check mark) are found by SageMaker's refusal instead.
_UNTAGGABLE = ("!", "'", "(", ")")
_JOB_DEFAULTS = {"TrainingJobName": "", "TrainingJobArn": "", "TrainingJobStatus": "Unknown", "FailureReason": "",
                 "BillableTimeInSeconds": 0, "TrainingTimeInSeconds": 0, "ModelArtifacts": {"S3ModelArtifacts": ""}}
# The cause of a failed run: workload, job, status and attempts, then SageMaker's FailureReason as it is.
_FAILURE_CAUSE = ("States.Format('{} {} {} after {} attempt(s): {}', $.result.workload, $.result.job_name, "
                  "$.result.status, $.result.attempts, $.result.failure_reason)")
_RUN_ID = "States.ArrayGetItem(States.StringSplit(States.UUID(), '-'), 4)"
TRAIN = create.TRAIN
STALLED_ERROR = "TrainingStalled"  # a run whose job the stall watchdog stopped, with no relaunch left


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
        "cost_estimate": f"cost_per_hour_usd x billable_seconds / 3600 ({catalog.prices_note(spec.price_region)}; null "
                         "where no price is known)",
        "overrides.$": "$.input",
    }
    if spec.stall is not None:  # how often the watchdog relaunched: the reason a run took longer, or ended Stalled
        summary["stall_relaunches.$"] = "$.run.stalls"
        summary["stall_watchdog"] = {"metric": spec.stall.metric, "minutes": spec.stall.minutes,
                                     "max_relaunches": spec.stall.max_relaunches}
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
    if spec.stall is not None:
        defaults[watchdog.CLOCK_DEFAULTS] = clock.defaults()
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
                           "run": {"id.$": _RUN_ID, "attempt": 0, "slot": 0, "stalls": 0, "tag.$": "$.tag", "throttle": {"n": 0},
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
    variant = "States.ArrayGetItem($.defaults.variants, States.ArrayGetItem($.defaults.schedule, $.run.slot))"
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


def _job_states(spec: MachineSpec) -> dict[str, Any]:
    refused = [{"Variable": "$.failure.Cause", "StringMatches": pattern} for pattern in create.REFUSALS]
    return {
        **create.train_states(spec),
        **create.refusal_states(),
        **create.quota_states(spec),
        **poll.poll_states(spec.waiting, spec.training_poll_seconds,
                           (watchdog.START_CLOCK, watchdog.ENTRY) if spec.stall else None, "Read job", _JOB_DEFAULTS,
                           "Summarize"),
        **(watchdog.watchdog_states(spec.stall, spec.training_poll_seconds) if spec.stall else {}),
        "Describe job": {
            "Type": "Task", "Comment": "Read the job's own status and FailureReason rather than parsing the task's Cause.",
            "Resource": DESCRIBE_RESOURCE, "Parameters": {"TrainingJobName.$": "$.launch.name"},
            "ResultPath": "$.job.raw",
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.describe_error", "Next": "Refused as invalid?"}],
            "Next": "Read job",
        },
        "Refused as invalid?": {
            "Type": "Choice",
            "Comment": "SageMaker refused the request itself (e.g. an overriding value over its length limit): "
                       "invalid input, and no job exists. SageMaker says no job of the name exists: not created. "
                       "The describe was throttled: look again. Otherwise a job may exist: stop it by name.",
            "Choices": [{"Or": refused, "Next": "Refused by SageMaker"},
                        {"Or": [{"Variable": "$.describe_error.Error", "StringEquals": recovery.NOT_FOUND_ERRORS[0]},
                                {"Variable": "$.describe_error.Cause", "StringMatches": recovery.NOT_FOUND_CAUSE}],
                         "Next": "Job not created"},
                        {"And": [{"Or": [{"Variable": "$.describe_error.Cause", "StringMatches": pattern}
                                         for pattern in (*create.THROTTLING, create.SERVER_ERROR)]},
                                 {"Variable": "$.run.throttle.n", "NumericLessThan": THROTTLE_RETRIES}],
                         "Next": "Back off the describe"}],
            "Default": recovery.STOP_UNKNOWN,
        },
        "Back off the describe": {
            "Type": "Pass",
            "Parameters": {"n.$": "States.MathAdd($.run.throttle.n, 1)",
                           "wait.$": create.throttle_wait("$.run.throttle.n")},
            "ResultPath": "$.run.throttle", "Next": "Wait to describe",
        },
        "Wait to describe": {"Type": "Wait", "SecondsPath": "$.run.throttle.wait", "Next": "Describe job"},
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
                     "ResultPath": "$.job",
                     "Next": preferences.SELECTED if preferences.preferred_types(spec) else relaunch.OUTCOME},
        **(preferences.selected_states(spec, relaunch.OUTCOME) if preferences.preferred_types(spec) else {}),
        **relaunch.outcome_states(spec, lambda metric, next_state: _count(spec, metric, next_state), "Summarize"),
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
    subject = format_call(f"[{spec.environment}] {spec.workload}: {{}}", "$.result.status")
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
    if spec.stall is not None:
        states["Succeeded?"]["Choices"].insert(2, {"Variable": "$.result.status", "StringEquals": relaunch.STALLED_STATUS,
                                                   "Next": "Training stalled"})
        states["Training stalled"] = {"Type": "Fail", "Error": STALLED_ERROR, "CausePath": _FAILURE_CAUSE}
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
                *preferences.problems(spec),
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


