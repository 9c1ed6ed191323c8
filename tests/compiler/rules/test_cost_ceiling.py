"""`max_run_cost_usd` at validate (issue 25): the spec's own run must fit, at the highest price of its types in the
environment's region.

Prices are the region's table (compiler/facts/data/prices/us-east-1.json, USD per instance-hour): ml.p4d.24xlarge 37.688,
ml.g5.2xlarge 1.515, ml.g5.4xlarge 2.03; ml.g6.48xlarge has none. The repository has no us-west-2 table (prod's
region in tests/project.py), so every ceiling there is refused with the command that writes one.
"""

from __future__ import annotations

from typing import Any

import pytest

from compiler import rules
from compiler.compilation.overrides import OverridePolicy
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from tests.project import ENVIRONMENTS

G5 = {"instance_type": "ml.g5.2xlarge", "instance_count": 1, "distribution": ..., "max_run": 3600,
      "checkpoints": True}


def ceiling_problems(w: Workload, env: Environment) -> list[str]:
    """The environment rules' problems on max_run_cost_usd, priced at the list prices of the environment's region."""
    findings = Findings("demo.yaml")
    rules.check_in_environment(w, env, findings)
    return [str(p) for p in findings.problems if p.field == "max_run_cost_usd"]


@pytest.fixture
def in_dev(make):
    """The max_run_cost_usd problems of a changed spec deployed to dev (us-east-1)."""

    def check(**changes: Any) -> list[str]:
        return ceiling_problems(make(**changes), ENVIRONMENTS["dev"])

    return check


def test_the_specs_own_worst_case_at_the_ceiling_passes(in_dev) -> None:
    # BASE: 2 x ml.p4d.24xlarge, max_run 86400 s: 2 x 37.688 x 24 = 1809.024 USD
    assert in_dev(max_run_cost_usd=1809.03) == []


def test_a_ceiling_below_the_specs_own_worst_case_is_refused_with_both_fixes(in_dev) -> None:
    [problem] = in_dev(max_run_cost_usd=1809.02)
    for words in ("max_run 86400 s x 75.376 USD per hour for 2 instance(s)", "= 1809.02 USD",
                  "raise max_run_cost_usd to at least 1809.03 or lower max_run to 86399", "us-east-1 list prices as of"):
        assert words in problem, problem


def test_fallback_types_count_at_their_price(in_dev) -> None:
    retry = {"max_attempts": 2, "fallback_instance_types": ["ml.g5.4xlarge"]}
    [problem] = in_dev(**G5, capacity_retry=retry, max_run_cost_usd=2.02)
    assert "2.03 USD per hour for 1 instance(s)" in problem and "lower max_run to 3582" in problem
    assert in_dev(**G5, capacity_retry=retry, max_run_cost_usd=2.03) == []
    assert in_dev(**G5, max_run_cost_usd=1.52) == []  # 1.515 without the fallback


def test_a_type_without_a_price_cannot_have_a_ceiling(in_dev) -> None:
    [problem] = in_dev(**G5, capacity_retry={"fallback_instance_types": ["ml.g6.48xlarge"]}, max_run_cost_usd=1000)
    assert "no verified us-east-1 price for ml.g6.48xlarge" in problem and "remove max_run_cost_usd" in problem


def test_a_region_without_a_price_table_refuses_every_ceiling_naming_the_command(make) -> None:
    prod = ENVIRONMENTS["prod"]
    assert prod.region == "us-west-2"
    [problem] = ceiling_problems(make(**G5, max_run_cost_usd=1000), prod)
    assert "no verified us-west-2 prices for ml.g5.2xlarge" in problem
    assert "run `trainctl prices --region us-west-2`" in problem and "compiler/facts/data/prices/us-west-2.json" in problem
    assert ceiling_problems(make(**G5), prod) == []  # no ceiling, nothing to enforce


def test_the_ceiling_is_a_positive_number(rejects) -> None:
    rejects("max_run_cost_usd", "must be a number from 0.01", max_run_cost_usd=0)
    rejects("max_run_cost_usd", "must be a number from 0.01", max_run_cost_usd="100")


def test_the_policy_refuses_counts_whose_budget_is_below_max_run(make) -> None:
    policy = OverridePolicy.of(make(**G5, max_instance_count=3, max_run_cost_usd=3.03), "us-east-1")
    # 3.03 USD x 3600 / 1.515 per instance: 7200 s, 3600 s, 2400 s
    assert dict(policy.budgets) == {1: 7200, 2: 3600, 3: 2400}
    assert policy.refused_counts() == [3]
    assert policy.check({"instance_count": 3, "max_run": 2400}) == []
    [message] = policy.check({"instance_count": 3, "max_run": 2401})
    assert "with instance_count 3 max_run may be at most 2400 seconds" in message


def test_no_ceiling_no_budgets(make) -> None:
    policy = OverridePolicy.of(make(), "us-east-1")
    assert (policy.cost_ceiling_usd, dict(policy.budgets)) == (None, {})


def test_the_summary_line_shows_the_ceiling_and_the_worst_case(make) -> None:
    from compiler.compilation.describe import workload_summary
    from compiler.facts.summaries import WorkloadSummary
    from tests.project import ENVIRONMENTS
    from trainctl.common.assembly import Placed
    from trainctl.project.summary import workload_rows

    def row_of(workload: Any) -> str:  # as the summary reads it from the state machine's metadata
        placed = Placed("Workloads07", WorkloadSummary.of(workload_summary(workload, ENVIRONMENTS["dev"])))
        return workload_rows({"demo": placed}, "us-east-1")[2]

    # 2 x ml.p4d.24xlarge at 37.688 USD per instance-hour = 75.376 per hour; 86400 s: 1809.024 USD
    assert row_of(make(max_run_cost_usd=2000)).endswith(
        "| 75.38<br>ceiling 2,000.00/run, worst case 1,809.02 (us-east-1 prices) |")
    assert row_of(make()).endswith("| 75.38 |")
