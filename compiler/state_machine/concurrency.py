"""One run at a time per workload and environment, unless the spec allows more (issue 21).

Two executions started together would each launch a full job. After the input check, the run lists its state
machine's RUNNING executions (ListExecutions, AWS SDK integration; "Results are sorted by time, with the most recent
execution first", running ones by start date) and goes on only when it is the only one or the oldest one: of runs
started together exactly one, the oldest, trains; the others end at once with `AlreadyRunning`, before any job.

ListExecutions "is eventually consistent": a run started a moment earlier may be missing from the list. The run
therefore waits `SETTLE_SECONDS` before it lists, so an older run is listed by then; this is best effort, not a lock.
A list that fails (the role lacks `states:ListExecutions`, or throttling that outlasts the retries) ends the run
with `ConcurrencyCheckFailed`: starting a second full job is the costlier mistake.
"""

from __future__ import annotations

from typing import Any

from compiler.state_machine import integrations
from compiler.state_machine.asl import literal

LIST_RESOURCE = integrations.sdk_resource("sfn", "listExecutions")
SDK_GENERIC_ERROR = integrations.generic_error("sfn", sdk=True)
SETTLE_SECONDS = 10
ALREADY_RUNNING = "AlreadyRunning"
CHECK_FAILED = "ConcurrencyCheckFailed"
ENTRY = "Let other starts show"


def concurrency_states(workload: str, allowed: bool, next_state: str) -> tuple[str, dict[str, Any]]:
    """(entry state, states): nothing when the spec allows concurrent runs."""
    if allowed:
        return next_state, {}
    executions = "$.Executions"
    cause = (f"States.Format('another run of {{}} is in progress ({{}}); one run at a time: wait for it, or stop it "
             f"with trainctl stop, then start again', {literal(workload)}, $.running.oldest.ExecutionArn)")
    return ENTRY, {
        ENTRY: {"Type": "Wait", "Seconds": SETTLE_SECONDS, "Next": "List running executions",
                "Comment": "ListExecutions is eventually consistent: give an execution started just before this one "
                           "time to be listed."},
        "List running executions": {
            "Type": "Task", "Resource": LIST_RESOURCE,
            "Parameters": {"StateMachineArn.$": "$$.StateMachine.Id", "StatusFilter": "RUNNING", "MaxResults": 1000},
            "ResultSelector": {
                "count.$": f"States.ArrayLength({executions})",
                "oldest.$": f"States.ArrayGetItem({executions}, States.MathAdd(States.ArrayLength({executions}), -1))",
                "me.$": "$$.Execution.Id",
            },
            "ResultPath": "$.running",
            "Retry": [{"ErrorEquals": [SDK_GENERIC_ERROR], "IntervalSeconds": 2, "BackoffRate": 2.0,
                       "MaxAttempts": 4}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.list_error", "Next": "Cannot list runs"}],
            "Next": "Another run in progress?",
        },
        "Another run in progress?": {
            "Type": "Choice",
            "Choices": [{"And": [{"Variable": "$.running.count", "NumericGreaterThan": 1},
                                 {"Not": {"Variable": "$.running.oldest.ExecutionArn",
                                          "StringEqualsPath": "$.running.me"}}],
                         "Next": "Already running"}],
            "Default": next_state,
        },
        "Already running": {"Type": "Fail", "Error": ALREADY_RUNNING, "CausePath": cause},
        "Cannot list runs": {
            "Type": "Fail", "Error": CHECK_FAILED,
            "CausePath": "States.Format('could not list the running executions of this state machine ({}: {}); its "
                         "role needs states:ListExecutions on it', $.list_error.Error, $.list_error.Cause)",
        },
    }
