"""cdk.json environments are checked before anything is synthesized."""

from __future__ import annotations

import copy
import json

import pytest

from compiler.environments import CDK_JSON, CONTEXT_KEY, load_environments, parse_environments
from compiler.errors import SpecError

SHIPPED = json.loads(CDK_JSON.read_text())["context"][CONTEXT_KEY]


def _broken(env: str, **changes):
    raw = copy.deepcopy(SHIPPED)
    raw[env].update(changes)
    for key, value in list(raw[env].items()):
        if value is ...:
            del raw[env][key]
    with pytest.raises(SpecError) as info:
        parse_environments(raw)
    return str(info.value)


def test_shipped_environments_pin_one_az_each():
    envs = load_environments()
    assert {"dev", "prod"} <= set(envs)
    for env in envs.values():
        assert env.availability_zone.startswith(env.region)


def test_az_must_belong_to_the_region():
    assert "is not one Availability Zone of us-east-1" in _broken("dev", availability_zone="us-west-2a")


def test_az_must_be_one_zone_not_a_region():
    assert "dev.availability_zone" in _broken("dev", availability_zone="us-east-1")


def test_an_az_must_be_pinned():
    assert "pin exactly one Availability Zone" in _broken("dev", availability_zone=...)


def test_az_id_pattern():
    assert "not an AZ ID like use1-az4" in _broken("dev", availability_zone_id="us-east-1a")


def test_account_is_twelve_digits():
    assert "12-digit" in _broken("dev", account="1234")


def test_production_must_retain():
    assert "must retain its data" in _broken("prod", removal_policy="destroy")


def test_fsx_capacity_steps():
    assert "multiple of 2400" in _broken("prod", fsx={"deployment_type": "PERSISTENT_2", "storage_capacity_gib": 3000,
                                                      "per_unit_storage_throughput": 250})


def test_persistent_2_throughput_values():
    assert "125, 250, 500, 1000" in _broken("prod", fsx={"deployment_type": "PERSISTENT_2",
                                                         "storage_capacity_gib": 2400, "per_unit_storage_throughput": 200})


def test_scratch_cannot_be_backed_up():
    assert "cannot be backed up" in _broken("dev", fsx={"deployment_type": "SCRATCH_2", "storage_capacity_gib": 1200,
                                                        "automatic_backup_retention_days": 7})


def test_unknown_environment_key():
    assert "dev.regoin: unknown key" in _broken("dev", regoin="x")
