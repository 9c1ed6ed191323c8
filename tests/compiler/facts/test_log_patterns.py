"""From a metric's regex to the CloudWatch Logs filter pattern the stall watchdog asks with (facts/log_patterns.py).

CloudWatch Logs' regex filter patterns ("Supported regular expressions (regex) syntax", CloudWatch Logs user guide)
take letters, digits, the symbols `: _ # = @ / ; , -` and the operators `^ $ ? [ ] { } | \\ * + .`, no parentheses
and no multi-byte characters, between `%` signs, and match anywhere in a line. Each pattern here must stay within
that subset, and find every line its metric's regex finds (checked with Python's `re.search`, of which the subset's
meaning is a part). The regexes are `metric_definitions` of public SageMaker examples and of this project.
"""

from __future__ import annotations

import re

import pytest

from compiler.facts.log_patterns import MIN_TEXT, literal_runs, progress_pattern

ALLOWED = re.compile(r"[A-Za-z0-9:_#=@/;,\-^$?\[\]{}|\\*+.]+")

# (metric regex, the pattern, lines the metric matches)
CASES = [
    ("train_loss=([0-9.]+)", "%train_loss=%", ["step 10 train_loss=2.31 tokens_per_sec=1.5"]),
    ("val_loss=([0-9\\.]+)", "%val_loss=%", ["step=100 val_loss=3.004"]),
    # aws/amazon-sagemaker-examples (PyTorch MNIST): a space, written as any character
    ("Test set: Average loss: ([0-9\\.]+)", "%Test.set:.Average.loss:%", ["Test set: Average loss: 0.0351, Acc"]),
    # the built-in XGBoost algorithm's log line: "[0]#011train-merror:0.1"
    (".*\\[[0-9]+\\].*#011train-merror:([-+]?[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?)", "%#011train-merror:%",
     ["[12:00:01] [0]#011train-merror:0.0133#011validation-merror:0.02"]),
    ("loss: ([0-9\\.]+)", "%loss:%", ["Epoch 3 loss: 0.12"]),
    ("Epoch\\s+(\\d+)", "%Epoch%", ["Epoch    12 done"]),
    ("'eval_accuracy': ([0-9]+\\.[0-9]+)", "%eval_accuracy.:%", ["{'eval_accuracy': 0.91, 'epoch': 2.0}"]),
    ("tokens/s=(\\d+)", "%tokens/s=%", ["tokens/s=18234"]),
    ("x\\.y=(\\d)", "%x\\.y=%", ["x.y=3"]),
    ("smoke_started=([0-9.]+)", "%smoke_started=%", ["smoke_started=1 python=3.12.8"]),
    # a quantified character is not required of every line: the longest piece that is
    ("losses?=([0-9.]+)", "%losse%", ["losses=1.0"]),
]


@pytest.mark.parametrize(("regex", "pattern", "lines"), CASES)
def test_each_pattern_finds_every_line_of_its_metric(regex: str, pattern: str, lines: list[str]) -> None:
    assert progress_pattern(regex) == pattern
    assert pattern.startswith("%") and pattern.endswith("%") and ALLOWED.fullmatch(pattern[1:-1])
    for line in lines:
        assert re.search(regex, line), (regex, line)
        assert re.search(pattern[1:-1], line), (pattern, line)


@pytest.mark.parametrize("regex", [
    "([0-9.]+)",  # no text at all
    "(loss|acc)=([0-9.]+)",  # "=": below MIN_TEXT characters of text
    "loss|acc=([0-9.]+)",  # an alternation outside any group: no piece is required of every line
    "(?i)loss=([0-9.]+)",  # case-insensitive: the subset has no such flag
    "(?x) loss = (\\d+)",  # verbose: spaces mean nothing
    "ab(\\d)",  # two characters: below MIN_TEXT
    "[a-z]+=(\\d+)",
])
def test_a_regex_without_a_required_piece_of_text_has_no_pattern(regex: str) -> None:
    assert progress_pattern(regex) is None


def test_the_shortest_piece_of_text_is_min_text_characters() -> None:
    assert MIN_TEXT == 3
    assert progress_pattern("abc=(\\d)") == "%abc=%"
    assert progress_pattern("ab (\\d)") is None  # "ab" and a space: two characters of text


def test_text_inside_groups_classes_and_repetitions_is_not_required() -> None:
    assert literal_runs("pre(mid)post[xyz]end{2}") == ["pre", "post", "en"]
    assert literal_runs("a\\(b\\)c") == ["a(b)c"]  # escaped parentheses are text
    assert literal_runs("é=x=(\\d)") == ["=x="]  # a multi-byte character ends a piece
