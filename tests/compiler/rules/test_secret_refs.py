"""`secrets:` names exact Secrets Manager secrets of the environment; the request carries their ARNs, never a value.

The base spec (tests/compiler/conftest.py) is a two-node torchrun job named `demo` in dev. Each refusal names its field
and has a neighbour just inside the boundary.
"""

from __future__ import annotations

import dataclasses

import botocore.session
import pytest

from compiler.compilation.request import compile_request
from compiler.errors import SpecError
from compiler.facts import secret_refs
from compiler.inputs.reader import Findings
from compiler.rules import check_in_environment
from compiler.rules.secrets import request_credentials
from compiler.sdk import service_model
from compiler.sdk.limits import limits
from tests.project import ENVIRONMENTS

DEV = ENVIRONMENTS["dev"]
PROD = ENVIRONMENTS["prod"]
ARN = f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:hf-token-AbCdEf"
KEY = f"arn:aws:kms:{DEV.region}:{DEV.account}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
OFF = {"enable_network_isolation": False, "network_isolation_off_reason": "reads HF_TOKEN from Secrets Manager"}


def in_environment(workload, env=DEV) -> Findings:
    """The environment's rules, with cdk.json granting the workload the secrets and key it names (which workload may
    name which is tests/compiler/rules/test_grants.py's)."""
    keys = [k for k in (workload.secrets_kms_key,) if k]
    env = dataclasses.replace(env, secrets={arn: frozenset({workload.name}) for arn in workload.secrets.values()},
                              kms_keys={key: frozenset({workload.name}) for key in keys})
    findings = Findings("demo.yaml")
    check_in_environment(workload, env, findings)
    return findings


# -------------------------------------------------------------------------------------------- the ARN


@pytest.mark.parametrize("arn", [
    ARN,
    f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:team/hf_token+v2=x.y@z-0a1B2c",
    f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:a-AbCdEf",
    f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:{'n' * 512}-AbCdEf",
])
def test_a_complete_secret_arn_is_accepted(make, arn) -> None:
    workload = make(secrets={"HF_TOKEN": arn}, **OFF)
    assert workload.secrets == {"HF_TOKEN": arn}
    assert not in_environment(workload).problems


@pytest.mark.parametrize("arn", [
    f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:hf-token",  # partial: no random suffix
    f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:hf-token-AbCdE",  # five characters
    f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:hf-token-*",  # a wildcard
    f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:{'n' * 513}-AbCdEf",  # name over 512
    f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:hf token-AbCdEf",  # a space
])
def test_anything_but_a_complete_secret_arn_is_refused(rejects, arn) -> None:
    rejects("secrets.HF_TOKEN", "not a complete secret ARN", "six characters", "describe-secret",
            secrets={"HF_TOKEN": arn}, **OFF)


@pytest.mark.parametrize("value", ["hf_" + "Q" * 34, "arn:aws:ssm:us-east-1:111111111111:parameter/hf", "hf-token"])
def test_a_value_or_another_kind_of_arn_is_refused_as_not_a_secret_arn(rejects, value) -> None:
    rejects("secrets.HF_TOKEN", "never the value itself", "complete ARN", secrets={"HF_TOKEN": value}, **OFF)


def test_a_non_text_arn_is_refused(rejects) -> None:
    rejects("secrets.HF_TOKEN", "not 12 (a number)", secrets={"HF_TOKEN": 12}, **OFF)


def test_our_longest_arn_fits_secrets_managers_secret_id() -> None:
    """GetSecretValue's SecretId (botocore's model) takes the longest ARN the pattern accepts."""
    model = botocore.session.get_session().get_service_model("secretsmanager")
    secret_id = model.operation_model("GetSecretValue").input_shape.members["SecretId"]
    longest = f"arn:aws-us-gov:secretsmanager:{DEV.region}:{DEV.account}:secret:{'n' * 512}-AbCdEf"
    assert secret_refs.ARN.fullmatch(longest)
    assert len(longest) <= secret_id.metadata["max"]


# -------------------------------------------------------------------------------------------- the name


@pytest.mark.parametrize("name", ["HF_TOKEN", "wandb_api_key", "_X", "A1"])
def test_a_variable_name_is_accepted(make, name) -> None:
    assert name in make(secrets={name: ARN}, **OFF).secrets


@pytest.mark.parametrize("name", ["1TOKEN", "HF-TOKEN", "HF TOKEN", "HF.TOKEN"])
def test_a_name_that_is_not_a_variable_name_is_refused(rejects, name) -> None:
    rejects(f"secrets.{name}", "letters, digits and _", secrets={name: ARN}, **OFF)


def test_a_name_too_long_for_the_requests_variable_is_refused(make, rejects) -> None:
    room = limits().environment_key_max - len(secret_refs.ENV_PREFIX)
    make(secrets={"N" * room: ARN}, **OFF)
    rejects(f"secrets.{'N' * (room + 1)}", "too long", secret_refs.ENV_PREFIX, secrets={"N" * (room + 1): ARN}, **OFF)


@pytest.mark.parametrize("name", ["SM_HOSTS", "SAGEMAKER_PROGRAM", "AWS_REGION", "aws_profile", "TRAINING_PLATFORM_X"])
def test_names_others_own_in_the_container_are_refused(rejects, name) -> None:
    rejects(f"secrets.{name}", "pick another name", secrets={name: ARN}, **OFF)


def test_a_name_also_in_environment_is_refused(rejects, make) -> None:
    rejects("secrets.HF_TOKEN", "remove it from environment", secrets={"HF_TOKEN": ARN},
            environment={"HF_TOKEN": "x"}, **OFF)
    make(secrets={"HF_TOKEN": ARN}, environment={"HF_HOME": "/tmp/hf"}, **OFF)


def test_environment_may_not_write_the_arn_variables_itself(rejects) -> None:
    rejects(f"environment.{secret_refs.variable('HF_TOKEN')}", "secrets:",
            environment={secret_refs.variable("HF_TOKEN"): ARN})


def test_an_empty_mapping_is_refused(rejects) -> None:
    rejects("secrets", "is empty", secrets={}, **OFF)


# -------------------------------------------------------------------------------------------- where it may be read


def test_a_secret_of_another_account_or_region_is_refused_in_the_environment(make) -> None:
    for arn in (ARN.replace(DEV.account, "999999999999"), ARN.replace(DEV.region, "eu-west-1")):
        problems = in_environment(make(secrets={"HF_TOKEN": arn}, **OFF)).problems
        assert [p.field for p in problems] == ["secrets.HF_TOKEN"]
        assert f"environments: {{{DEV.name}: {{secrets:" in problems[0].message


def test_prod_needs_a_secret_of_its_own_account(make) -> None:
    assert PROD.account != DEV.account or PROD.region != DEV.region
    problems = in_environment(make(secrets={"HF_TOKEN": ARN}, **OFF), PROD).problems
    assert [p.field for p in problems] == ["secrets.HF_TOKEN"]


def test_secrets_with_network_isolation_are_refused_naming_the_fix(rejects, make) -> None:
    rejects("secrets", "enable_network_isolation: false", "network_isolation_off_reason",
            secrets={"HF_TOKEN": ARN}, enable_network_isolation=True)


def test_the_kms_key_must_be_the_environments_and_go_with_secrets(make, rejects) -> None:
    assert not in_environment(make(secrets={"HF_TOKEN": ARN}, secrets_kms_key=KEY, **OFF)).problems
    other = in_environment(make(secrets={"HF_TOKEN": ARN}, secrets_kms_key=KEY.replace(DEV.account, "999999999999"),
                                **OFF)).problems
    assert [p.field for p in other] == ["secrets_kms_key"]
    rejects("secrets_kms_key", "only matters with secrets", secrets_kms_key=KEY)


# -------------------------------------------------------------------------------------------- the request


def test_the_request_carries_the_arns_under_their_own_variables_and_no_value(make) -> None:
    other = ARN.replace("hf-token", "db")
    workload = make(secrets={"HF_TOKEN": ARN, "DB_PASSWORD": other}, environment={"HF_HOME": "/tmp/hf"}, **OFF)
    request = compile_request(workload, DEV, training_image="img")
    assert request["Environment"] == {"HF_HOME": "/tmp/hf", "TRAINING_PLATFORM_SECRET_ARN_HF_TOKEN": ARN,
                                      "TRAINING_PLATFORM_SECRET_ARN_DB_PASSWORD": other}
    assert "HF_TOKEN" not in request["Environment"]
    assert not request_credentials(workload, request)  # an ARN under a SECRET name is not a credential


def test_a_request_with_secrets_passes_sagemakers_model(make) -> None:
    workload = make(secrets={f"S{i}": ARN.replace("hf-token", f"s{i}") for i in range(20)}, **OFF)
    request = compile_request(workload, DEV, training_image=f"{DEV.account}.dkr.ecr.{DEV.region}.amazonaws.com/x:1")
    filled = {**request, "RoleArn": f"arn:aws:iam::{DEV.account}:role/r",
              "VpcConfig": {"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0123456789abcdef0"]}}
    assert not [p for p in service_model.validate_request(filled) if "Environment" in p]


def test_without_secrets_the_request_has_no_arn_variable(make) -> None:
    request = compile_request(make(), DEV, training_image="img")
    assert not any(k.startswith(secret_refs.ENV_PREFIX) for k in request.get("Environment", {}))


def test_secrets_may_differ_per_environment() -> None:
    from compiler.inputs.spec.overridable import MERGED, OVERRIDABLE

    assert {"secrets", "secrets_kms_key"} <= OVERRIDABLE and "secrets" in MERGED


def test_a_spec_error_is_not_a_traceback(make) -> None:
    with pytest.raises(SpecError):
        make(secrets=["HF_TOKEN"], **OFF)
