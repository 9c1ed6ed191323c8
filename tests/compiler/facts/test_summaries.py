"""The summaries one package writes and another reads (compiler/facts/summaries.py): the writers use exactly its names.

A key renamed on one side only fails here (the writer's) or at type check (a reader's attribute)."""

from __future__ import annotations

from typing import Any

from compiler import state_machine as sm
from compiler.compilation.describe import workload_summary
from compiler.facts.summaries import IDENTIFYING, RUN_SUMMARY_KEYS, WORKLOAD_SUMMARY_KEYS, RunSummary, WorkloadSummary


def _state(states: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The state `name`, at the top level or inside a Parallel or Map state."""
    for key, state in states.items():
        if key == name:
            return state
        for inner in [*state.get("Branches", []), state.get("Iterator") or {}, state.get("ItemProcessor") or {}]:
            found = _state(inner.get("States", {}), name)
            if found is not None:
                return found
    return None


def _written_keys(workload: Any, env: Any) -> set[str]:
    summarize = _state(sm.build_definition(sm.spec_for(workload, env))["States"], "Summarize")
    assert summarize is not None, "the definition has no Summarize state"
    return {key.removesuffix(".$") for key in summarize["Parameters"]}


def test_the_state_machine_writes_the_run_summary_by_its_names(make, envs) -> None:
    plain = _written_keys(make(), envs["dev"])
    with_fallbacks = _written_keys(make(capacity_retry={"fallback_instance_types": ["ml.p4de.24xlarge"]}), envs["dev"])
    with_ceiling = _written_keys(make(max_run_cost_usd=2000), envs["dev"])
    with_watchdog = _written_keys(make(metric_definitions=[{"Name": "train:loss", "Regex": "loss=([0-9.]+)"}],
                                       stall_watchdog={"metric": "train:loss"}), envs["dev"])
    for written in (plain, with_fallbacks, with_ceiling, with_watchdog):
        assert written <= set(RUN_SUMMARY_KEYS), written - set(RUN_SUMMARY_KEYS)
        assert set(IDENTIFYING) <= written
    # no name only the reader knows
    assert plain | with_fallbacks | with_ceiling | with_watchdog == set(RUN_SUMMARY_KEYS)


def test_a_run_summary_is_read_only_where_it_is_one() -> None:
    output = {"job_name": "demo-1-0", "execution_arn": "arn:aws:states:us-east-1:1:execution:dev-demo:n",
              "cost_per_hour_usd": 36.0, "billable_seconds": 600, "unknown_later_field": 1}
    run = RunSummary.of(output)
    assert run is not None and run.job_name == "demo-1-0" and run.cost_usd == 6.0
    assert RunSummary.of({"job_name": "demo-1-0"}) is None  # a state's result that is not the summary
    assert RunSummary.of(["job_name"]) is None
    unbilled = RunSummary.of({**output, "billable_seconds": None})
    assert unbilled is not None and unbilled.cost_usd is None


def test_the_template_metadata_holds_the_workload_summary_by_its_names(make, envs) -> None:
    written = workload_summary(make(), envs["dev"])
    assert set(written) == set(WORKLOAD_SUMMARY_KEYS) - {"spot"}  # written only where true
    spot = workload_summary(make(use_spot_instances=True, max_wait=86400, checkpoints=True), envs["dev"])
    assert set(spot) == set(WORKLOAD_SUMMARY_KEYS) and WorkloadSummary.of(spot).spot is True
    read = WorkloadSummary.of(written)
    assert read.shape == "ml.p4d.24xlarge x 2" and read.hyperparameters == {"epochs": 3, "lr": 0.1, "name": "x"}
    assert WorkloadSummary.of({"name": "old"}).instances is None  # a base revision before the field


def test_the_cost_estimate_names_the_prices_of_the_environments_region(make, envs) -> None:
    """dev (us-east-1) has the repository's price table (compiler/facts/data/prices/us-east-1.json, as of 2026-11);
    prod (us-west-2) has none, and its run summaries' costs are null: the note must not name us-east-1's."""
    def note(env: Any) -> str:
        summarize = _state(sm.build_definition(sm.spec_for(make(), env))["States"], "Summarize")
        assert summarize is not None
        return str(summarize["Parameters"]["cost_estimate"])

    assert note(envs["dev"]) == ("cost_per_hour_usd x billable_seconds / 3600 (catalog list prices in us-east-1, "
                                 "2026-11; null where no price is known)")
    assert note(envs["prod"]) == ("cost_per_hour_usd x billable_seconds / 3600 (no verified us-west-2 prices in this "
                                  "revision; null where no price is known)")
