"""A workload's cost cell, as the summary and the review table it from the state machine's summary metadata."""

from __future__ import annotations

from compiler.facts.summaries import WorkloadSummary
from trainctl.common.money import hourly_cell


def test_a_fallback_type_without_a_verified_price_reads_n_a() -> None:
    # A template's metadata leaves out a None figure (the CDK drops nulls): the type is still a relaunch's target.
    summary = WorkloadSummary.of({"cost_per_hour_usd": None, "fallback_instance_types": ["ml.p5e.48xlarge"],
                                  "fallback_cost_per_hour_usd": {}})
    assert hourly_cell(summary) == "n/a<br>fallback ml.p5e.48xlarge: n/a"


def test_priced_fallbacks_and_spot_ceilings() -> None:
    summary = WorkloadSummary.of({"cost_per_hour_usd": 1.515, "spot": True, "fallback_instance_types": ["ml.g5.4xlarge"],
                                  "fallback_cost_per_hour_usd": {"ml.g5.4xlarge": 2.03}})
    assert hourly_cell(summary) == ("≤ 1.51 spot (on-demand ceiling)<br>fallback ml.g5.4xlarge: ≤ 2.03 spot "
                                    "(on-demand ceiling)")


def test_a_summary_from_before_the_fallback_list_uses_its_figures() -> None:
    summary = WorkloadSummary.of({"cost_per_hour_usd": 2.0, "fallback_cost_per_hour_usd": {"ml.m5.xlarge": 0.23}})
    assert hourly_cell(summary) == "2.00<br>fallback ml.m5.xlarge: 0.23"
