"""What the run does with an attempt that ended: relaunch it, or report it (issue 21).

- `CapacityError` (SageMaker failed the job for lack of capacity): relaunch on the next instance type of the
  schedule after the spec's growing wait (`capacity_retry`);
- stopped for not starting within the capacity window: by the run (`poll`), or by SageMaker where it bounds the
  wait (MaxPendingTimeInSeconds: the job ends Stopped after the run's looks found it waiting, in a row, for all but
  `poll.BACKSTOP_MINUTES` of the limit; stopped sooner, it was a person's doing and the run ends), or, for managed
  spot, by SageMaker after `max_wait` (SecondaryStatus `MaxWaitTimeExceeded`): relaunch on the next type at once (the
  window was the wait); the same budget of relaunches;
- refused for a quota (`create`: ResourceLimitExceeded, no job): the next type at once, from the same budget;
- stopped by the run for making no progress (`watchdog`): relaunch on the same type at once, at most the spec's
  `stall_watchdog.max_relaunches` times; then the run ends with status `Stalled`;
- anything else goes to the summary. Failures of the user's code (AlgorithmError and the like) are never relaunched.

Every relaunch resumes from the run's checkpoint prefix (`${RunId}` is the same for every attempt) under a new job
name (`${Attempt}` + 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compiler.facts import run_metrics
from compiler.state_machine import cost, poll
from compiler.state_machine.asl import format_call
from compiler.state_machine.machine import MachineSpec

OUTCOME = "Job outcome"
COUNT = "Count relaunch"
LAUNCH = "Launch attempt"
STALLED_STATUS = "Stalled"  # the run's status when the stall watchdog spent its relaunches


def _status(value: str) -> dict[str, Any]:
    return {"Variable": "$.job.v.TrainingJobStatus", "StringEquals": value}


def _reason(value: str) -> dict[str, Any]:
    return {"Variable": "$.watch.reason", "StringEquals": value}


def next_run(spec: MachineSpec, wait: str | int, *, next_type: bool, job_ran: bool = True) -> dict[str, Any]:
    """`$.run` for the next attempt: one more attempt (`attempt` names the job), on the next type of the schedule or
    the same (`slot`: capacity relaunches made), the throttling budget renewed, the cost budget spent so far (by the
    attempt's job, where one ran)."""
    spent = cost.spent_budget(spec) if job_ran else ({"budget.$": "$.run.budget"} if cost.run_budget(spec) else {})
    return {"id.$": "$.run.id", "tag.$": "$.run.tag", "throttle": {"n": 0},
            "attempt.$": "States.MathAdd($.run.attempt, 1)",
            **({"wait.$": wait} if isinstance(wait, str) else {"wait": wait}),
            "slot.$": "States.MathAdd($.run.slot, 1)" if next_type else "$.run.slot",
            "stalls.$": "$.run.stalls" if next_type else "States.MathAdd($.run.stalls, 1)",
            **spent}


def job_with(fields: dict[str, str], next_state: str, name: str) -> dict[str, Any]:
    """Two states that overwrite fields of `$.job.v` and go on to `next_state`; a value starting with `$` or
    `States.` is read at run time, any other is literal."""
    dynamic = {f"{k}.$" if v.startswith(("$", "States.")) else k: v for k, v in fields.items()}
    return {
        name: {"Type": "Pass", "Parameters": dynamic, "ResultPath": "$.why",
               "Next": f"{name}: report"},
        f"{name}: report": {"Type": "Pass", "Parameters": {"v.$": "States.JsonMerge($.job.v, $.why, false)"},
                            "ResultPath": "$.job", "Next": next_state},
    }


def _stall_states(spec: MachineSpec, count: Callable[[str, str], dict[str, Any]],
                  summarize: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The outcome rules and states of a job the stall watchdog stopped."""
    if spec.stall is None:
        return [], {}
    stall = spec.stall
    stopped = [_status("Stopped"), _reason(poll.STALLED)]
    reason = format_call(f"Stalled: no {stall.metric} line in its log for {stall.minutes} minutes of training; "
                         "stopped by the run after {} stall relaunch(es)", "$.run.stalls")
    rules = [{"And": [*stopped, {"Variable": "$.run.stalls", "NumericLessThan": stall.max_relaunches}],
              "Next": "Relaunch after stall"},
             {"And": stopped, "Next": "Stall limit reached"}]
    states = {
        "Relaunch after stall": {
            "Type": "Pass", "Comment": "The same type, the next attempt's name, the same checkpoints.",
            "Parameters": next_run(spec, 0, next_type=False), "ResultPath": "$.run", "Next": "Count stall relaunch",
        },
        "Count stall relaunch": count(run_metrics.STALL_RELAUNCHES, LAUNCH),
        **job_with({"TrainingJobStatus": STALLED_STATUS, "FailureReason": reason}, summarize, "Stall limit reached"),
    }
    return rules, states


def _window_ends(spec: MachineSpec) -> list[tuple[dict[str, Any], str]]:
    """(rule, reason) for each way a job ends for waiting too long for instances, by who bounds the wait."""
    window = spec.capacity_window_minutes
    ends = [(_reason(poll.CAPACITY_WINDOW),
             f"CapacityError: the job had not started training after the capacity window ({window} min) on {{}}, "
             f"{{}} capacity relaunch(es) made; stopped by the run")]
    waits = spec.waiting
    if waits.bound == poll.SAGEMAKER:
        # The run did not stop it, and its looks found it waiting, in a row, for about MaxPendingTimeInSeconds until
        # the last one: SageMaker's stop. A job a person stops sooner ends the run as stopped, not relaunched.
        ends.append(({"And": [_reason(poll.NO_REASON),
                              {"Variable": "$.watch.starting", "NumericGreaterThanEquals": waits.pending_looks}]},
                     f"CapacityError: SageMaker stopped {{}} after MaxPendingTimeInSeconds ({waits.pending_limit}) "
                     f"waiting for instances, {{}} capacity relaunch(es) made"))
    if waits.bound == poll.SPOT:
        ends.append(({"Variable": "$.job.v.SecondaryStatus", "StringEquals": "MaxWaitTimeExceeded"},
                     f"CapacityError: SageMaker stopped {{}} after max_wait ({spec.max_wait} s) without finishing on "
                     f"spot capacity (MaxWaitTimeExceeded), {{}} capacity relaunch(es) made"))
    return ends


def outcome_states(spec: MachineSpec, count: Callable[[str, str], dict[str, Any]], summarize: str) -> dict[str, Any]:
    """`Job outcome` and the relaunches it leads to; `count(metric, next)` is a Task that counts one relaunch."""
    stall_rules, stall_states = _stall_states(spec, count, summarize)
    waits = ", ".join(str(w) for w in spec.capacity_waits())
    attempts_left = {"Variable": "$.run.slot", "NumericLessThan": spec.capacity_relaunches}
    window_rules: list[dict[str, Any]] = []
    window_states: dict[str, Any] = {}
    for index, (rule, reason) in enumerate(_window_ends(spec)):
        spent = "Capacity window spent" + (f" ({index + 1})" if index else "")
        window_rules += [{"And": [_status("Stopped"), rule, attempts_left], "Next": "Relaunch after capacity window"},
                         {"And": [_status("Stopped"), rule], "Next": spent}]
        text = format_call(reason, "$.launch.name", "$.run.slot")
        window_states.update(job_with({"FailureReason": text}, summarize, spent))
    return {
        OUTCOME: {
            "Type": "Choice",
            "Choices": [
                {"And": [_status("Failed"), {"Variable": "$.job.v.FailureReason", "StringMatches": "*CapacityError*"},
                         attempts_left], "Next": "Wait for capacity"},
                *window_rules,
                *stall_rules,
                {"Or": [_status("InProgress"), _status("Stopping")], "Next": poll.WATCH},
            ],
            "Default": summarize,
        },
        "Wait for capacity": {
            "Type": "Pass", "ResultPath": "$.run", "Next": COUNT,
            "Parameters": next_run(spec, f"States.ArrayGetItem(States.Array({waits}), $.run.slot)", next_type=True),
        },
        "Relaunch after capacity window": {
            "Type": "Pass", "Comment": "The capacity window was the wait: relaunch on the next type at once.",
            "Parameters": next_run(spec, 0, next_type=True), "ResultPath": "$.run", "Next": COUNT,
        },
        **window_states,
        COUNT: count(run_metrics.CAPACITY_RELAUNCHES, "Wait before relaunch"),
        "Wait before relaunch": {"Type": "Wait", "SecondsPath": "$.run.wait", "Next": LAUNCH},
        **stall_states,
    }

