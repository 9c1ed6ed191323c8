"""Metric lines are captured by the shipped workloads' metric_definitions regexes, value for value."""

from __future__ import annotations

import pytest
from gptlm.metrics import step_line

from tests.trainer.conftest import workload_metric_regexes


def test_workloads_declare_the_three_training_metrics():
    assert {"train:loss", "train:tokens_per_sec", "train:step_time_ms"} <= set(workload_metric_regexes())


@pytest.mark.parametrize("loss, tokens, ms", [(3.4521, 123456.7, 250.1), (0.0001, 12_345_678.9, 0.5),
                                              (11.0, 0.0, 100000.0)])
def test_each_regex_captures_its_own_value(loss, tokens, ms):
    line = step_line(120, loss, tokens, ms, lr=3e-4, grad_norm=0.75)
    regexes = workload_metric_regexes()
    assert float(regexes["train:loss"].search(line).group(1)) == pytest.approx(loss, abs=1e-4)
    assert float(regexes["train:tokens_per_sec"].search(line).group(1)) == pytest.approx(tokens, abs=0.1)
    assert float(regexes["train:step_time_ms"].search(line).group(1)) == pytest.approx(ms, abs=0.1)


def test_a_diverged_loss_emits_no_bogus_metric_point():
    line = step_line(5, float("nan"), 10.0, 1.0, lr=1e-3)
    assert workload_metric_regexes()["train:loss"].search(line) is None
