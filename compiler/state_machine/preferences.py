"""`ResourceConfig.InstancePreferences`: SageMaker's own failover between instance types, where it fits (issue 21).

botocore 1.44.8's SageMaker model: an ordered list of 1 to 5 instance types (each with an optional count and
training plans); SageMaker launches the job on the first type with capacity and reports the one it chose as
`ResourceConfig.SelectedInstanceType`. It is mutually exclusive with `InstanceType`, `InstanceGroups`,
`InstancePlacementConfig` and managed spot, supports only on-demand and flexible training plans, and the request
carries one image, one `Environment` and one set of hyperparameters for all its types.

A spec asks for it (`capacity_retry.instance_preferences: true`): it changes who picks the type and when, so it is
not turned on behind a spec's back. It needs every type of the schedule to compile to the same request but for the
type (the same image, `Environment` and hyperparameters: the generic Estimator, typically; the SDK's framework
estimators put `sagemaker_instance_type` in the hyperparameters of distributed jobs, and EFA types need variables
others must not get), and no spot, instance groups, placement config or job-level training plan; a spec that asks
without that is refused, naming what differs. The run's own relaunches (CapacityError, capacity window) then send the
same list again; the summary reports the chosen type and its price.
"""

from __future__ import annotations

from typing import Any

from compiler.errors import Problem
from compiler.state_machine.machine import MachineSpec

MAX_PREFERENCES = 5  # botocore: ResourceConfig.InstancePreferences max
SELECTED = "Selected type?"
EXCLUSIVE = ("InstanceGroups", "InstancePlacementConfig", "TrainingPlanArn")


def unfit(spec: MachineSpec) -> list[str]:
    """Why the spec's types cannot go as InstancePreferences (empty: they can)."""
    variants = spec.variants
    if not 2 <= len(variants) <= MAX_PREFERENCES:
        return [f"needs 2 to {MAX_PREFERENCES} types (instance_type and fallback_instance_types), not {len(variants)}"]
    reasons = []
    first = variants[0]
    for v in variants[1:]:
        differs = [what for what, same in (("image", v.image == first.image),
                                            ("environment variables", v.environment == first.environment),
                                            ("hyperparameters " + ", ".join(sorted(v.hyperparameters)),
                                             not v.hyperparameters)) if not same]
        if differs:
            reasons.append(f"{v.instance_type} compiles with another {' and '.join(differs)} than {first.instance_type}")
    resources = spec.request.get("ResourceConfig", {})
    if spec.request.get("EnableManagedSpotTraining"):
        reasons.append("managed spot training excludes it")
    reasons += [f"ResourceConfig.{k} excludes it" for k in EXCLUSIVE if k in resources]
    return reasons


def preferred_types(spec: MachineSpec) -> tuple[str, ...]:
    """The types to send as InstancePreferences, primary first; () where the request names one type."""
    if not spec.instance_preferences or unfit(spec):
        return ()
    return tuple(v.instance_type for v in spec.variants)


def problems(spec: MachineSpec) -> list[Problem]:
    """A spec that asks for InstancePreferences its types cannot take: what differs, and the fix."""
    if not spec.instance_preferences:
        return []
    return [Problem(spec.source, "capacity_retry.instance_preferences",
                    f"{reason}; SageMaker takes one request for every preferred type: drop instance_preferences (the "
                    f"state machine then relaunches on each type in turn) or use types that compile alike")
            for reason in unfit(spec)]


def selected_states(spec: MachineSpec, next_state: str) -> dict[str, Any]:
    """After a describe: make the type SageMaker chose the run's variant (its price goes into the summary)."""
    selected = "$.job.v.ResourceConfig.SelectedInstanceType"  # "Read job" keeps the description under v
    rules, states = [], {}
    for index, instance_type in enumerate(preferred_types(spec)):
        name = f"Selected {instance_type}"
        rules.append({"And": [{"Variable": selected, "IsPresent": True},
                              {"Variable": selected, "StringEquals": instance_type}], "Next": name})
        states[name] = {"Type": "Pass", "ResultPath": "$.launch", "Next": next_state,
                        "Parameters": {"name.$": "$.launch.name", "hyperparameters.$": "$.launch.hyperparameters",
                                       "variant.$": f"States.ArrayGetItem($.defaults.variants, {index})"}}
    return {SELECTED: {"Type": "Choice", "Choices": rules, "Default": next_state}, **states}
