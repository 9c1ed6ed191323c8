"""States for the failure paths where the run cannot tell whether a training job exists (issues 21 and 32).

- A server error (status 5xx) on CreateTrainingJob does not say whether the job was created. Repeating the call under
  the same name would collide with a job the first call did create (names are unique per account and Region), so
  the job is looked up first: if it exists the run waits on it like on any job (`poll`), else the call is repeated.
- When CreateTrainingJob failed and DescribeTrainingJob failed too, a job of that name may be running. The run does
  not report "not created" and leave: it sends StopTrainingJob for the name (a job that does not exist makes the
  stop fail, which is caught) and reports the job's state as unknown, stopped. Only SageMaker's answer that no job
  of the name exists proves that none does: "Requested resource not found." (NOT_FOUND_CAUSE), or the modelled
  ResourceNotFound should the service ever send it; the run then ends "not created" at once.
- When the run waits on its job and DescribeTrainingJob keeps failing, the job is stopped by name too
  (`lost_job_states`).
"""

from __future__ import annotations

from typing import Any

from compiler.state_machine import integrations

DESCRIBE_RESOURCE = integrations.sdk_resource("sagemaker", "describeTrainingJob")
STOP_RESOURCE = integrations.sdk_resource("sagemaker", "stopTrainingJob")  # StopTrainingJob has no optimized form
SDK_GENERIC_ERROR = integrations.generic_error("sagemaker", sdk=True)
NOT_FOUND_ERRORS = integrations.modelled_error("sagemaker", "ResourceNotFound", sdk=True)
# What SageMaker answers DescribeTrainingJob for a name no job has: a ValidationException "Requested resource not
# found." (aws/aws-sdk#165, boto/boto3#2808; not the ResourceNotFound the model lists), which the AWS SDK integration
# reports as SageMaker.SageMakerException with the message in the Cause.
NOT_FOUND_CAUSE = "*Requested resource not found*"
LOOKUP_RETRIES = 2  # a throttled look-up after a server error is repeated (5 s, 10 s), then taken as "no job"
UNKNOWN = "Unknown"
CREATED_ANYWAY = "Created despite the error?"
STOP_UNKNOWN = "Stop unknown job"


def server_error_states(retry_state: str, give_up_state: str, watch_state: str, read_state: str,
                        retries: int) -> dict[str, Any]:
    """Look for the job after a server error; wait on it (`watch_state`, the poll loop) if it runs, read it if it
    ended, else repeat the call or give up."""
    running = {"Or": [{"Variable": "$.job.raw.TrainingJobStatus", "StringEquals": status}
                      for status in ("InProgress", "Stopping")]}
    return {
        CREATED_ANYWAY: {
            "Type": "Task", "Resource": DESCRIBE_RESOURCE, "Parameters": {"TrainingJobName.$": "$.launch.name"},
            "ResultPath": "$.job.raw",
            "Comment": "A 5xx answer does not say whether the job was created: look before repeating.",
            "Retry": [{"ErrorEquals": [SDK_GENERIC_ERROR], "IntervalSeconds": 5, "BackoffRate": 2.0,
                       "MaxAttempts": LOOKUP_RETRIES}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.describe_error", "Next": "Repeat the call?"}],
            "Next": "Found job running?",
        },
        "Repeat the call?": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.run.throttle.n", "NumericLessThan": retries, "Next": retry_state}],
            "Default": give_up_state,
        },
        "Found job running?": {"Type": "Choice", "Choices": [{**running, "Next": watch_state}], "Default": read_state},
    }


def _stop_and_report_unknown(stop: str, report: str, comment: str, reason: str, job_defaults: dict[str, Any],
                             next_state: str) -> dict[str, Any]:
    """Stop the job of the launch's name (a failed stop changes nothing), then report its state as unknown."""
    kept = {k: v for k, v in job_defaults.items() if k not in ("TrainingJobName", "TrainingJobStatus", "FailureReason")}
    return {
        stop: {
            "Type": "Task", "Comment": comment,
            "Resource": STOP_RESOURCE, "Parameters": {"TrainingJobName.$": "$.launch.name"}, "ResultPath": "$.stop",
            "Retry": [{"ErrorEquals": [SDK_GENERIC_ERROR], "IntervalSeconds": 5, "BackoffRate": 2.0, "MaxAttempts": 3}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.stop", "Next": report}],
            "Next": report,
        },
        report: {
            "Type": "Pass",
            "Parameters": {"v": {**kept, "TrainingJobName.$": "$.launch.name", "TrainingJobStatus": UNKNOWN,
                                 "FailureReason.$": reason}},
            "ResultPath": "$.job", "Next": next_state,
        },
    }


def lost_job_states(job_defaults: dict[str, Any], next_state: str) -> dict[str, Any]:
    """The run waited on its job and can no longer describe it: stop it by name, report its state as unknown."""
    reason = ("States.Format('unknown, stopped: DescribeTrainingJob failed ({}: {}) while the run waited on {}; "
              "StopTrainingJob was sent for it', $.describe_error.Error, $.describe_error.Cause, $.launch.name)")
    return _stop_and_report_unknown("Stop job lost from sight", "Job lost from sight",
                                    "The job may still run: stop it rather than leave it billing unseen.", reason,
                                    job_defaults, next_state)


def unknown_job_states(job_defaults: dict[str, Any], next_state: str) -> dict[str, Any]:
    """Stop whatever job may carry the launch's name, then report its state as unknown, stopped."""
    reason = ("States.Format('unknown, stopped: CreateTrainingJob failed ({}: {}) and DescribeTrainingJob failed "
              "({}: {}); StopTrainingJob was sent for {} in case the job exists', $.failure.Error, $.failure.Cause, "
              "$.describe_error.Error, $.describe_error.Cause, $.launch.name)")
    return _stop_and_report_unknown(STOP_UNKNOWN, "Job state unknown",
                                    "A job of this name may exist: stopping one that does not fails, harmlessly.",
                                    reason, job_defaults, next_state)
