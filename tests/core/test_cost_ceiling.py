"""`max_run_cost_usd` at validate (issue 25): the spec's own run must fit, at the highest price of its types.

Prices are the catalog's rows (compiler/data/instance_types.csv, us-east-1 list prices, USD per instance-hour):
ml.p4d.24xlarge 37.688, ml.g5.2xlarge 1.515, ml.g5.4xlarge 2.03; ml.g6.48xlarge has none.
"""

from __future__ import annotations

from compiler.overrides import OverridePolicy

G5 = {"instance_type": "ml.g5.2xlarge", "instance_count": 1, "distribution": ..., "max_run": 3600,
      "checkpoints": True}


def test_the_specs_own_worst_case_at_the_ceiling_passes(make) -> None:
    # BASE: 2 x ml.p4d.24xlarge, max_run 86400 s: 2 x 37.688 x 24 = 1809.024 USD
    assert make(max_run_cost_usd=1809.03).max_run_cost_usd == 1809.03


def test_a_ceiling_below_the_specs_own_worst_case_is_refused_with_both_fixes(rejects) -> None:
    rejects("max_run_cost_usd", "max_run 86400 s x 75.376 USD per hour for 2 instance(s)", "= 1809.02 USD",
            "raise max_run_cost_usd to at least 1809.03 or lower max_run to 86399", "list prices in us-east-1",
            max_run_cost_usd=1809.02)


def test_fallback_types_count_at_their_price(make, rejects) -> None:
    retry = {"max_attempts": 2, "fallback_instance_types": ["ml.g5.4xlarge"]}
    rejects("max_run_cost_usd", "2.03 USD per hour for 1 instance(s)", "lower max_run to 3582",
            **G5, capacity_retry=retry, max_run_cost_usd=2.02)
    assert make(**G5, capacity_retry=retry, max_run_cost_usd=2.03).max_run_cost_usd == 2.03
    assert make(**G5, max_run_cost_usd=1.52).max_run_cost_usd == 1.52  # 1.515 without the fallback


def test_a_type_without_a_price_cannot_have_a_ceiling(rejects) -> None:
    rejects("max_run_cost_usd", "no verified price for ml.g6.48xlarge", "remove max_run_cost_usd",
            **G5, capacity_retry={"fallback_instance_types": ["ml.g6.48xlarge"]}, max_run_cost_usd=1000)


def test_the_ceiling_is_a_positive_number(rejects) -> None:
    rejects("max_run_cost_usd", "must be a number from 0.01", max_run_cost_usd=0)
    rejects("max_run_cost_usd", "must be a number from 0.01", max_run_cost_usd="100")


def test_the_policy_refuses_counts_whose_budget_is_below_max_run(make) -> None:
    policy = OverridePolicy.of(make(**G5, max_instance_count=3, max_run_cost_usd=3.03))
    # 3.03 USD x 3600 / 1.515 per instance: 7200 s, 3600 s, 2400 s
    assert dict(policy.budgets) == {1: 7200, 2: 3600, 3: 2400}
    assert policy.refused_counts() == [3]
    assert policy.check({"instance_count": 3, "max_run": 2400}) == []
    [message] = policy.check({"instance_count": 3, "max_run": 2401})
    assert "with instance_count 3 max_run may be at most 2400 seconds" in message


def test_no_ceiling_no_budgets(make) -> None:
    policy = OverridePolicy.of(make())
    assert (policy.cost_ceiling_usd, dict(policy.budgets)) == (None, {})


def test_the_summary_line_shows_the_ceiling_and_the_worst_case(make) -> None:
    from trainctl.summary import workload_rows

    # 2 x ml.p4d.24xlarge at 37.688 USD per instance-hour = 75.376 per hour; 86400 s: 1809.024 USD
    [_, _, row, _] = workload_rows(["demo"], {"demo": make(max_run_cost_usd=2000)}, {"demo": "Workloads07"})
    assert row.endswith("| 75.38<br>ceiling 2,000.00/run, worst case 1,809.02 (us-east-1 prices) |")
    [_, _, plain, _] = workload_rows(["demo"], {"demo": make()}, {"demo": "Workloads07"})
    assert plain.endswith("| 75.38 |")
