"""The wait for a training job: DescribeTrainingJob again and again until the job ends (issues 21 and 32).

The run creates the job with the AWS SDK integration (`arn:aws:states:::aws-sdk:sagemaker:createTrainingJob`,
which returns at once) and waits with a Wait -> DescribeTrainingJob -> Choice loop, instead of the optimized
`createTrainingJob.sync`: every member of botocore's CreateTrainingJobRequest can be sent, and the loop can act while
the job runs. What SageMaker reports, and what the loop does with it (sources in docs/aws-assumptions.md):

- `Starting` or `Pending` (SecondaryStatus): the job waits for instances, which bills nothing. Who bounds that wait
  (`waiting`): for managed spot, SageMaker's MaxWaitTimeInSeconds (spot capacity may take hours, and `max_wait` is
  the spec's own word for how long); for a spec whose window is at least SageMaker's minimum (30 minutes) and whose
  types are all accelerated ones, SageMaker's `StoppingCondition.MaxPendingTimeInSeconds`, sent with the request;
  otherwise the run itself, which counts the looks in a row that find the job waiting and stops it after the window
  (a look that finds it doing anything else starts the count again: SageMaker's RetryStrategy sends a job back to
  `Starting`, and a job that trained for hours is not "waiting for capacity").
- `Training`: the job's container runs; it begins with the image download. With a stall watchdog (`watchdog`), the
  first look that finds the job training starts the watchdog's clock, and every later one asks the job's log for a
  progress line; a look that finds the job in any other state (back to `Starting` after an internal retry,
  `Interrupted`, `Downloading`, `Uploading`, ...) stops the clock, and the next `Training` look starts it again.
- anything else (`Completed`, `Failed`, `Stopped`) ends the loop (`Job outcome` reads it).

Looks cost history: Step Functions keeps at most 25,000 events per execution ("Step Functions service quotas") and
fails an execution that needs more, so a job that runs for days cannot be looked at every minute. Looks at a job
waiting for instances are POLL_SECONDS apart where the run's windows fit WAITING_BUDGET events, further apart where
they would not; looks at a training job are `training_poll_seconds` apart: the shortest whole minute at which the
worst case (every attempt running as long as SageMaker lets it) fits what the waiting looks leave of
LOOK_EVENTS_BUDGET. ASL has no date arithmetic, so windows are counted in looks. A job the run stopped itself
carries the reason in `$.watch.reason` until `Job outcome` reads it.

A DescribeTrainingJob that fails is tried again with growing, jittered waits for several minutes (DESCRIBE_RETRY)
before the job counts as lost from sight and is stopped by name (`recovery`): throttling and brief outages never stop
a healthy job. What the loop cannot do is run after the execution ends: a stopped, timed-out or aborted execution
leaves its job to the reaper (docs/state-machines.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from compiler.state_machine import recovery

POLL_SECONDS = 60  # between two looks at a job that waits for instances (at the least), or stops
# A Standard execution's history holds at most 25,000 events ("Step Functions service quotas"): the looks' share of
# them; the rest is for the states around them (input check, relaunches, ...).
LOOK_EVENTS_BUDGET = 20_000
WAITING_BUDGET = 5_000  # at most this much of it for looks at jobs waiting for instances
# History events of one look while the job trains: Wait (entered, exited), DescribeTrainingJob (entered, scheduled,
# started, succeeded, exited), Choice (entered, exited); with the stall watchdog its states too.
LOOK_EVENTS = 9
WATCHDOG_LOOK_EVENTS = 9 + 11  # FilterLogEvents (5), a Choice (2), one Pass (2), or two on progress (4)
WAITING_LOOK_EVENTS = 9 + 4  # the count of looks before training (a Pass) and the window's Choice
# "StoppingCondition.MaxPendingTimeInSeconds" (botocore's SageMaker model): 1800 to 2,419,200 seconds, and it "takes
# effect only for jobs that request accelerated computing instance types, such as instances in the ml.p, ml.g, and
# ml.trn families".
PENDING_LIMIT_SECONDS = (1800, 2_419_200)
PENDING_LIMIT_FAMILIES = ("ml.p", "ml.g", "ml.trn")
# Where SageMaker bounds the wait, the run stops a job still waiting this much later all the same: what
# MaxPendingTimeInSeconds does to a job is documented, which secondary status it leaves is not.
BACKSTOP_MINUTES = 15
# A failed DescribeTrainingJob is tried again up to 10 times, waiting a random time up to 10 s, 20 s, 40 s, ... at
# most 5 minutes ("Error handling in Step Functions": Retry with MaxDelaySeconds and JitterStrategy FULL): 30 minutes
# at the most, about 15 on average, before the job counts as lost from sight.
DESCRIBE_RETRY = {"IntervalSeconds": 10, "BackoffRate": 2.0, "MaxAttempts": 10, "MaxDelaySeconds": 300,
                  "JitterStrategy": "FULL"}
WATCH = "Watch the job"
WAIT = "Wait on the job"
WAIT_FOR_INSTANCES = "Wait for instances"
TRAINING_WAIT = "Wait while it trains"
DESCRIBE = "Describe the job again"
RUNNING = "Job still running?"
COUNT_WAITING = "Count look before training"
WINDOW_SPENT = "Capacity window spent?"
BETWEEN_PHASES = "Between phases"
STOP_WATCHED = "Stop watched job"
LOST = "Stop job lost from sight"
NO_REASON = "none"
CAPACITY_WINDOW = "CapacityWindow"  # $.watch.reason of a job stopped for not starting in time
STALLED = "Stalled"  # $.watch.reason of a job stopped for making no progress
WAITING_FOR_INSTANCES = ("Starting", "Pending")  # SecondaryStatus values before instances run the container
TRAINING = "Training"
RUN, SAGEMAKER, SPOT = "run", "sagemaker", "spot"  # who bounds the wait for instances


@dataclass(frozen=True)
class Waiting:
    """Who bounds an attempt's wait for instances, and how the run looks at a waiting job."""

    bound: str  # RUN, SAGEMAKER or SPOT
    poll_seconds: int  # between two looks at a waiting job (SPOT: the training looks' spacing)
    window_looks: int  # looks in a row after which the run stops a waiting job (0 for SPOT)
    pending_limit: int | None  # MaxPendingTimeInSeconds sent with the request (SAGEMAKER only)
    history_events: int  # the waiting looks' share of the history in the worst case
    # SAGEMAKER only: looks in a row at a waiting job before the run reads the job's end Stopped as SageMaker's
    # MaxPendingTimeInSeconds, not a person's StopTrainingJob (nothing else tells them apart): all but BACKSTOP_MINUTES
    # of the limit (looks come late, never early). 0 otherwise.
    pending_looks: int = 0


def window_polls(minutes: int, seconds_per_look: int = POLL_SECONDS) -> int:
    """How many looks make a window of `minutes` (at least one)."""
    return max(1, math.ceil(minutes * 60 / seconds_per_look))


def _whole_minutes(seconds: float) -> int:
    return max(POLL_SECONDS, math.ceil(seconds / 60) * 60)


def pending_limit_applies(instance_type: str) -> bool:
    """Whether SageMaker's MaxPendingTimeInSeconds takes effect for a job on this type (its family's letters: ml.p5en
    is of the ml.p family, ml.trn1n of ml.trn)."""
    letters = re.match(r"ml\.([a-z]+)\d", instance_type)
    return letters is not None and f"ml.{letters.group(1)}" in PENDING_LIMIT_FAMILIES


def waiting(window_minutes: int, attempts: int, *, spot: bool, accelerated: bool) -> Waiting:
    """How a run waits for instances, given the spec's capacity window and the jobs a run may create."""
    if spot:
        return Waiting(SPOT, 0, 0, None, 0)
    seconds = window_minutes * 60
    sagemaker = accelerated and PENDING_LIMIT_SECONDS[0] <= seconds <= PENDING_LIMIT_SECONDS[1]
    watched = seconds + (BACKSTOP_MINUTES * 60 if sagemaker else 0)
    poll = _whole_minutes(watched * attempts * WAITING_LOOK_EVENTS / WAITING_BUDGET)
    looks = window_polls(watched // 60, poll)
    events = attempts * (looks + 1) * WAITING_LOOK_EVENTS
    if not sagemaker:
        return Waiting(RUN, poll, looks, None, events)
    return Waiting(SAGEMAKER, poll, looks, seconds, events,
                   pending_looks=max(1, math.ceil((seconds - BACKSTOP_MINUTES * 60) / poll)))


def training_poll_seconds(longest: int, attempts: int, watchdog: bool, waiting_events: int = 0) -> int:
    """Seconds between two looks at a running job: whole minutes, at least POLL_SECONDS, so that `attempts` jobs of
    `longest` seconds each fit what the waiting looks leave of the history's budget for looks."""
    per_look = WATCHDOG_LOOK_EVENTS if watchdog else LOOK_EVENTS
    return _whole_minutes(longest * attempts * per_look / (LOOK_EVENTS_BUDGET - waiting_events))


def _status(value: str) -> dict[str, Any]:
    return {"Variable": "$.job.raw.TrainingJobStatus", "StringEquals": value}


def _secondary(*values: str) -> dict[str, Any]:
    rules = [{"Variable": "$.job.raw.SecondaryStatus", "StringEquals": s} for s in values]
    return rules[0] if len(rules) == 1 else {"Or": rules}


def _unstopped(*rules: dict[str, Any]) -> dict[str, Any]:
    """The job runs (InProgress), the run has not stopped it, and `rules` hold."""
    return {"And": [_status("InProgress"), {"Variable": "$.watch.reason", "StringEquals": NO_REASON}, *rules]}


def watch(**changes: str | int | bool) -> dict[str, Any]:
    """`$.watch` with some fields changed: a string starting with `$` or `States.` is read at run time, anything
    else is literal. Fields: `starting` (looks in a row that found the job waiting for instances), `quiet` (looks in a
    row without progress), `training` (the stall watchdog's clock runs), `from` (where the watchdog's next question
    starts, in `clock` units), `reason` (why the run stopped the job)."""
    fields: dict[str, Any] = {f"{key}.$": f"$.watch.{key}" for key in ("starting", "quiet", "training", "from", "reason")}
    for key, value in changes.items():
        fields.pop(f"{key}.$")
        dynamic = isinstance(value, str) and value.startswith(("$", "States."))
        fields[f"{key}.$" if dynamic else key] = value
    return fields


def _running_rules(waits: Waiting, stall: tuple[str, str] | None) -> list[dict[str, Any]]:
    """Where a look at a job that has not ended goes next."""
    waiting_now = _unstopped(_secondary(*WAITING_FOR_INSTANCES))
    # Spot: SageMaker's max_wait bounds the wait, and the looks are spaced like the training ones (`waiting`).
    rules = [{**waiting_now, "Next": TRAINING_WAIT if waits.bound == SPOT else COUNT_WAITING}]
    if stall is not None:
        start_clock, ask = stall
        rules += [{**_unstopped(_secondary(TRAINING), {"Variable": "$.watch.training", "BooleanEquals": False}),
                   "Next": start_clock},
                  {**_unstopped(_secondary(TRAINING)), "Next": ask}]
    # A look that finds the job doing anything else ends a wait for instances (and stops the watchdog's clock).
    left = {"Or": [{"Variable": "$.watch.starting", "NumericGreaterThan": 0},
                   {"Variable": "$.watch.training", "BooleanEquals": True}]}
    rules.append({**_unstopped(left), "Next": BETWEEN_PHASES})
    # Looks a minute apart only while that is bounded: a job stopping. A job the run could not stop (its reason set,
    # still InProgress) is looked at like a training one, so a refused stop never fills the history.
    rules.append({**_status("InProgress"), "Next": TRAINING_WAIT})
    rules.append({**_status("Stopping"), "Next": WAIT})
    return rules


def _waiting_states(waits: Waiting) -> dict[str, Any]:
    """The count of looks in a row at a job waiting for instances, and the run's window on it."""
    if waits.bound == SPOT:
        return {}
    wait_state = WAIT if waits.poll_seconds == POLL_SECONDS else WAIT_FOR_INSTANCES
    states: dict[str, Any] = {
        COUNT_WAITING: {
            "Type": "Pass", "Parameters": watch(starting="States.MathAdd($.watch.starting, 1)", training=False,
                                                quiet=0),
            "ResultPath": "$.watch", "Next": WINDOW_SPENT,
        },
        WINDOW_SPENT: {
            "Type": "Choice",
            "Comment": ("SageMaker stops a job pending longer than MaxPendingTimeInSeconds; the run only if it still "
                        "waits well after that." if waits.bound == SAGEMAKER else
                        "Still waiting for instances after the capacity window: stop, then relaunch."),
            "Choices": [{"Variable": "$.watch.starting", "NumericGreaterThanEquals": waits.window_looks,
                         "Next": "Stop for capacity window"}],
            "Default": wait_state,
        },
        "Stop for capacity window": {
            "Type": "Pass", "Comment": "Still waiting for instances after the capacity window: stop, then relaunch.",
            "Result": CAPACITY_WINDOW, "ResultPath": "$.watch.reason", "Next": STOP_WATCHED,
        },
    }
    if wait_state != WAIT:
        states[WAIT_FOR_INSTANCES] = {"Type": "Wait", "Seconds": waits.poll_seconds, "Next": DESCRIBE}
    return states


def poll_states(waits: Waiting, training_seconds: int, stall: tuple[str, str] | None, read_state: str,
                job_defaults: dict[str, Any], summarize: str) -> dict[str, Any]:
    """The loop from a created job to `read_state` (the job ended); `stall`: the stall watchdog's states that start
    its clock and ask for progress, where the spec has one."""
    return {
        WATCH: {"Type": "Pass", "Comment": "Per attempt: looks waiting, looks without progress, the clock, why stopped.",
                "Parameters": {"starting": 0, "quiet": 0, "training": False, "from": 0, "reason": NO_REASON},
                "ResultPath": "$.watch", "Next": WAIT},
        WAIT: {"Type": "Wait", "Seconds": POLL_SECONDS, "Next": DESCRIBE},
        TRAINING_WAIT: {"Type": "Wait", "Seconds": training_seconds, "Next": DESCRIBE},
        DESCRIBE: {
            "Type": "Task", "Resource": recovery.DESCRIBE_RESOURCE,
            "Parameters": {"TrainingJobName.$": "$.launch.name"}, "ResultPath": "$.job.raw",
            "Retry": [{"ErrorEquals": [recovery.SDK_GENERIC_ERROR], **DESCRIBE_RETRY}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.describe_error", "Next": LOST}],
            "Next": RUNNING,
        },
        RUNNING: {"Type": "Choice", "Choices": _running_rules(waits, stall), "Default": read_state},
        BETWEEN_PHASES: {
            "Type": "Pass", "Comment": "No longer waiting for instances, not (or no longer) training.",
            "Parameters": watch(starting=0, quiet=0, training=False), "ResultPath": "$.watch", "Next": TRAINING_WAIT,
        },
        **_waiting_states(waits),
        **(_stop_states() if waits.bound != SPOT or stall is not None else {}),
        **recovery.lost_job_states(job_defaults, summarize),
    }


def _stop_states() -> dict[str, Any]:
    """The run stops its own job (capacity window, stall watchdog)."""
    return {
        STOP_WATCHED: {
            "Type": "Task", "Comment": "The run stops its own job; the loop waits until SageMaker says Stopped.",
            "Resource": recovery.STOP_RESOURCE, "Parameters": {"TrainingJobName.$": "$.launch.name"},
            "ResultPath": "$.stop",
            "Retry": [{"ErrorEquals": [recovery.SDK_GENERIC_ERROR], "IntervalSeconds": 5, "BackoffRate": 2.0,
                       "MaxAttempts": 3}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.stop", "Next": TRAINING_WAIT}],
            "Next": WAIT,
        },
    }
