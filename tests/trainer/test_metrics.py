"""Metric lines are captured by the shipped workloads' metric_definitions regexes, value for value, and no
regex captures another field's number (or a number from the other kind of line)."""

from __future__ import annotations

import pytest
from gptlm.metrics import eval_line, step_line

from tests.trainer.conftest import workload_metric_regexes

TRAIN_METRICS = {"train:loss", "train:tokens_per_sec", "train:step_time_ms"}


def test_workloads_declare_the_training_and_validation_metrics():
    assert TRAIN_METRICS | {"validation:loss"} <= set(workload_metric_regexes())


@pytest.mark.parametrize("loss, tokens, ms", [(3.4521, 123456.7, 250.1), (0.0001, 12_345_678.9, 0.5),
                                              (11.0, 0.0, 100000.0)])
def test_each_regex_captures_its_own_value(loss, tokens, ms):
    line = step_line(120, loss, tokens, ms, lr=3e-4, grad_norm=0.75)
    regexes = workload_metric_regexes()
    assert float(regexes["train:loss"].search(line).group(1)) == pytest.approx(loss, abs=1e-4)
    assert float(regexes["train:tokens_per_sec"].search(line).group(1)) == pytest.approx(tokens, abs=0.1)
    assert float(regexes["train:step_time_ms"].search(line).group(1)) == pytest.approx(ms, abs=0.1)
    assert regexes["validation:loss"].search(line) is None


@pytest.mark.parametrize("val", [3.6012, 0.00004, 123456.0])
def test_the_validation_line_is_read_only_by_the_validation_regex(val):
    line = eval_line(500, val)
    assert line.startswith("step=500 val_loss=") and "e" not in line.split("=")[-1]
    regexes = workload_metric_regexes()
    assert float(regexes["validation:loss"].search(line).group(1)) == pytest.approx(val, abs=1e-4)
    for name in TRAIN_METRICS:  # in particular train:loss must not capture val_loss's number
        assert regexes[name].search(line) is None, name


def test_a_diverged_loss_emits_no_bogus_metric_point():
    regexes = workload_metric_regexes()
    assert regexes["train:loss"].search(step_line(5, float("nan"), 10.0, 1.0, lr=1e-3)) is None
    assert regexes["validation:loss"].search(eval_line(5, float("nan"))) is None
    assert regexes["validation:loss"].search(eval_line(5, float("inf"))) is None
