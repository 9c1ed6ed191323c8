"""The per-run cost ceiling in the definition: a budget of run time, spent by each attempt's billable seconds.

`compiler.compilation.cost_ceiling` turns `max_run_cost_usd` into seconds per instance count at synth (ASL cannot multiply), and
the input check refuses a start whose max_run exceeds them (`input_check`). Here the run keeps what is left
(`$.run.budget`): every attempt is granted `min(max_run, budget left)` as MaxRuntimeInSeconds, a capacity relaunch
takes the failed attempt's BillableTimeInSeconds off (`States.MathAdd` of its negation, written as JSON text: ASL has
no subtraction), and a relaunch with nothing left ends the run with `CostCeilingReached` instead of starting a job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.compilation.overrides import OverridePolicy
from compiler.state_machine.machine import MachineSpec

GRANT = "Grant run time"
WITHIN = "Within cost ceiling?"
SHORTEN = "Shorten to budget"
SPENT = "Cost ceiling spent"
UNCOUNT = "Not relaunched"
STATUS = "CostCeilingReached"
ERROR = "CostCeilingReached"


def run_budget(spec: MachineSpec) -> dict[str, Any]:
    """`$.run.budget` at the start: the seconds the ceiling buys with the run's instance count."""
    budgets = spec.policy.budgets
    if spec.policy.cost_ceiling_usd is None:
        return {}
    if spec.policy.instance_count_max is None:  # a heterogeneous cluster: the count cannot change
        return {"budget": budgets[spec.policy.instance_count]}
    table = ", ".join(str(budgets[count]) for count in sorted(budgets))
    return {"budget.$": f"States.ArrayGetItem(States.Array({table}), States.MathAdd($.config.instance_count, -1))"}


def spent_budget(spec: MachineSpec) -> dict[str, Any]:
    """`$.run.budget` for the relaunch: what is left after the failed attempt's billable seconds."""
    if spec.policy.cost_ceiling_usd is None:
        return {}
    negated = "States.StringToJson(States.Format('-{}', $.job.v.BillableTimeInSeconds))"
    return {"budget.$": f"States.MathAdd($.run.budget, {negated})"}


def grant_states(policy: OverridePolicy, train: str, job_defaults: Mapping[str, Any],
                 summarize: str) -> dict[str, Any]:
    """Before each attempt: its MaxRuntimeInSeconds (`$.grant.seconds`), or the end of the run when none is left."""
    reason = (f"max_run_cost_usd {policy.cost_ceiling_usd:g} USD: the billable time of the attempts so far spent the "
              "run time it buys, so the run was not relaunched")
    # The last job that ran (its name, ARN and times), with the run's reason to end
    job = {f"{k}.$": f"$.job.v.{k}" for k in job_defaults if k not in ("TrainingJobStatus", "FailureReason")}
    return {
        GRANT: {"Type": "Pass", "Parameters": {"seconds.$": "$.config.max_run"}, "ResultPath": "$.grant",
                "Next": WITHIN},
        WITHIN: {
            "Type": "Choice",
            "Choices": [{"Variable": "$.run.budget", "NumericLessThan": 1, "Next": SPENT},
                        {"Variable": "$.run.budget", "NumericLessThanPath": "$.config.max_run", "Next": SHORTEN}],
            "Default": train,
        },
        SHORTEN: {"Type": "Pass", "Comment": "Only the run time the ceiling still buys.",
                  "Parameters": {"seconds.$": "$.run.budget"}, "ResultPath": "$.grant", "Next": train},
        SPENT: {"Type": "Pass",
                "Parameters": {"v": {**job, "TrainingJobStatus": STATUS, "FailureReason": reason}},
                "ResultPath": "$.job", "Next": UNCOUNT},
        UNCOUNT: {"Type": "Pass", "Comment": "The relaunch never started: the run made one attempt fewer.",
                  "Parameters": {"id.$": "$.run.id", "tag.$": "$.run.tag", "throttle.$": "$.run.throttle",
                                 "budget.$": "$.run.budget", "attempt.$": "States.MathAdd($.run.attempt, -1)",
                                 "slot.$": "$.run.slot", "stalls.$": "$.run.stalls"},
                  "ResultPath": "$.run", "Next": summarize},
    }
