"""The platform's own run metrics, and where SageMaker puts a job's metrics: one source for the state machines
that publish them and the dashboards and alarms that read them.

Step Functions publishes started, succeeded and failed executions per state machine (namespace AWS/States,
dimension StateMachineArn). Capacity relaunches have no such metric, so each state machine publishes its own
(namespace below, dimensions Environment and Workload, and Environment alone for the environment-wide alarm).
SageMaker publishes a job's `metric_definitions` and its instances' utilization to /aws/sagemaker/TrainingJobs
with one dimension, Host = `<training job name>/algo-<n>`; job names change per run, so dashboards find a
workload's jobs with a metric search on its job-name prefix.
"""

from __future__ import annotations

NAMESPACE = "TrainingPlatform"
CAPACITY_RELAUNCHES = "CapacityRelaunches"  # one per relaunch after a capacity failure
CAPACITY_EXHAUSTED = "CapacityExhausted"  # one per run that ended with every relaunch spent
STALL_RELAUNCHES = "StallRelaunches"  # one per relaunch of a job the stall watchdog stopped
ENVIRONMENT = "Environment"
WORKLOAD = "Workload"

# Step Functions' own metrics of a state machine (Step Functions developer guide, "Monitoring Step Functions metrics
# using Amazon CloudWatch": execution metrics, dimension StateMachineArn).
STATES_NAMESPACE = "AWS/States"
STATE_MACHINE = "StateMachineArn"
EXECUTIONS_STARTED = "ExecutionsStarted"
EXECUTIONS_SUCCEEDED = "ExecutionsSucceeded"
EXECUTIONS_FAILED = "ExecutionsFailed"
JOBS_NAMESPACE = "/aws/sagemaker/TrainingJobs"
UTILIZATION = ("GPUUtilization", "GPUMemoryUtilization", "CPUUtilization", "MemoryUtilization")


def job_metric_search(metric_name: str, base_job_name: str, statistic: str = "Average",
                      period: int = 60) -> str | None:
    """A CloudWatch metric search for one metric of every host of the workload's jobs (its job-name prefix), or
    None for a metric name a search term cannot hold (a quote, or a backslash)."""
    if any(c in metric_name for c in "\"'"):
        return None
    return (f"SEARCH('{{{JOBS_NAMESPACE},Host}} MetricName=\"{metric_name}\" \"{base_job_name.lower()}\"', "
            f"'{statistic}', {period})")
