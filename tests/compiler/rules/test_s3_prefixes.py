"""S3 locations a job reads hold none of IAM's special characters (`*`, `?`, `$`): the role's grant of a prefix is
`<prefix>*`, and IAM would read them as wildcards or a policy variable (compiler/rules/s3_prefixes.py).

Probe of issue 35: `inputs: {train: 'datasets/gpt-tokens/*'}` gave the role `datasets/gpt-tokens/**`, and `'*'` the
whole bucket. The base spec's workload is `demo`; prefixes are literals.
"""

from __future__ import annotations

import dataclasses

import pytest

from compiler.inputs.model import S3Channel
from compiler.inputs.reader import Findings
from compiler.rules.s3_prefixes import literal_part, s3_prefixes_are_literal


def problems(make, location: str, *, model_uri: str | None = None) -> list[tuple[str, str]]:
    inputs = (S3Channel("train", location),) if location else ()
    workload = dataclasses.replace(make(), inputs=inputs, model_uri=model_uri)
    findings = Findings("demo.yaml")
    s3_prefixes_are_literal(workload, findings)
    return [(p.field, p.message) for p in findings.problems]


@pytest.mark.parametrize("location", ["datasets/gpt-tokens/", "demo/a b/c.bin", "datasets/x/part-0001.tar",
                                      "s3://my-datasets/train/", "s3://my-datasets/a+b=c@d/", "datasets/x/{y}/",
                                      "datasets/x/[0-9]/", "datasets/\u00e9t\u00e9/"])
def test_a_literal_prefix_passes(make, location) -> None:
    assert problems(make, location) == []


@pytest.mark.parametrize(("location", "characters"), [
    ("datasets/gpt-tokens/*", "*"),
    ("*", "*"),
    ("datasets/gpt-?okens/", "?"),
    ("demo/${aws:username}/", "$"),
    ("demo/$x/", "$"),
    ("datasets/*/shard-?", "*, ?"),
    ("s3://my-datasets/train/*", "*"),
    ("s3://my-datasets/*", "*"),
])
def test_a_wildcard_or_a_dollar_is_refused_naming_it(make, location, characters) -> None:
    [(field, message)] = problems(make, location)
    assert field == "inputs.train"
    assert message.startswith(f"{location.removeprefix('s3://my-datasets/')!r}: an S3 prefix is literal")
    assert f"write the prefix without {characters}" in message


@pytest.mark.parametrize(("location", "hint"), [
    ("datasets/gpt-tokens/*", ", e.g. datasets/gpt-tokens/ for every object under it"),
    ("datasets/gpt-*/x", ", e.g. datasets/ for every object under it"),
    ("*", ""),
    ("a*", ""),
])
def test_the_fix_is_the_prefix_before_the_glob(make, location, hint) -> None:
    [(_, message)] = problems(make, location)
    assert message.endswith(f"write the prefix without *{hint}")


def test_the_literal_part_stops_at_the_slash_before_the_first_special_character() -> None:
    assert literal_part("a/b/c?d*/e") == "a/b/"
    assert literal_part("a/$b") == "a/"
    assert literal_part("?") == ""


def test_model_uri_is_held_to_the_same(make) -> None:
    [(field, _)] = problems(make, "", model_uri="s3://my-models/gpt/*")
    assert field == "model_uri"
    assert problems(make, "", model_uri="s3://my-models/gpt/model.tar.gz") == []


def test_the_bucket_part_is_not_the_prefix(make) -> None:
    # a bucket name holds none of them (its reader refuses them); only the key after it is a prefix
    assert problems(make, "s3://my-datasets") == []


def test_a_spec_is_refused_as_it_is_read(rejects) -> None:
    rejects("inputs.train", "'datasets/gpt-tokens/*': an S3 prefix is literal", "'*' is a wildcard for any characters",
            inputs={"train": "datasets/gpt-tokens/*"})
    rejects("model_uri", "'$' is the start of a policy variable", model_uri="models/${aws:userid}/")


def test_an_s3_prefix_is_a_key_name_prefix_as_sagemakers_model_says() -> None:
    """What SageMaker reads of an S3Prefix channel, in botocore's model of the API (the refusal's premise)."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    documentation = model.shape_for("S3DataSource").members["S3DataType"].documentation
    assert "SageMaker uses all objects that match the specified key name prefix" in documentation
