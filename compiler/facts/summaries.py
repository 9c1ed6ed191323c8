"""What one package writes and another reads, named once so a renamed key breaks at check time: two summaries, and
the record of a synth's warnings.

- `RunSummary`: a run's outcome, the execution's output (and the notification's body). The state machine writes it
  (the `Summarize` state, compiler/state_machine/definition.py); `trainctl runs`, `logs` and `start --follow` read it
  from DescribeExecution or the execution's history.
- `WorkloadSummary`: what a workload runs, on what, at what list price. compiler/compilation/describe.py writes it into each
  state machine's template metadata; `trainctl review` reads it from two synthesized revisions, `trainctl summary`
  from one.
- `WARNINGS_FILE`: beside a cloud assembly's manifest, the compile's warnings of that synth (`{"warnings": [...]}`).
  The CDK layer writes it when it synthesizes (stacks/app.py); `trainctl summary` and `review` read it with the
  templates (trainctl/common/assembly.read_warnings).

The readers take data another revision or a failed run may have written, so every field may be missing: a reader
reads the attributes of `RunSummary.of(...)` or `WorkloadSummary.of(...)`, None where a field is missing. The
tests hold the writers to these names (tests/compiler/facts/test_summaries.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

WARNINGS_FILE = "training-platform-warnings.json"


@dataclass(frozen=True)
class RunSummary:
    """A run's summary as the state machine writes it (None: the run or the revision did not write the field)."""

    workload: str | None = None
    environment: str | None = None
    execution_arn: str | None = None
    run_id: str | None = None
    attempts: int | None = None  # attempts that started, relaunches included
    job_name: str | None = None  # the last job
    job_arn: str | None = None
    status: str | None = None  # the last job's TrainingJobStatus, or NotCreated
    failure_reason: str | None = None
    billable_seconds: int | None = None
    training_seconds: int | None = None
    model_artifacts: str | None = None
    instance_count: int | None = None
    instance_type: str | None = None
    cost_per_hour_usd: float | None = None  # catalog list price of the cluster the last job ran on
    cost_estimate: str | None = None  # how the estimate is made, in words
    overrides: Mapping[str, Any] | None = None  # the execution input
    # With max_run_cost_usd only:
    cost_ceiling_usd: float | None = None
    max_runtime_seconds: int | None = None
    budget_left_seconds: int | None = None
    # With a stall_watchdog only:
    stall_relaunches: int | None = None  # relaunches after the watchdog stopped a job that made no progress
    stall_watchdog: Mapping[str, Any] | None = None  # the spec's {metric, minutes, max_relaunches}

    @classmethod
    def of(cls, data: Any) -> RunSummary | None:
        """The summary in `data` (a parsed execution output or state result), or None when it holds none."""
        if not isinstance(data, Mapping) or not all(isinstance(data.get(k), str) for k in IDENTIFYING):
            return None
        return cls(**{k: data[k] for k in RUN_SUMMARY_KEYS if k in data})

    @property
    def cost_usd(self) -> float | None:
        """Catalog price per hour x billable seconds (None where either is unknown)."""
        rate, seconds = self.cost_per_hour_usd, self.billable_seconds
        if not isinstance(rate, int | float) or not isinstance(seconds, int | float):
            return None
        return float(rate) * float(seconds) / 3600


RUN_SUMMARY_KEYS: tuple[str, ...] = tuple(f.name for f in fields(RunSummary))
# The fields only a summary has: a state's result that holds them is the summary.
IDENTIFYING = ("job_name", "execution_arn")


@dataclass(frozen=True)
class WorkloadSummary:
    """A workload's facts in its state machine's template metadata (`compiler.compilation.describe.METADATA_KEY`); None: the
    revision that wrote it predates the field."""

    name: str | None = None
    environment: str | None = None
    instances: list[dict[str, Any]] | None = None  # [{"type", "count", "group" (instance groups only)}]
    gpus: int | None = None
    efa: bool | None = None
    fallback_instance_types: list[str] | None = None
    max_instance_count: int | None = None
    image: str | None = None
    strategy: str | None = None
    hyperparameters: dict[str, Any] | None = None
    inputs: list[str] | None = None  # "<channel>: FSx <path>" or "<channel>: S3 <uri>"
    cost_per_hour_usd: float | None = None  # on-demand list price (with spot, the most an hour can cost)
    spot: bool | None = None  # managed spot training (written only where true)
    prices: str | None = None  # whose list prices those are
    fallback_cost_per_hour_usd: dict[str, float | None] | None = None
    max_run: int | None = None
    max_run_cost_usd: float | None = None  # the per-run cost ceiling (None: none, or a revision before it)
    worst_case_run_usd: float | None = None  # the spec's own run at the highest price of its types (None: unpriced)

    @classmethod
    def of(cls, data: Any) -> WorkloadSummary:
        """The summary in template metadata (fields this revision does not know are left out)."""
        return cls(**{k: data[k] for k in WORKLOAD_SUMMARY_KEYS if k in data}) if isinstance(data, Mapping) else cls()

    @property
    def shape(self) -> str:
        """`ml.p4d.24xlarge x 2` (` + ` between instance groups); `?` where unknown."""
        return " + ".join(f"{i.get('type')} x {i.get('count')}" for i in self.instances or []) or "?"


WORKLOAD_SUMMARY_KEYS: tuple[str, ...] = tuple(f.name for f in fields(WorkloadSummary))
