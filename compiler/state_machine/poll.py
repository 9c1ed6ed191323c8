"""The wait for a training job: DescribeTrainingJob every POLL_SECONDS until the job ends (issue 21).

The run creates the job with the AWS SDK integration (`arn:aws:states:::aws-sdk:sagemaker:createTrainingJob`,
which returns at once) and waits with a Wait -> DescribeTrainingJob -> Choice loop, instead of the optimized
`createTrainingJob.sync`: every member of botocore's CreateTrainingJobRequest can be sent (the optimized
integration checks field names against a schema of its own), and the loop can act while the job runs:

- capacity window: a job whose SecondaryStatus is still `Starting` or `Pending` (waiting for instances) after
  `capacity_window_polls` looks is stopped and relaunched on the next instance type (`Job outcome`);
- stall watchdog (`watchdog`): while SecondaryStatus is `Training`, each look asks CloudWatch for a new datapoint of
  the progress metric; too many looks in a row without one stop the job, which is relaunched from its checkpoints.

Looks cost history: Step Functions keeps at most 25,000 events per execution ("Step Functions service quotas") and
fails an execution that needs more, so a job that trains for days cannot be looked at every minute. The run looks
every POLL_SECONDS while the job waits for instances or stops, and every `training_poll_seconds` while it trains:
the shortest whole minute at which the worst case (every attempt training for the spec's max_run) fits
LOOK_EVENTS_BUDGET events. ASL has no date arithmetic, so windows are counted in looks. A job the run stopped
itself carries the reason in `$.watch.reason` until `Job outcome` reads it. A describe that keeps failing stops the
job by name (`recovery`), so a run never leaves a job it cannot see. What the loop cannot do is run after the
execution ends: a stopped, timed-out or aborted execution leaves its job to the reaper (docs/state-machines.md).
"""

from __future__ import annotations

import math
from typing import Any

from compiler.state_machine import recovery

POLL_SECONDS = 60  # between two looks at a job that waits for instances, or stops
HISTORY_EVENTS = 25_000  # "Step Functions service quotas": maximum execution history size (Standard)
LOOK_EVENTS_BUDGET = 20_000  # the looks' share; the rest for the states around them (input check, relaunches, ...)
# History events of one look while the job trains: Wait (entered, exited), DescribeTrainingJob (entered, scheduled,
# started, succeeded, exited), Choice (entered, exited); with the stall watchdog its states too.
LOOK_EVENTS = 9
WATCHDOG_LOOK_EVENTS = 9 + 9  # GetMetricData (5), a Choice (2), a Pass (2)
WATCH = "Watch the job"
WAIT = "Wait on the job"
TRAINING_WAIT = "Wait while it trains"
DESCRIBE = "Describe the job again"
RUNNING = "Job still running?"
STOP_WATCHED = "Stop watched job"
LOST = "Stop job lost from sight"
NO_REASON = "none"
CAPACITY_WINDOW = "CapacityWindow"  # $.watch.reason of a job stopped for not starting in time
STALLED = "Stalled"  # $.watch.reason of a job stopped for making no progress
WAITING_FOR_INSTANCES = ("Starting", "Pending")  # SecondaryStatus values before instances run the container


def window_polls(minutes: int, seconds_per_look: int = POLL_SECONDS) -> int:
    """How many looks make a window of `minutes` (at least one)."""
    return max(1, math.ceil(minutes * 60 / seconds_per_look))


def training_poll_seconds(max_run: int, attempts: int, watchdog: bool) -> int:
    """Seconds between two looks at a training job: whole minutes, at least POLL_SECONDS, so that `attempts` jobs of
    `max_run` seconds each fit the history's budget for looks."""
    per_look = WATCHDOG_LOOK_EVENTS if watchdog else LOOK_EVENTS
    seconds = math.ceil(max_run * attempts * per_look / LOOK_EVENTS_BUDGET)
    return max(POLL_SECONDS, math.ceil(seconds / 60) * 60)


def _status(value: str) -> dict[str, Any]:
    return {"Variable": "$.job.raw.TrainingJobStatus", "StringEquals": value}


def _watching(secondary: tuple[str, ...]) -> dict[str, Any]:
    """The job runs, is in one of these secondary states, and the run has not stopped it."""
    states = [{"Variable": "$.job.raw.SecondaryStatus", "StringEquals": s} for s in secondary]
    return {"And": [_status("InProgress"), {"Variable": "$.watch.reason", "StringEquals": NO_REASON},
                    states[0] if len(states) == 1 else {"Or": states}]}


def poll_states(capacity_window_polls: int, training_seconds: int, stall_entry: str | None, read_state: str,
                job_defaults: dict[str, Any], summarize: str) -> dict[str, Any]:
    """The loop from a created job to `read_state` (the job ended), with the capacity window and, where the spec has
    a stall watchdog, its check (`stall_entry`) on each look while the job trains."""
    rules: list[dict[str, Any]] = [{**_watching(WAITING_FOR_INSTANCES), "Next": "Count look before training"}]
    if stall_entry is not None:
        rules.append({**_watching(("Training",)), "Next": stall_entry})
    # Looks a minute apart only while that is bounded: a job waiting for instances (the capacity window) or stopping.
    # A job the run could not stop (its reason set, still InProgress) is looked at like a training one, so a refused
    # stop never fills the history with one-minute looks until max_run.
    waiting = [{"Variable": "$.job.raw.SecondaryStatus", "StringEquals": s} for s in WAITING_FOR_INSTANCES]
    rules.append({"And": [_status("InProgress"),
                          {"Or": [{"Not": {"Or": waiting}},
                                  {"Not": {"Variable": "$.watch.reason", "StringEquals": NO_REASON}}]}],
                  "Next": TRAINING_WAIT})
    rules.append({"Or": [_status("InProgress"), _status("Stopping")], "Next": WAIT})
    return {
        WATCH: {"Type": "Pass", "Comment": "Per attempt: looks before training, looks without progress, why stopped.",
                "Parameters": {"starting": 0, "quiet": 0, "since.$": "$$.State.EnteredTime", "reason": NO_REASON},
                "ResultPath": "$.watch", "Next": WAIT},
        WAIT: {"Type": "Wait", "Seconds": POLL_SECONDS, "Next": DESCRIBE},
        TRAINING_WAIT: {"Type": "Wait", "Seconds": training_seconds, "Next": DESCRIBE},
        DESCRIBE: {
            "Type": "Task", "Resource": recovery.DESCRIBE_RESOURCE,
            "Parameters": {"TrainingJobName.$": "$.launch.name"}, "ResultPath": "$.job.raw",
            "Retry": [{"ErrorEquals": [recovery.SDK_GENERIC_ERROR], "IntervalSeconds": 5, "BackoffRate": 2.0,
                       "MaxAttempts": 4}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.describe_error", "Next": LOST}],
            "Next": RUNNING,
        },
        RUNNING: {"Type": "Choice", "Choices": rules, "Default": read_state},
        "Count look before training": {
            "Type": "Pass", "Parameters": {"starting.$": "States.MathAdd($.watch.starting, 1)",
                                           "quiet.$": "$.watch.quiet", "since.$": "$.watch.since",
                                           "reason.$": "$.watch.reason"},
            "ResultPath": "$.watch", "Next": "Capacity window spent?",
        },
        "Capacity window spent?": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.watch.starting", "NumericGreaterThanEquals": capacity_window_polls,
                         "Next": "Stop for capacity window"}],
            "Default": WAIT,
        },
        "Stop for capacity window": {
            "Type": "Pass", "Comment": "Still waiting for instances after the capacity window: stop, then relaunch.",
            "Result": CAPACITY_WINDOW, "ResultPath": "$.watch.reason", "Next": STOP_WATCHED,
        },
        STOP_WATCHED: {
            "Type": "Task", "Comment": "The run stops its own job; the loop waits until SageMaker says Stopped.",
            "Resource": recovery.STOP_RESOURCE, "Parameters": {"TrainingJobName.$": "$.launch.name"},
            "ResultPath": "$.stop",
            "Retry": [{"ErrorEquals": [recovery.SDK_GENERIC_ERROR], "IntervalSeconds": 5, "BackoffRate": 2.0,
                       "MaxAttempts": 3}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.stop", "Next": TRAINING_WAIT}],
            "Next": WAIT,
        },
        **recovery.lost_job_states(job_defaults, summarize),
    }
