"""S3 channels of the data bucket read a dataset that names the workload among its readers, or the workload's own prefix.

Probes of issue 35: a team's spec naming another team's dataset, another workload's prefix, a neighbouring dataset
through a prefix without its '/', or the whole bucket, is refused naming the cdk.json entry or the prefix to write
(compiler/rules/s3_datasets.py). The base spec's workload is `demo`; each refusal has its neighbour just inside the
boundary. Prefixes and names are literals.
"""

from __future__ import annotations

import dataclasses

import pytest

from compiler.inputs.grants import Dataset
from compiler.inputs.model import S3Channel
from compiler.inputs.reader import Findings
from compiler.rules import check_in_environment
from compiler.rules.s3_datasets import data_bucket_reads_are_granted_datasets
from tests.project import ENVIRONMENTS

DEV = dataclasses.replace(ENVIRONMENTS["dev"], datasets={"tokens": Dataset("tokens", frozenset({"demo"})),
                                                         "other": Dataset("other", frozenset({"trainer"}))})


def problems(make, prefix: str, *, model_uri: str | None = None, name: str = "demo", env=DEV) -> list[tuple[str, str]]:
    inputs = (S3Channel("train", prefix),) if prefix else ()
    workload = dataclasses.replace(make(), name=name, inputs=inputs, model_uri=model_uri)
    findings = Findings("demo.yaml")
    data_bucket_reads_are_granted_datasets(workload, env, findings)
    return [(p.field, p.message) for p in findings.problems]


@pytest.mark.parametrize("prefix", ["datasets/tokens/", "datasets/tokens/train/", "datasets/tokens/shard-0",
                                    "datasets/tokens/a/b/c.bin"])
def test_a_reader_reads_its_dataset(make, prefix) -> None:
    assert problems(make, prefix) == []


@pytest.mark.parametrize("prefix", ["datasets/other/", "datasets/other/shard-0"])
def test_another_teams_dataset_is_refused_naming_the_reader_to_add(make, prefix) -> None:
    [(field, message)] = problems(make, prefix)
    assert field == "inputs.train"
    assert message == ("dataset 'other' of environment dev is read by trainer, not demo: add demo to cdk.json, "
                       "dev.datasets.other.readers")


@pytest.mark.parametrize("prefix", ["datasets/tokensx/", "datasets/Tokens/", "datasets/token/x"])
def test_an_undeclared_dataset_is_refused_naming_the_entry_to_add(make, prefix) -> None:
    [(_, message)] = problems(make, prefix)
    name = prefix.split("/")[1]
    assert message == (f"dataset '{name}' is not declared for environment dev (declared: other, tokens): add it to "
                       f"cdk.json, dev.datasets.{name}: {{readers: [demo]}}")


@pytest.mark.parametrize(("prefix", "write"), [
    ("datasets/tokens", "datasets/tokens/"),  # also the prefix of datasets/tokens-private/
    ("datasets/tok", "datasets/tok/"),
    ("datasets/", "datasets/<name>/"),
    ("datasets", "datasets/<name>/"),
    ("datasets//tokens/", "datasets/<name>/"),
])
def test_a_prefix_that_spans_datasets_is_refused(make, prefix, write) -> None:
    [(_, message)] = problems(make, prefix)
    assert message.startswith(f"{prefix!r} is not inside one dataset: S3 prefixes are literal")
    assert f"write the dataset's prefix with its '/', {write} (dev's datasets: other, tokens)" in message


@pytest.mark.parametrize("prefix", ["demo/", "demo/models/", "demo/a/b.bin"])
def test_the_workloads_own_prefix_is_its_own(make, prefix) -> None:
    assert problems(make, prefix) == []


@pytest.mark.parametrize("prefix", ["demo", "dem", "d"])
def test_a_prefix_of_the_own_prefix_is_refused(make, prefix) -> None:
    [(_, message)] = problems(make, prefix)
    assert message == (f"{prefix!r} also takes in other workloads' prefixes (S3 prefixes are literal): write this "
                       "workload's own prefix with its '/', demo/")


@pytest.mark.parametrize("prefix", ["trainer/", "trainer/out/", "demox/", "demo-x/", "models/gpt/", "Demo/", "x"])
def test_another_prefix_is_refused(make, prefix) -> None:
    [(_, message)] = problems(make, prefix)
    assert message.startswith(f"{prefix!r} is neither a dataset nor this workload's own prefix demo/: the data bucket is "
                              "shared by dev's workloads")
    assert message.endswith("declare it in cdk.json, dev.datasets.<name>: {readers: [demo]}, or under demo/")


def test_model_uri_in_the_data_bucket_is_held_to_the_same(make) -> None:
    assert problems(make, "", model_uri="demo/models/gpt/") == []
    assert problems(make, "", model_uri="datasets/tokens/model/") == []
    [(field, message)] = problems(make, "", model_uri="trainer/models/gpt/")
    assert field == "model_uri" and "neither a dataset nor this workload's own prefix demo/" in message


def test_other_buckets_are_not_this_rules(make) -> None:
    # allowed external buckets are the environment's to allow (environment.s3_locations_are_readable)
    assert problems(make, "s3://my-datasets/anything/") == []
    assert problems(make, "", model_uri="s3://my-models/gpt/") == []


def test_a_workload_named_datasets_is_no_reader_of_every_dataset(make) -> None:
    [(_, message)] = problems(make, "datasets/other/", name="datasets")
    assert message.startswith("dataset 'other' of environment dev is read by trainer, not datasets")


def test_the_rule_is_registered(make) -> None:
    workload = dataclasses.replace(make(), inputs=(S3Channel("train", "trainer/"),))
    findings = Findings("demo.yaml")
    check_in_environment(workload, DEV, findings)
    assert any(p.field == "inputs.train" and "neither a dataset" in p.message for p in findings.problems)

