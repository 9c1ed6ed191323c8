"""The DNS firewall's names and settings: literals from the AWS service endpoint pages, not computed."""

from __future__ import annotations

import pytest

from compiler.errors import SpecError
from compiler.facts.dns_firewall import allowed_domains
from compiler.inputs.dns_firewall import DnsFirewallSettings
from compiler.inputs.environments import parse_environments


def settings_for(name: str, production: bool, firewall: object) -> DnsFirewallSettings:
    """An environment's firewall as cdk.json's two blocks give it (read with the environments, as validate does)."""
    environments = {env: {"account": account, "region": "us-east-1", "availability_zone": "us-east-1a",
                          "production": production}
                    for env, account in (("x", "111111111111"), ("dev", "222222222222"), ("prod", "333333333333"))}
    return parse_environments(environments, firewall=firewall)[name].dns_firewall


def flat(region: str) -> set[str]:
    return {d for names in allowed_domains(region).values() for d in names}


def test_the_names_jobs_need_are_the_regions_service_endpoints() -> None:
    # AWS General Reference, service endpoints for eu-west-1 (S3, ECR, CloudWatch Logs and metrics, STS, SageMaker,
    # Secrets Manager).
    assert {"s3.eu-west-1.amazonaws.com", "*.s3.eu-west-1.amazonaws.com", "api.ecr.eu-west-1.amazonaws.com",
            "*.dkr.ecr.eu-west-1.amazonaws.com", "logs.eu-west-1.amazonaws.com", "monitoring.eu-west-1.amazonaws.com",
            "sts.eu-west-1.amazonaws.com", "api.sagemaker.eu-west-1.amazonaws.com",
            "secretsmanager.eu-west-1.amazonaws.com", "*.fsx.eu-west-1.amazonaws.com"} <= flat("eu-west-1")


def test_no_name_of_another_region_and_no_open_wildcard() -> None:
    names = flat("us-east-1")
    assert not any("eu-west-1" in n for n in names)
    assert "*" not in names and "*.amazonaws.com" not in names and "*.com" not in names
    assert all(n.endswith((".amazonaws.com", ".internal", ".in-addr.arpa")) for n in names)


def test_reverse_lookups_only_of_private_ranges() -> None:
    reverse = set(allowed_domains("us-east-1")["Reverse lookups of private addresses"])
    assert {"*.10.in-addr.arpa", "*.168.192.in-addr.arpa", "*.16.172.in-addr.arpa", "*.31.172.in-addr.arpa"} <= reverse
    assert "*.15.172.in-addr.arpa" not in reverse and "*.32.172.in-addr.arpa" not in reverse
    assert "*.in-addr.arpa" not in reverse


@pytest.mark.parametrize(("production", "mode", "logging"), [(True, "block", False), (False, "alert", True)])
def test_default_blocks_in_production_and_alerts_with_query_logs_elsewhere(production: bool, mode: str,
                                                                           logging: bool) -> None:
    settings = settings_for("x", production, None)
    assert (settings.mode, settings.query_logging, settings.allow) == (mode, logging, ())
    assert settings_for("x", production, {"x": {"mode": "alert", "query_logging": False}}).query_logging is False


def test_an_environment_may_turn_it_off_log_queries_and_allow_more() -> None:
    context = {"dev": {"mode": "off"}, "prod": {"query_logging": True, "allow": ["huggingface.co", "*.hf.co"]}}
    assert settings_for("dev", False, context).mode == "off"
    prod = settings_for("prod", True, context)
    assert (prod.mode, prod.query_logging, prod.allow) == ("block", True, ("huggingface.co", "*.hf.co"))


@pytest.mark.parametrize("value", [
    {"mode": "deny"}, {"query_logging": "yes"}, {"allow": ["*"]}, {"allow": ["bad name.com"]}, {"allow": "x.com"},
    {"allow": ["a.*.com"]}, {"modes": "block"}, "block",
])
def test_a_setting_the_firewall_cannot_take_is_refused_with_the_key(value: object) -> None:
    with pytest.raises(SpecError, match=r"training-platform:dns-firewall\.dev"):
        settings_for("dev", False, {"dev": value})


def test_a_block_for_an_environment_cdk_json_does_not_declare_is_refused() -> None:
    # It would be ignored: a typo in the name would leave the environment on its default without a word.
    with pytest.raises(SpecError, match=r"training-platform:dns-firewall\.deev: no environment 'deev'"):
        settings_for("dev", False, {"deev": {"mode": "off"}})


@pytest.mark.parametrize("firewall", ["block", ["dev"], 3])
def test_a_block_that_is_not_a_mapping_is_refused_not_a_traceback(firewall: object) -> None:
    with pytest.raises(SpecError) as info:
        settings_for("dev", False, firewall)
    assert "training-platform:dns-firewall: must map environment names to {mode, query_logging, allow}" in str(info.value)
