"""The job reaper: stops the training jobs a workload run left running when its execution ended (issue 21).

A run's own definition cannot act when its execution is stopped (console Stop, `trainctl stop`, StopExecution),
times out or fails outside its catches: Step Functions runs no state on those exits. Once the run loop no longer
waits with `createTrainingJob.sync` (whose wait Step Functions cancels, stopping the job), nothing else would stop
the job. Per environment an EventBridge rule on the "Step Functions Execution Status Change" events of the
environment's workload state machines (status ABORTED, TIMED_OUT, FAILED) starts this state machine with the
execution's ARN, its state machine's ARN and its status (`platform_constructs/job_reaper.py`).

What it does, in order:

1. waits `settle_seconds`, so a job created just before the end is found by SageMaker Search;
2. describes the execution: a run that is RUNNING again (redriven) or about to be (PENDING_REDRIVE: "the redrive
   request was accepted", Step Functions API reference, ExecutionStatus) keeps its jobs;
3. searches the environment's training jobs tagged `TAG_EXECUTION` = the execution's ARN (`PAGE_SIZE` per page,
   oldest first, following NextToken) and stops each one that is InProgress; a stop that fails is forgiven when the
   job is no longer InProgress (it ended meanwhile). The search does not filter on the status: stopping a job
   changes its status, and a page token of a query whose matches change under it is not documented to stay valid,
   while the set of jobs tagged with an ended execution does not change;
4. the state-machine fallback: a run whose execution name holds characters SageMaker tags refuse tags its jobs with
   the state machine's ARN, which every such run of the workload shares. Those jobs are stopped only when no
   execution of the state machine is RUNNING (ListExecutions), so a job another run may still own is never
   stopped; an orphan of that kind is stopped at the next end of a run of the workload that leaves none running;
5. fails with `JOBS_LEFT_RUNNING` when a job it found is still InProgress after its stop, so the environment's
   alarm on the reaper fires.

Pure: a definition (JSONPath) built like the workloads' and held to the same checks (`integrations`, `intrinsics`).
"""

from __future__ import annotations

from typing import Any

from compiler.compilation.request import TAG_ENVIRONMENT, TAG_EXECUTION
from compiler.errors import SpecError
from compiler.state_machine import integrations, intrinsics

SEARCH_RESOURCE = integrations.sdk_resource("sagemaker", "search")
STOP_RESOURCE = integrations.sdk_resource("sagemaker", "stopTrainingJob")
DESCRIBE_JOB_RESOURCE = integrations.sdk_resource("sagemaker", "describeTrainingJob")
DESCRIBE_EXECUTION_RESOURCE = integrations.sdk_resource("sfn", "describeExecution")
LIST_EXECUTIONS_RESOURCE = integrations.sdk_resource("sfn", "listExecutions")
SAGEMAKER_ERROR = integrations.generic_error("sagemaker", sdk=True)
SFN_ERROR = integrations.generic_error("sfn", sdk=True)

# The execution statuses whose events start the reaper. SUCCEEDED is left out: a run succeeds only after its last
# job Completed (compiler/state_machine/definition.py, "Succeeded?"), and a capacity relaunch follows a Failed job.
STATUSES = ("ABORTED", "TIMED_OUT", "FAILED")
# What DescribeExecution says of a run that goes on after such an end: redriven and running, or its redrive accepted
# and about to run (botocore's Step Functions model, ExecutionStatus).
GOES_ON = ("RUNNING", "PENDING_REDRIVE")
# Search returns whole TrainingJob records (hyperparameters, status transitions, ...); a page must fit the 256 KiB
# a state's result may hold. Ten records of up to ~25 KiB each do; a run has a job per attempt.
PAGE_SIZE = 10
MAX_CONCURRENT_STOPS = 5
SETTLE_SECONDS = 60
TIMEOUT_SECONDS = 3600
JOBS_LEFT_RUNNING = "TrainingJobsNotStopped"
IN_PROGRESS = "InProgress"
EXECUTION_PHASE = "execution"
STATE_MACHINE_PHASE = "state machine"
# The execution's fields as the rule's input transformer writes them.
EXECUTION_ARN = "execution_arn"
STATE_MACHINE_ARN = "state_machine_arn"
STATUS = "status"


def _retry(error: str) -> list[dict[str, Any]]:
    """Throttling and 5xx answers (the service's generic error name) are tried again with jittered backoff."""
    return [{"ErrorEquals": [error], "IntervalSeconds": 2, "BackoffRate": 2.0, "MaxAttempts": 5,
             "MaxDelaySeconds": 60, "JitterStrategy": "FULL"}]


def search_parameters(environment: str, *, next_page: bool) -> dict[str, Any]:
    """SageMaker Search: the environment's training jobs whose execution tag is `$.search.tag`, oldest first."""
    filters = [
        {"Name": f"Tags.{TAG_EXECUTION}", "Operator": "Equals", "Value.$": "$.search.tag"},
        {"Name": f"Tags.{TAG_ENVIRONMENT}", "Operator": "Equals", "Value": environment},
    ]
    parameters: dict[str, Any] = {"Resource": "TrainingJob", "MaxResults": PAGE_SIZE, "SortBy": "CreationTime",
                                  "SortOrder": "Ascending",
                                  "SearchExpression": {"Operator": "And", "Filters": filters}}
    if next_page:
        parameters["NextToken.$"] = "$.page.NextToken"
    return parameters


def _stop_job_states() -> dict[str, Any]:
    """One job: stop it if it is InProgress; a failed stop is forgiven when the job is no longer InProgress.

    Output: true when the job is not left running, false when it still is (or its state cannot be read).
    """
    return {
        "Running?": {"Type": "Choice",
                     "Choices": [{"Variable": "$.status", "StringEquals": IN_PROGRESS, "Next": "Stop job"}],
                     "Default": "Stopped"},
        "Stop job": {
            "Type": "Task", "Resource": STOP_RESOURCE, "Parameters": {"TrainingJobName.$": "$.name"},
            "ResultPath": None, "Retry": _retry(SAGEMAKER_ERROR),
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.stop_error", "Next": "Look at the job"}],
            "Next": "Stopped",
        },
        "Look at the job": {
            "Type": "Task", "Comment": "The stop failed: the job may have ended since it was found InProgress.",
            "Resource": DESCRIBE_JOB_RESOURCE, "Parameters": {"TrainingJobName.$": "$.name"},
            "ResultSelector": {"status.$": "$.TrainingJobStatus"}, "ResultPath": "$.job",
            "Retry": _retry(SAGEMAKER_ERROR),
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.describe_error", "Next": "Not stopped"}],
            "Next": "Still running?",
        },
        "Still running?": {"Type": "Choice",
                           "Choices": [{"Variable": "$.job.status", "StringEquals": IN_PROGRESS, "Next": "Not stopped"}],
                           "Default": "Stopped"},
        "Stopped": {"Type": "Pass", "Result": True, "End": True},
        "Not stopped": {"Type": "Pass", "Result": False, "End": True},
    }


def _search_states(environment: str) -> dict[str, Any]:
    """Page through the jobs tagged `$.search.tag`, stopping each page's jobs; then the next phase."""
    search = {"Type": "Task", "Resource": SEARCH_RESOURCE, "ResultPath": "$.page", "Retry": _retry(SAGEMAKER_ERROR),
              "Next": "Any job found?"}
    return {
        "Search jobs": {**search, "Parameters": search_parameters(environment, next_page=False)},
        "Search more jobs": {**search, "Parameters": search_parameters(environment, next_page=True)},
        "Any job found?": {"Type": "Choice",
                           "Choices": [{"Variable": "$.page.Results[0]", "IsPresent": True, "Next": "Stop each job"}],
                           "Default": "More pages?"},
        "Stop each job": {
            "Type": "Map", "ItemsPath": "$.page.Results", "MaxConcurrency": MAX_CONCURRENT_STOPS,
            "ItemSelector": {"name.$": "$$.Map.Item.Value.TrainingJob.TrainingJobName",
                             "status.$": "$$.Map.Item.Value.TrainingJob.TrainingJobStatus"},
            "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": "Running?",
                              "States": _stop_job_states()},
            "ResultPath": "$.stopped", "Next": "Note jobs not stopped",
        },
        "Note jobs not stopped": {
            "Type": "Pass",
            "Parameters": {"tag.$": "$.search.tag", "phase.$": "$.search.phase",
                           "failed.$": "States.ArrayContains(States.Array($.search.failed, "
                                       "States.ArrayContains($.stopped, false)), true)"},
            "ResultPath": "$.search", "Next": "More pages?",
        },
        "More pages?": {"Type": "Choice",
                        "Choices": [{"Variable": "$.page.NextToken", "IsPresent": True, "Next": "Search more jobs"}],
                        "Default": "Phase done?"},
        "Phase done?": {"Type": "Choice",
                        "Choices": [{"Variable": "$.search.phase", "StringEquals": EXECUTION_PHASE,
                                     "Next": "Other runs in progress?"}],
                        "Default": "Report"},
    }


def build_reaper_definition(environment: str, settle_seconds: int = SETTLE_SECONDS,
                            timeout_seconds: int = TIMEOUT_SECONDS) -> dict[str, Any]:
    """The reaper's ASL definition (JSONPath) for one environment; its input is the ended execution's fields."""
    states: dict[str, Any] = {
        "Let the jobs be found": {
            "Type": "Wait", "Seconds": settle_seconds, "Next": "Is the run over?",
            "Comment": "A job created just before the execution ended may not be found by Search at once.",
        },
        "Is the run over?": {
            "Type": "Task", "Resource": DESCRIBE_EXECUTION_RESOURCE,
            "Parameters": {"ExecutionArn.$": f"$.{EXECUTION_ARN}"}, "ResultSelector": {"status.$": "$.Status"},
            "ResultPath": "$.run", "Retry": _retry(SFN_ERROR), "Next": "Run redriven?",
        },
        "Run redriven?": {"Type": "Choice",
                          "Choices": [{"Or": [{"Variable": "$.run.status", "StringEquals": status}
                                              for status in GOES_ON], "Next": "Run goes on"}],
                          "Default": "Jobs of the run"},
        "Run goes on": {"Type": "Pass", "Comment": "The execution was redriven and runs again: its jobs are its own.",
                        "Parameters": {"execution_arn.$": f"$.{EXECUTION_ARN}", "redriven": True}, "End": True},
        "Jobs of the run": {"Type": "Pass",
                            "Parameters": {"tag.$": f"$.{EXECUTION_ARN}", "phase": EXECUTION_PHASE, "failed": False},
                            "ResultPath": "$.search", "Next": "Search jobs"},
        **_search_states(environment),
        "Other runs in progress?": {
            "Type": "Task", "Comment": "Jobs tagged with the state machine's ARN may belong to any of its runs.",
            "Resource": LIST_EXECUTIONS_RESOURCE,
            "Parameters": {"StateMachineArn.$": f"$.{STATE_MACHINE_ARN}", "StatusFilter": "RUNNING", "MaxResults": 1},
            "ResultSelector": {"count.$": "States.ArrayLength($.Executions)"}, "ResultPath": "$.running",
            "Retry": _retry(SFN_ERROR), "Next": "None running?",
        },
        "None running?": {"Type": "Choice",
                          "Choices": [{"Variable": "$.running.count", "NumericEquals": 0,
                                       "Next": "Jobs of the state machine"}],
                          "Default": "Report"},
        "Jobs of the state machine": {
            "Type": "Pass",
            "Parameters": {"tag.$": f"$.{STATE_MACHINE_ARN}", "phase": STATE_MACHINE_PHASE,
                           "failed.$": "$.search.failed"},
            "ResultPath": "$.search", "Next": "Search jobs",
        },
        "Report": {"Type": "Choice",
                   "Choices": [{"Variable": "$.search.failed", "BooleanEquals": True, "Next": "Jobs left running"}],
                   "Default": "Done"},
        "Jobs left running": {
            "Type": "Fail", "Error": JOBS_LEFT_RUNNING,
            "CausePath": "States.Format('a training job of {} is still InProgress after StopTrainingJob; the "
                         "iterations of \"Stop each job\" in this execution name it', $.execution_arn)",
        },
        # The output names the run, without the last page of job records (a terminal Pass: cfn-lint's schema
        # refuses OutputPath on Succeed).
        "Done": {"Type": "Pass", "Parameters": {"execution_arn.$": f"$.{EXECUTION_ARN}", "redriven": False},
                 "End": True},
    }
    definition = {
        "Comment": f"Stops the training jobs of {environment}'s workload runs that ended ({', '.join(STATUSES)}) "
                   f"while a job still ran.",
        "QueryLanguage": "JSONPath",
        "StartAt": "Let the jobs be found",
        "TimeoutSeconds": timeout_seconds,
        "States": states,
    }
    problems = [*integrations.definition_problems(definition, "job reaper"),
                *intrinsics.definition_problems(definition, "job reaper")]
    if problems:
        raise SpecError(problems)
    return definition
