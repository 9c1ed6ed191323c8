"""CreateTrainingJob through the AWS SDK integration, and what the run does when the call is not accepted.

`arn:aws:states:::aws-sdk:sagemaker:createTrainingJob` returns as soon as SageMaker accepts the request (the wait is
`poll`'s), and takes every member of botocore's CreateTrainingJobRequest. Its errors ("AWS SDK service
integrations", error handling; names in `integrations`): the modelled ones as `SageMaker.<Shape>Exception` (quota:
`SageMaker.ResourceLimitExceededException`), everything else (throttling, validation, 5xx) as
`SageMaker.SageMakerException`, with the service's message and `(Service: SageMaker, Status Code: <n>, Request ID:
<id>)` as the Cause; the AWS SDK for Java 2.x's exception message, which names no error code
(docs/aws-assumptions.md). So the Cause is read for the status code (5xx: a server error), throttling's message
("Rate exceeded", or a word naming throttling) and a validation failure's ("validation error(s) detected", the AWS
JSON protocol's wording); an error code (`ValidationException`, `ThrottlingException`) never appears in it.

A quota refusal (`ResourceLimitExceeded`: "The account-level service limit '<type> for training job usage' is N
Instances, with current utilization of M Instances and a request delta of K Instances") creates no job, and waiting
rarely helps (a new account's quota is often 0): the run moves to the next instance type of the schedule at once,
from the budget of capacity relaunches, and where none is left it ends "not created", naming the quota and how to
raise it.
"""

from __future__ import annotations

from typing import Any

from compiler.compilation.request import TAG_EXECUTION
from compiler.state_machine import integrations, poll, preferences, recovery, relaunch
from compiler.state_machine.asl import format_call, with_run_time
from compiler.state_machine.machine import MachineSpec

CREATE_RESOURCE = integrations.sdk_resource("sagemaker", "createTrainingJob")
GENERIC_ERROR = integrations.generic_error("sagemaker", sdk=True)
QUOTA_ERRORS = integrations.modelled_error("sagemaker", "ResourceLimitExceeded", sdk=True)
THROTTLING_ERRORS = (GENERIC_ERROR,)  # told apart from refusals and server errors by the Cause
# Throttled CreateTrainingJob calls are repeated up to THROTTLE_RETRIES times; before repeat n (0-based) the run
# waits a random whole number of seconds between half and all of min(cap, base x 2^n) ("equal jitter"). Server
# errors (status 5xx, e.g. InternalFailure) share the generic name and the budget, but a 5xx does not say whether the
# job was created: the run looks for the job first and waits on it if it exists (`recovery`).
THROTTLE_RETRIES = 6
THROTTLE_BASE_SECONDS = 5
THROTTLE_MAX_SECONDS = 120
# How a refusal names a tag's value: the service's own message (`Value '...' at 'tags.4.member.value' failed to
# satisfy constraint`) and the botocore-path spelling (`Tags[3].Value: ...`). Step Functions' StringMatches knows
# only `*` as a wildcard (moto's interpreter uses fnmatch, where `[` would open a class): no brackets here.
TAG_VALUE_REFUSALS = ("*tags.*.member.value*", "*Tags*.Value*")
REFUSALS = ("*validation error*",)
THROTTLING = ("*Rate exceeded*", "*hrottl*")
SERVER_ERROR = "*Status Code: 5*"
TRAIN = "Train"
REFUSED_OR_THROTTLED = "Refused or throttled?"
QUOTA_REFUSED = "Another type within quota?"
QUOTA_EXCEEDED = "Quota exceeded"


def _mixed_environments(spec: MachineSpec) -> bool:
    """Whether some instance types send an Environment and others none (EFA variables only some types need)."""
    return len({v.environment is None for v in spec.variants}) > 1


def train_parameters(spec: MachineSpec) -> dict[str, Any]:
    """CreateTrainingJob parameters: the compiled request with run-time values, overrides and the variant wired in."""
    request = {k: v for k, v in spec.request.items() if k not in ("TrainingJobName", "HyperParameters", "Environment")}
    params = with_run_time(request, "request")
    params["TrainingJobName.$"] = "$.launch.name"
    params["HyperParameters.$"] = "States.JsonMerge($.launch.hyperparameters, $.enc.v, false)"
    resources = {k: v for k, v in params["ResourceConfig"].items() if k not in ("InstanceCount", "InstanceType")}
    preferred = preferences.preferred_types(spec)
    if preferred:  # one request for every type: SageMaker picks the first with capacity
        resources["InstanceCount.$"] = "$.config.instance_count"
        resources["InstancePreferences"] = [{"InstanceType": t} for t in preferred]
        if "Environment" in spec.request:
            params["Environment"] = spec.request["Environment"]
    elif spec.variants:
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
    if spec.waiting.pending_limit is not None:  # SageMaker bounds the wait for instances (`poll.waiting`)
        params["StoppingCondition"]["MaxPendingTimeInSeconds"] = spec.waiting.pending_limit
    params["Tags"] = [*(t for t in params.get("Tags", []) if t.get("Key") != TAG_EXECUTION),
                      {"Key": TAG_EXECUTION, "Value.$": "$.run.tag.value"}]
    return params


def train_states(spec: MachineSpec) -> dict[str, Any]:
    """The CreateTrainingJob task; twice where only some types send an Environment.

    A Task cannot leave a field out at run time, and `Environment: {}` is not what the SDK sends for a type that
    needs no variables, so such types get their own task without the field.
    """
    parameters = train_parameters(spec)
    train = {
        "Type": "Task", "Resource": CREATE_RESOURCE, "Parameters": parameters, "ResultPath": "$.created",
        "Catch": [
            {"ErrorEquals": list(QUOTA_ERRORS), "ResultPath": "$.failure", "Next": quota_entry(spec)},
            {"ErrorEquals": [GENERIC_ERROR], "ResultPath": "$.failure", "Next": REFUSED_OR_THROTTLED},
            {"ErrorEquals": ["States.ALL"], "ResultPath": "$.failure", "Next": "Describe job"},
        ],
        "Next": poll.WATCH,
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


def _has_fallbacks(spec: MachineSpec) -> bool:
    """Whether the run relaunches on other types one request at a time (not InstancePreferences)."""
    return len({v.instance_type for v in spec.variants}) > 1 and not preferences.preferred_types(spec)


def quota_entry(spec: MachineSpec) -> str:
    return QUOTA_REFUSED if _has_fallbacks(spec) else QUOTA_EXCEEDED


def quota_states(spec: MachineSpec) -> dict[str, Any]:
    """A quota refusal: the next type of the schedule at once where one is left, else the end of the run."""
    fix = ("SageMaker refused the job for a quota of this account and region: {}; raise that quota in Service Quotas "
           "(Amazon SageMaker, the quota the message names; `trainctl preflight` lists the training quotas the "
           "workloads need)")
    fallbacks = _has_fallbacks(spec)
    if fallbacks:
        fix += ", or start the run again once other jobs of the account on those types end (its capacity relaunches "
        fix += "are spent)"
    elif preferences.preferred_types(spec):  # its fallback types are already in the one request
        fix += (", or start the run again once other jobs of the account on those types end (the run asks for all its "
                "types in one request, as instance_preferences)")
    else:
        fix += ", or add capacity_retry.fallback_instance_types for the run to move to"
    states: dict[str, Any] = {
        QUOTA_EXCEEDED: {
            "Type": "Pass", "Parameters": {"Error.$": "$.failure.Error",
                                           "Cause.$": format_call(fix + ".", "$.failure.Cause")},
            "ResultPath": "$.failure", "Next": "Job not created",
        },
    }
    if fallbacks:
        states[QUOTA_REFUSED] = {"Type": "Choice", "Default": QUOTA_EXCEEDED,
                                 "Choices": [{"Variable": "$.run.slot", "NumericLessThan": spec.capacity_relaunches,
                                              "Next": "Next type within quota"}]}
        states["Next type within quota"] = {
            "Type": "Pass", "Comment": "No job was created: the next type of the schedule at once.",
            "Parameters": relaunch.next_run(spec, 0, next_type=True, job_ran=False), "ResultPath": "$.run",
            "Next": relaunch.LAUNCH,
        }
    return states


def throttle_wait(count: str) -> str:
    """The wait before repeat `count` (a path to the repeats made), drawn between the bounds of `throttle_delays`."""
    delays = throttle_delays()
    shortest = ", ".join(str(low) for low, _ in delays)
    longest = ", ".join(str(high) for _, high in delays)
    return (f"States.MathRandom(States.ArrayGetItem(States.Array({shortest}), {count}), "
            f"States.ArrayGetItem(States.Array({longest}), {count}))")


def throttle_delays() -> list[tuple[int, int]]:
    """(shortest, longest) wait in seconds before each repeat of a throttled CreateTrainingJob."""
    caps = [min(THROTTLE_MAX_SECONDS, THROTTLE_BASE_SECONDS * 2**n) for n in range(THROTTLE_RETRIES)]
    return [((cap + 1) // 2, cap) for cap in caps]


def _matches(*pairs: tuple[str, str]) -> dict[str, Any]:
    """A Choice rule true when any (path, pattern) pair matches."""
    rules = [{"Variable": path, "StringMatches": pattern} for path, pattern in pairs]
    return rules[0] if len(rules) == 1 else {"Or": rules}


def refusal_states() -> dict[str, Any]:
    """What to do when CreateTrainingJob was not accepted: refused (no job exists), or throttled (try again).

    Checked in this order: a refusal that names a tag's value (only a refusal does) while the job is still tagged
    with the execution ARN is tried once more, tagged with the state machine's ARN (an execution name may hold
    characters SageMaker tags refuse; the spec's own tags are checked when it is loaded); any other refusal is
    invalid input; a server error first looks for a job the call may have created (`recovery`); throttling, and a
    server error that left no job, is repeated after a jittered, growing wait (ASL has no multiplication, so the
    delays are precomputed) until the budget is spent; anything else is read from the job, if one exists, and a job
    whose state cannot be read is stopped by name.
    """
    cause = "$.failure.Cause"
    refused = _matches(*((cause, pattern) for pattern in REFUSALS))
    throttled = _matches(*((cause, pattern) for pattern in THROTTLING))
    return {
        REFUSED_OR_THROTTLED: {
            "Type": "Choice",
            "Choices": [
                {"And": [{"Variable": "$.run.tag.execution", "BooleanEquals": True},
                         _matches(*((cause, pattern) for pattern in TAG_VALUE_REFUSALS))],
                 "Next": "Tag with state machine instead"},
                {**refused, "Next": "Refused by SageMaker"},
                {**_matches((cause, SERVER_ERROR)), "Next": recovery.CREATED_ANYWAY},
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
            "Parameters": {"n.$": "States.MathAdd($.run.throttle.n, 1)", "wait.$": throttle_wait("$.run.throttle.n")},
            "ResultPath": "$.run.throttle", "Next": "Wait out throttling",
        },
        "Wait out throttling": {"Type": "Wait", "SecondsPath": "$.run.throttle.wait", "Next": TRAIN},
        **recovery.server_error_states("Back off", "Throttled too often", poll.WATCH, "Read job", THROTTLE_RETRIES),
        "Throttled too often": {
            "Type": "Pass",
            "Parameters": {"Error.$": "$.failure.Error",
                           "Cause.$": "States.Format('CreateTrainingJob was throttled (or SageMaker was "
                                      "unavailable) {} times in a row; the last answer: {}', "
                                      "States.MathAdd($.run.throttle.n, 1), $.failure.Cause)"},
            "ResultPath": "$.failure", "Next": "Job not created",
        },
    }


