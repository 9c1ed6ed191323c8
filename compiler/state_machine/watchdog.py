"""The stall watchdog: a job that trains without progress is stopped and relaunched from its checkpoints (issues 21, 32).

Progress is a line of the spec's progress metric in the job's own log: SageMaker writes each training job's output
to `/aws/sagemaker/TrainingJobs`, in streams named `<job name>/algo-<n>-<epoch>`, and only the job's own execution
role may write streams of its jobs' names (platform_constructs/workload.py), so no other workload can fake it. (A
CloudWatch metric could not serve: `cloudwatch:PutMetricData` cannot be held to a dimension, so any role that may
publish a job's metrics may publish another's.)

The clock starts at the first look that finds the job `Training` (each attempt, and again after the job left
`Training`: `poll`), not at the job's creation: `Training` begins with the image download, then the script's
start-up, compile and checkpoint load. From then on every look at the training job asks FilterLogEvents whether the
job's streams (`<job name>/`) hold a line matching the metric's filter pattern (`facts/log_patterns.py`) since the
clock started or since the last look that found one (`clock`: from the minute before, in epoch milliseconds); the
looks in a row without one are counted (`$.watch.quiet`), and `minutes` of such looks stop the job (reason
`Stalled`), which `relaunch` relaunches on the same instance type under the next attempt's name, from the run's
checkpoints, at most `max_relaunches` times; then the run ends with status `Stalled`. A job that fails by itself
(the user's code: AlgorithmError and the like) is never relaunched.

A look whose question fails, or whose search did not finish (no line, but a NextToken: FilterLogEvents "can return
empty results while there are more log events available through the token"), counts as neither progress nor
silence: the watchdog never stops a job on an error or a doubt of its own.
"""

from __future__ import annotations

from typing import Any

from compiler.inputs.environments import TRAINING_LOG_GROUP
from compiler.inputs.model import StallWatchdog
from compiler.state_machine import clock, integrations, poll

START_CLOCK = "Start stall clock"
ENTRY = "Ask for progress"
OPEN_WINDOW = "Open progress window"
FILTER_RESOURCE = integrations.sdk_resource("cloudwatchlogs", "filterLogEvents")
LOGS_GENERIC_ERROR = integrations.generic_error("cloudwatchlogs", sdk=True)
CLOCK_DEFAULTS = "clock"  # $.defaults.clock: the tables `clock` reads


def question(stall: StallWatchdog) -> dict[str, Any]:
    """FilterLogEvents' parameters: the first line of the metric in the job's streams since `$.watch.from`."""
    return {"LogGroupName": TRAINING_LOG_GROUP, "LogStreamNamePrefix.$": "States.Format('{}/', $.launch.name)",
            "StartTime.$": clock.start_time("$.watch.from"), "FilterPattern": stall.log_pattern, "Limit": 1}


def watchdog_states(stall: StallWatchdog, training_seconds: int) -> dict[str, Any]:
    """From a look at a training job back to the poll loop's wait, or to the stop of a stalled job; looks are
    `training_seconds` apart, so `minutes` are that many looks (at least one)."""
    looks = poll.window_polls(stall.minutes, training_seconds)
    now = {"Type": "Pass", "Parameters": {"parts.$": clock.split()}, "ResultPath": "$.now", "Next": OPEN_WINDOW}
    return {
        START_CLOCK: {**now, "Comment": "The job trains (again): the watchdog's window opens now."},
        OPEN_WINDOW: {
            "Type": "Pass", "Comment": "The next question starts a minute before this one's: late lines count too.",
            "Parameters": poll.watch(starting=0, quiet=0, training=True,
                                     **{"from": clock.window_start_parameters("$.now.parts",
                                                                             f"$.defaults.{CLOCK_DEFAULTS}")}),
            "ResultPath": "$.watch", "Next": poll.TRAINING_WAIT,
        },
        ENTRY: {
            "Type": "Task", "Resource": FILTER_RESOURCE, "Parameters": question(stall), "ResultPath": "$.progress",
            "Retry": [{"ErrorEquals": [LOGS_GENERIC_ERROR], "IntervalSeconds": 2, "BackoffRate": 2.0,
                       "MaxAttempts": 2}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.progress_error", "Next": poll.TRAINING_WAIT}],
            "Next": "Progress seen?",
        },
        "Progress seen?": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.progress.Events[0]", "IsPresent": True, "Next": "Progress"},
                        {"Variable": "$.progress.NextToken", "IsPresent": True, "Next": poll.TRAINING_WAIT},
                        {"Variable": "$.watch.quiet", "NumericGreaterThanEquals": looks - 1,
                         "Next": "Stop stalled job"}],
            "Default": "Count quiet look",
        },
        "Progress": {**now, "Comment": "Progress: the next question starts from here."},
        "Count quiet look": {"Type": "Pass", "Parameters": poll.watch(quiet="States.MathAdd($.watch.quiet, 1)"),
                             "ResultPath": "$.watch", "Next": poll.TRAINING_WAIT},
        "Stop stalled job": {"Type": "Pass", "Comment": "No progress for the spec's minutes: stop, then relaunch.",
                             "Result": poll.STALLED, "ResultPath": "$.watch.reason", "Next": poll.STOP_WATCHED},
    }
