"""An environment's single fields, each read by its own helper: the edges of each, and the order of their problems."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.errors import SpecError
from compiler.inputs.environments import Environment, parse_environments

MINIMAL = {"account": "111111111111", "region": "us-east-1", "availability_zone": "us-east-1a"}


def parsed(**settings: Any) -> Environment:
    return parse_environments({"dev": {**MINIMAL, **settings}})["dev"]


def problems(**settings: Any) -> list[tuple[str, str]]:
    """(field, message) of each problem of one environment, in the order reported."""
    raw = {key: value for key, value in {**MINIMAL, **settings}.items() if value is not ...}
    with pytest.raises(SpecError) as info:
        parse_environments({"dev": raw})
    return [(p.field, p.message) for p in info.value.problems]


def test_log_retention_defaults_by_production() -> None:
    # README, "Environments": log_retention_days (default 30, 365 in production)
    assert parsed().log_retention_days == 30
    assert parsed(production=True).log_retention_days == 365
    assert parsed(production=True, log_retention_days=1).log_retention_days == 1


def test_notification_emails_are_kept_or_refused_whole() -> None:
    assert parsed(notification_emails=["a@example.com", "b@example.com"]).notification_emails == (
        "a@example.com", "b@example.com")
    assert problems(notification_emails=["a@example.com", "ops"]) == [
        ("dev.notification_emails", "must be a list of e-mail addresses")]


def test_every_bad_bucket_is_named() -> None:
    assert parsed(external_data_buckets=["datasets.example", "raw-data"]).external_data_buckets == (
        "datasets.example", "raw-data")
    assert [message for _, message in problems(external_data_buckets=["s3://a", "ok-bucket", "B"])] == [
        "'s3://a' is not an S3 bucket name (give the name, not s3://...)",
        "'B' is not an S3 bucket name (give the name, not s3://...)"]


@pytest.mark.parametrize("zone", ["us-east-1", "us-east-1ab", "us-east-11", "us-west-2a"])
def test_a_zone_is_the_region_and_one_letter(zone: str) -> None:
    assert problems(availability_zone=zone) == [
        ("dev.availability_zone", f"'{zone}' is not one Availability Zone of us-east-1 (expected us-east-1 followed by "
         "one letter)")]


def test_an_az_id_alone_pins_the_zone() -> None:
    env = parsed(availability_zone=None, availability_zone_id="use1-az4")
    assert (env.availability_zone, env.availability_zone_id) == (None, "use1-az4")


def test_a_block_lists_its_problems_in_field_order() -> None:
    fields = [field for field, _ in problems(
        log_retention_days=42, external_data_buckets=["s3://a"], notification_emails=["ops"], removal_policy="destroy",
        production=True, availability_zone="us-east-1", account="1")]
    assert fields == ["dev.account", "dev.availability_zone", "dev.removal_policy", "dev.notification_emails",
                      "dev.external_data_buckets", "dev.log_retention_days"]
