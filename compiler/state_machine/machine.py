"""What a workload's state machine is built from: its compiled request(s), override policy and relaunch plan.

A workload may name fallback instance types for capacity failures. Each type is compiled exactly like the primary
(`compile_request` on the workload with that type); the parts of the request that differ between types (instance
type, image, environment, a few SDK hyperparameters) become a `Variant`, and the relaunch schedule says which
variant each attempt runs on: the primary, then each fallback in turn, round and round.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.compilation.overrides import OverridePolicy
from compiler.compilation.request import compile_request
from compiler.facts import catalog
from compiler.inputs.environments import Environment
from compiler.inputs.model import StallWatchdog, Workload
from compiler.rules.compute import with_instance_type
from compiler.state_machine import poll

MAX_CAPACITY_WAIT_SECONDS = 24 * 3600  # one relaunch never waits longer than a day, whatever the backoff


@dataclass(frozen=True)
class Variant:
    """The parts of the request one instance type changes, and its price per hour for 1..N instances."""

    instance_type: str
    image: str
    environment: Mapping[str, str] | None
    hyperparameters: Mapping[str, str]  # encoded values that differ from the primary's (e.g. sagemaker_instance_type)
    rates: tuple[float | None, ...]

    def as_state_input(self) -> dict[str, Any]:
        """The variant as definition data. Rates travel as JSON text: an unknown price is null, and a null inside an
        array literal fails the ASL schema (asl-validator), so the summary reads them with `States.StringToJson`."""
        return {"instance_type": self.instance_type, "image": self.image, "environment": dict(self.environment or {}),
                "has_environment": self.environment is not None, "hyperparameters": dict(self.hyperparameters),
                "rates": json.dumps(list(self.rates))}


@dataclass(frozen=True)
class MachineSpec:
    """What the definition needs from a workload in one environment."""

    workload: str
    environment: str
    base_job_name: str
    request: dict[str, Any]  # CreateTrainingJob with ${...} placeholders, on the primary type
    policy: OverridePolicy
    variants: tuple[Variant, ...] = ()  # [primary, *fallbacks]; empty for instance groups
    capacity_relaunches: int = 3
    capacity_wait_seconds: int = 600
    capacity_backoff_rate: float = 2.0
    capacity_window_minutes: int = 10  # how long one attempt may wait for instances (capacity_retry)
    stall: StallWatchdog | None = None  # the spec's stall_watchdog (compiler/state_machine/watchdog.py)
    instance_preferences: bool = False  # capacity_retry.instance_preferences (compiler/state_machine/preferences.py)
    group_rate: float | None = None  # price per hour of a heterogeneous cluster
    source: str = ""
    concurrent_runs: bool = False  # True: executions may run side by side (no check for another run in progress)
    extra: dict[str, Any] = field(default_factory=dict)
    price_region: str = catalog.REFERENCE_REGION  # whose list prices `rates`, `group_rate` and the ceiling use
    spot: bool = False  # EnableManagedSpotTraining: SageMaker bounds the wait for capacity with MaxWaitTimeInSeconds
    max_wait: int | None = None  # the spec's max_wait (spot)
    accelerated: bool = False  # every type the run may launch on is an accelerated one (poll.PENDING_LIMIT_FAMILIES)

    @property
    def attempts(self) -> int:
        """Jobs a run may create at most: the first, its capacity relaunches and its stall relaunches."""
        return 1 + self.capacity_relaunches + (self.stall.max_relaunches if self.stall else 0)

    @property
    def waiting(self) -> poll.Waiting:
        """Who bounds an attempt's wait for instances, and how the run looks at it meanwhile (`poll.waiting`)."""
        return poll.waiting(self.capacity_window_minutes, self.attempts, spot=self.spot, accelerated=self.accelerated)

    @property
    def training_poll_seconds(self) -> int:
        """Seconds between two looks at a training job: the worst case of the run (every attempt running as long as
        SageMaker lets it) fits the execution history (`poll.training_poll_seconds`)."""
        longest = max(self.max_run, self.max_wait or 0) if self.spot else self.max_run
        return poll.training_poll_seconds(longest, self.attempts, self.stall is not None,
                                          self.waiting.history_events)

    @property
    def hyperparameters(self) -> Mapping[str, Any]:
        return self.policy.hyperparameters

    @property
    def instance_type(self) -> str:
        return self.variants[0].instance_type if self.variants else "heterogeneous cluster"

    @property
    def instance_count(self) -> int:
        return self.policy.instance_count

    @property
    def max_run(self) -> int:
        return self.policy.max_run

    def schedule(self) -> list[int]:
        """The variant each attempt runs on: attempt n uses variant n mod the number of types."""
        if not self.variants:
            return []
        return [n % len(self.variants) for n in range(self.capacity_relaunches + 1)]

    def capacity_waits(self) -> list[int]:
        """Seconds to wait before relaunch n+1 after n capacity failures, backoff applied and capped."""
        return [int(min(MAX_CAPACITY_WAIT_SECONDS, self.capacity_wait_seconds * self.capacity_backoff_rate**n))
                for n in range(self.capacity_relaunches + 1)]


def _differs(primary: Mapping[str, str], other: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in other.items() if primary.get(k) != v}


def _variant(workload: Workload, env: Environment, primary: Mapping[str, Any], instance_type: str,
             image: str | None) -> Variant:
    # The primary's own type is the primary request: compiled once (tests/compiler/test_pipeline_once.py).
    request = primary if instance_type == workload.instance_type else compile_request(
        with_instance_type(workload, instance_type), env, training_image=image)
    ceiling = workload.instance_count_ceiling
    return Variant(
        instance_type=instance_type,
        image=request["AlgorithmSpecification"]["TrainingImage"],
        environment=request.get("Environment"),
        hyperparameters=_differs(primary.get("HyperParameters", {}), request.get("HyperParameters", {})),
        rates=tuple(catalog.hourly_cost(instance_type, n, env.region) for n in range(1, ceiling + 1)),
    )


def spec_for(workload: Workload, env: Environment, *, training_image: str | None = None) -> MachineSpec:
    """The MachineSpec of a checked workload in an environment, priced in the environment's region."""
    request = compile_request(workload, env, training_image=training_image)
    variants: tuple[Variant, ...] = ()
    if not workload.compute.instance_groups:
        variants = tuple(_variant(workload, env, request, t, training_image) for t in workload.launch_types)
    return MachineSpec(
        workload=workload.name, environment=env.name, base_job_name=workload.base_job_name, request=request,
        policy=OverridePolicy.of(workload, env.region), variants=variants,
        capacity_relaunches=workload.capacity_retry.max_attempts,
        capacity_wait_seconds=workload.capacity_retry.wait_seconds,
        capacity_backoff_rate=workload.capacity_retry.backoff_rate,
        capacity_window_minutes=workload.capacity_retry.capacity_window_minutes,
        stall=workload.stall_watchdog, instance_preferences=workload.capacity_retry.instance_preferences,
        group_rate=workload.hourly_cost(env.region) if workload.compute.instance_groups else None,
        source=workload.source, concurrent_runs=workload.concurrent_runs, price_region=env.region,
        spot=workload.use_spot_instances, max_wait=workload.max_wait if workload.use_spot_instances else None,
        accelerated=all(poll.pending_limit_applies(t) for t in workload.launch_types),
    )


def state_machine_name(environment: str, workload: str) -> str:
    """The state machine's name in the console: `<env>-<workload>` (<= 80 characters)."""
    return f"{environment}-{workload}"[:80]
