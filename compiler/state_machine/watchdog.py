"""The stall watchdog: a job that trains without progress is stopped and relaunched from its checkpoints (issue 21).

While the job's SecondaryStatus is `Training`, every look of the poll loop (`poll`) asks CloudWatch
(`aws-sdk:cloudwatch:getMetricData`) whether the spec's progress metric has a datapoint since the last look that saw
progress (or since the job was created). ASL has no date arithmetic, so the run keeps that time
(`$$.State.EnteredTime`, in `$.watch.since`) as the query's StartTime, the look's own as its EndTime, and counts the
looks in a row without a new datapoint (`$.watch.quiet`);
`minutes` of such looks stop the job (reason `Stalled`), and `relaunch` relaunches it on the same instance type
under the next attempt's name, from the run's checkpoints, at most `max_relaunches` times; then the run ends with
status `Stalled`. A job that fails by itself (the user's code: AlgorithmError and the like) is never relaunched.

SageMaker publishes `metric_definitions` matches to the namespace `/aws/sagemaker/TrainingJobs`; the dimension is
`Host` = `<job name>/algo-<n>` in SageMaker's CloudWatch documentation and `TrainingJobName` = `<job name>` in the
SageMaker Python SDK's TrainingJobAnalytics, so the question names both (two queries, either datapoint counts).
A look whose question fails counts as neither progress nor silence: the watchdog never stops a job on an error of
its own.
"""

from __future__ import annotations

from typing import Any

from compiler.facts import run_metrics
from compiler.inputs.model import StallWatchdog
from compiler.state_machine import integrations, poll

ENTRY = "Ask for progress"
METRIC_DATA_RESOURCE = integrations.sdk_resource("cloudwatch", "getMetricData")
CLOUDWATCH_GENERIC_ERROR = integrations.generic_error("cloudwatch", sdk=True)
PERIOD_SECONDS = 60


def _query(query_id: str, metric: str, dimension: str, value: str) -> dict[str, Any]:
    return {"Id": query_id, "ReturnData": True,
            "MetricStat": {"Metric": {"Namespace": run_metrics.JOBS_NAMESPACE, "MetricName": metric,
                                      "Dimensions": [{"Name": dimension, "Value.$": value}]},
                           "Period": PERIOD_SECONDS, "Stat": "SampleCount"}}


def _watch(**changes: str | int) -> dict[str, Any]:
    """`$.watch` with some fields changed (JSONPath/intrinsic strings, or literal numbers)."""
    fields: dict[str, Any] = {"starting.$": "$.watch.starting", "quiet.$": "$.watch.quiet",
                              "since.$": "$.watch.since", "reason.$": "$.watch.reason"}
    for key, value in changes.items():
        fields.pop(f"{key}.$")
        fields[f"{key}.$" if isinstance(value, str) else key] = value
    return fields


def watchdog_states(stall: StallWatchdog, training_seconds: int) -> dict[str, Any]:
    """From a look at a training job back to the poll loop's wait, or to the stop of a stalled job; looks are
    `training_seconds` apart, so `minutes` are that many looks (at least one). Three states a look (history events
    are the run's budget: `poll.WATCHDOG_LOOK_EVENTS`)."""
    seen = [{"Variable": f"$.progress.MetricDataResults[{i}].Values[0]", "IsPresent": True} for i in (0, 1)]
    looks = poll.window_polls(stall.minutes, training_seconds)
    return {
        ENTRY: {
            "Type": "Task", "Resource": METRIC_DATA_RESOURCE,
            "Parameters": {
                "MetricDataQueries": [
                    _query("byhost", stall.metric, "Host", "States.Format('{}/algo-1', $.launch.name)"),
                    _query("byjob", stall.metric, "TrainingJobName", "$.launch.name")],
                "StartTime.$": "$.watch.since", "EndTime.$": "$$.State.EnteredTime"},
            "ResultSelector": {"MetricDataResults.$": "$.MetricDataResults"},
            "ResultPath": "$.progress",
            "Retry": [{"ErrorEquals": [CLOUDWATCH_GENERIC_ERROR], "IntervalSeconds": 2, "BackoffRate": 2.0,
                       "MaxAttempts": 2}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.progress_error", "Next": poll.TRAINING_WAIT}],
            "Next": "Progress seen?",
        },
        "Progress seen?": {
            "Type": "Choice",
            "Choices": [{"Or": seen, "Next": "Progress"},
                        {"Variable": "$.watch.quiet", "NumericGreaterThanEquals": looks - 1,
                         "Next": "Stop stalled job"}],
            "Default": "Count quiet look",
        },
        "Progress": {"Type": "Pass", "Comment": "Progress is counted from here: the next question starts now.",
                     "Parameters": _watch(since="$$.State.EnteredTime", quiet=0), "ResultPath": "$.watch",
                     "Next": poll.TRAINING_WAIT},
        "Count quiet look": {"Type": "Pass", "Parameters": _watch(quiet="States.MathAdd($.watch.quiet, 1)"),
                             "ResultPath": "$.watch", "Next": poll.TRAINING_WAIT},
        "Stop stalled job": {"Type": "Pass", "Comment": "No progress for the spec's minutes: stop, then relaunch.",
                             "Result": poll.STALLED, "ResultPath": "$.watch.reason", "Next": poll.STOP_WATCHED},
    }
