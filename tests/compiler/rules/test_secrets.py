"""Credentials are refused in `environment` and `hyperparameters`; references to them, and look-alikes, are not."""

from __future__ import annotations

import pytest

from compiler.errors import SpecError

# Shaped like real credentials; none is one.
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
HF_TOKEN = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.mark.parametrize(("section", "name", "value", "kind"), [
    ("environment", "AWS_ACCESS_KEY_ID", AWS_KEY_ID, "an AWS access key id"),
    ("environment", "HF_TOKEN", HF_TOKEN, "a Hugging Face token"),
    ("hyperparameters", "hub_token", HF_TOKEN, "a Hugging Face token"),  # a value pattern, whatever the name
    ("environment", "GIT_AUTH", GITHUB_TOKEN, "a GitHub token"),
    ("environment", "WANDB_API_KEY", "0123456789abcdef0123456789abcdef01234567", "a key (32 or more hex"),
    ("environment", "DB_PASSWORD", "hunter2", "a secret (by its name)"),
    ("environment", "AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "an AWS secret access key"),
    ("hyperparameters", "api_key", "abc123", "a secret (by its name)"),
    # a credential is refused even under a name that says it is a reference
    ("environment", "HF_TOKEN_SECRET_ARN", HF_TOKEN, "a Hugging Face token"),
])
def test_credentials_are_refused_naming_the_field(rejects, section, name, value, kind) -> None:
    message = rejects(f"{section}.{name}", f"looks like {kind}", "Secrets Manager", **{section: {name: value}})
    assert value not in message  # the message never repeats the secret


@pytest.mark.parametrize(("section", "name", "value"), [
    # references to a secret: what the advice asks for
    ("environment", "HF_TOKEN_SECRET_ARN", "arn:aws:secretsmanager:us-east-1:111111111111:secret:hf-token-AbCdEf"),
    ("environment", "SECRET_ID", "prod/hf-token"),
    ("environment", "HF_TOKEN_PATH", "/opt/ml/input/data/secrets/hf_token"),
    ("environment", "WANDB_API_KEY_PARAMETER", "/ml/wandb/api-key"),
    ("hyperparameters", "secret_name", "hf-token"),
    ("hyperparameters", "api_key_ssm_parameter", "/ml/wandb/api-key"),
    ("environment", "DB_PASSWORD", "arn:aws:ssm:us-east-1:111111111111:parameter/db/password"),
    # a tokenizer's special tokens under TOKEN names
    ("environment", "PAD_TOKEN", "<pad>"),
    ("environment", "EOS_TOKEN", "</s>"),
    ("environment", "MASK_TOKEN", "[MASK]"),
    ("environment", "BOS_TOKEN", "<|begin_of_text|>"),
    # switches and empty values
    ("environment", "HF_HUB_DISABLE_TOKEN", "1"),
    ("environment", "USE_AUTH_TOKEN", "false"),
])
def test_references_and_look_alikes_are_accepted(make, section, name, value) -> None:
    try:
        workload = make(**{section: {name: value}})
    except SpecError as error:
        pytest.fail(f"{section}.{name}={value!r} was refused: {error}")
    assert getattr(workload, section)[name] == value
