"""A spec names only the secrets and customer keys cdk.json grants its workload (compiler/rules/grants.py), and a
grant that names no workload is pointed out.

Probe of issue 35: any workload could name another team's secret or key and be granted it. The base spec's workload
is `demo`; ARNs are literals.
"""

from __future__ import annotations

import dataclasses

import pytest

from compiler.inputs.grants import Dataset
from compiler.inputs.reader import Findings
from compiler.rules import check_in_environment
from compiler.rules.grants import grants_name_workloads, kms_keys_are_granted_to_the_workload, secrets_are_granted_to_the_workload
from compiler.rules.views import ProjectView
from tests.project import ENVIRONMENTS

DEV = ENVIRONMENTS["dev"]
SECRET = "arn:aws:secretsmanager:us-east-1:111111111111:secret:hf-token-AbCdEf"
OTHER_SECRET = "arn:aws:secretsmanager:us-east-1:111111111111:secret:db-AbCdEf"
KEY = "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"
OFF = {"enable_network_isolation": False, "network_isolation_off_reason": "reads HF_TOKEN from Secrets Manager"}


def granting(secrets=None, keys=None):
    return dataclasses.replace(DEV, secrets={a: frozenset(n) for a, n in (secrets or {}).items()},
                               kms_keys={a: frozenset(n) for a, n in (keys or {}).items()})


def secret_problems(workload, env) -> list[tuple[str, str]]:
    findings = Findings("demo.yaml")
    secrets_are_granted_to_the_workload(workload, env, findings)
    return [(p.field, p.message) for p in findings.problems]


def key_problems(workload, env) -> list[tuple[str, str]]:
    findings = Findings("demo.yaml")
    kms_keys_are_granted_to_the_workload(workload, env, findings)
    return [(p.field, p.message) for p in findings.problems]


# -------------------------------------------------------------------------------------------- secrets


def test_a_secret_granted_to_the_workload_passes(make) -> None:
    workload = make(secrets={"HF_TOKEN": SECRET}, **OFF)
    assert secret_problems(workload, granting({SECRET: ["demo"]})) == []
    assert secret_problems(workload, granting({SECRET: ["trainer", "demo"]})) == []


def test_a_secret_granted_to_another_workload_is_refused_naming_the_reader_to_add(make) -> None:
    workload = make(secrets={"HF_TOKEN": SECRET}, **OFF)
    assert secret_problems(workload, granting({SECRET: ["trainer"]})) == [(
        "secrets.HF_TOKEN", f"{SECRET} is granted to trainer in environment dev, not demo: add demo to cdk.json, "
                            f'dev.secrets."{SECRET}".readers')]


def test_a_secret_granted_to_nobody_is_refused_naming_the_entry_to_add(make) -> None:
    workload = make(secrets={"HF_TOKEN": SECRET, "DB": OTHER_SECRET}, **OFF)
    assert secret_problems(workload, granting({OTHER_SECRET: ["demo"]})) == [(
        "secrets.HF_TOKEN", f"{SECRET} is granted to no workload of environment dev: add it to cdk.json, "
                            f'dev.secrets: {{"{SECRET}": {{readers: [demo]}}}}')]


def test_a_secret_of_another_account_is_left_to_its_own_rule(make) -> None:
    workload = make(secrets={"HF_TOKEN": SECRET.replace("111111111111", "222222222222")}, **OFF)
    assert secret_problems(workload, granting()) == []  # secret_refs.secrets_belong_to_the_environment refuses it


# -------------------------------------------------------------------------------------------- keys


@pytest.mark.parametrize("field", ["output_kms_key", "volume_kms_key"])
def test_a_key_granted_to_another_workload_is_refused(make, field) -> None:
    workload = make(**{field: KEY}, instance_type="ml.p3.16xlarge") if field == "volume_kms_key" else make(
        **{field: KEY})
    assert key_problems(workload, granting(keys={KEY: ["demo"]})) == []
    assert key_problems(workload, granting(keys={KEY: ["trainer"]})) == [(
        field, f"{KEY} is granted to trainer in environment dev, not demo: add demo to cdk.json, "
               f'dev.kms_keys."{KEY}".users')]
    assert key_problems(workload, granting()) == [(
        field, f"{KEY} is granted to no workload of environment dev: add it to cdk.json, "
               f'dev.kms_keys: {{"{KEY}": {{users: [demo]}}}}')]


def test_the_secrets_key_is_bound_too(make) -> None:
    workload = make(secrets={"HF_TOKEN": SECRET}, secrets_kms_key=KEY, **OFF)
    assert [f for f, _ in key_problems(workload, granting({SECRET: ["demo"]}))] == ["secrets_kms_key"]
    assert key_problems(workload, granting({SECRET: ["demo"]}, {KEY: ["demo"]})) == []


def test_a_key_of_another_region_is_left_to_its_own_rule(make) -> None:
    assert key_problems(make(output_kms_key=KEY.replace("us-east-1", "us-west-2")), granting()) == []


def test_the_rules_are_registered(make) -> None:
    findings = Findings("demo.yaml")
    check_in_environment(make(secrets={"HF_TOKEN": SECRET}, output_kms_key=KEY, **OFF), granting(), findings)
    assert {"secrets.HF_TOKEN", "output_kms_key"} <= {p.field for p in findings.problems}


# -------------------------------------------------------------------------------------------- names in grants


def test_a_grant_that_names_no_workload_is_pointed_out() -> None:
    env = dataclasses.replace(DEV, datasets={"tokens": Dataset("tokens", frozenset({"demo", "trainr"}))},
                              secrets={SECRET: frozenset({"demo"})}, kms_keys={KEY: frozenset({"gone"})})
    view = ProjectView(environments={"dev": env}, base={}, by_environment={}, spec_names=frozenset({"demo", "trainer"}))
    findings = Findings("")
    grants_name_workloads(view, findings)
    assert findings.problems == []
    assert [(w.source, w.field, w.message) for w in findings.warnings] == [
        ("cdk.json", "dev.datasets.tokens.readers", "names 'trainr', which no workload spec is: it grants nothing; "
                                                     "did you mean 'trainer'? workloads: demo, trainer"),
        ("cdk.json", f"dev.kms_keys.{KEY}.users", "names 'gone', which no workload spec is: it grants nothing; "
                                                  "workloads: demo, trainer"),
    ]


def test_the_shipped_grants_name_shipped_workloads() -> None:
    from tests.project import loaded

    assert not [w for w in loaded().warnings if "grants nothing" in w]
