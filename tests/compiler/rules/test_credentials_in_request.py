"""The credentials rule reads every string of the compiled request, and no name switches a value shape off.

Each refusal has its look-alike just on the other side of the boundary. Token shapes are the issuers' published
formats (see compiler/rules/secrets.py); none of the values here is a real credential.
"""

from __future__ import annotations

import pytest

from compiler.errors import SpecError
from tests.compiler.conftest import BASE, build

HF_TOKEN = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SLACK_TOKEN = "xoxb-" + "1234567890-abcdefghij"
HEX_40 = "0123456789abcdef0123456789abcdef01234567"  # 40 hex digits: a W&B API key's shape, or a git commit SHA
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # the IAM User Guide's example secret access key
DIGEST = "sha256:" + "0" * 63 + "1"  # an image digest: sha256 and 64 hex digits


def mpi(options: str) -> dict:
    return {"mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": options}}


def accepted(make, **changes) -> None:
    try:
        make(**changes)
    except SpecError as error:
        pytest.fail(f"{changes} was refused: {error}")


# -------------------------------------------------------------------------------------------- beyond env and hyperparameters


@pytest.mark.parametrize(("options", "kind"), [
    (f"-x HF_TOKEN={HF_TOKEN}", "a Hugging Face token"),
    ("-x NCCL_DEBUG=WARN -x DB_PASSWORD=hunter2", "a secret (by its name)"),  # a NAME=value inside the options
    (f"-x WANDB_KEY={HEX_40}", "a key (32 or more hex digits"),
])
def test_mpi_options_are_scanned(rejects, options, kind) -> None:
    message = rejects("distribution.mpi.custom_mpi_options", f"looks like {kind}", "Secrets Manager",
                      distribution=mpi(options))
    assert options.rsplit("=", 1)[1] not in message


def test_mpi_options_without_credentials_pass(make) -> None:
    accepted(make, distribution=mpi("-x NCCL_DEBUG=WARN -x NCCL_PROTO=simple -x HF_HUB_DISABLE_TOKEN=1"))


def test_a_tag_value_is_scanned(rejects) -> None:
    rejects("tags.owner", "looks like a GitHub token", tags={"owner": GITHUB_TOKEN})


def test_container_arguments_are_scanned(rejects) -> None:
    rejects("container_arguments[1]", "looks like a secret (by its name)",
            container_arguments=["--epochs=3", "--api_key=abc123"])


def test_a_nested_hyperparameter_is_scanned(rejects) -> None:
    rejects("hyperparameters.hub.auth", "looks like a Slack token", hyperparameters={"hub": {"auth": SLACK_TOKEN}})


# -------------------------------------------------------------------------------------------- passwords in URLs


@pytest.mark.parametrize("url", [
    "https://user:pass@example.com/data",
    "redis://:pass@cache.internal:6379/0",  # no user, a password
])
def test_a_password_in_a_url_is_refused(rejects, url) -> None:
    rejects("environment.DATA_URL", "looks like a password in a URL", environment={"DATA_URL": url})


@pytest.mark.parametrize("url", [
    "https://user@example.com/data",  # a user, no password
    "https://user:@example.com/data",  # an empty password
    "https://example.com:8443/v2/@latest",  # a port, and an @ in the path
    "s3://bucket/datasets/x/",
])
def test_urls_without_a_password_pass(make, url) -> None:
    accepted(make, environment={"DATA_URL": url})


# -------------------------------------------------------------------------------------------- key shapes under KEY names


@pytest.mark.parametrize(("name", "value", "kind"), [
    ("WANDB_KEY", HEX_40, "a key (32 or more hex digits"),
    ("COMET_KEY", "0123456789abcdef0123456789abcdef", "a key (32 or more hex digits"),  # 32: the shortest refused
    ("STORAGE_KEY", AWS_SECRET, "an AWS secret access key"),
    # a reference-sounding name does not make a key-shaped value one
    ("WANDB_API_KEY_PATH", HEX_40, "a key (32 or more hex digits"),
    ("HF_TOKEN_SECRET_ID", "a8Kd93jfk2LmQ0zP7xYt", "a secret (by its name)"),  # 20 random characters
])
def test_key_shaped_values_are_refused(rejects, name, value, kind) -> None:
    rejects(f"environment.{name}", f"looks like {kind}", environment={name: value})


@pytest.mark.parametrize(("name", "value"), [
    ("COMET_KEY", "0123456789abcdef0123456789abcde"),  # 31 hex digits
    ("STORAGE_KEY", AWS_SECRET[:39]),  # 39 characters
    ("STORAGE_KEY", "wjalrxutnfemi/k7mdeng/bpxrficyexamplekey"),  # 40, but no upper case: not an AWS secret's mix
    ("CACHE_KEY", DIGEST),  # an image digest is not a key
    ("KMS_KEY_ARN", "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"),
    ("GIT_COMMIT", HEX_40),  # a commit SHA under a name without KEY or a secret word
    ("HF_TOKEN_SECRET_ID", "a8Kd93jfk2LmQ0zP7xY"),  # 19 characters: a name, not a generated secret
    ("MODEL_URI", "s3://bucket/models/" + HEX_40 + "/"),
])
def test_look_alikes_pass(make, name, value) -> None:
    accepted(make, environment={name: value})


def test_a_commit_sha_hyperparameter_passes(make) -> None:
    accepted(make, hyperparameters={"revision": HEX_40, "git_commit": HEX_40})


def test_an_image_pinned_by_digest_passes(make) -> None:
    accepted(make, image_uri=f"111111111111.dkr.ecr.us-east-1.amazonaws.com/trainer@{DIGEST}")


def test_the_description_is_scanned(rejects) -> None:
    """Not in the request, but in the state machine's metadata in the template."""
    rejects("description", "looks like a Hugging Face token", description=f"fine-tune with {HF_TOKEN}")


def test_a_credential_is_reported_beside_the_specs_other_problems(spec_dir) -> None:
    raw = dict(BASE, distribution={"mpi": {"enabled": True, "processes_per_host": "x",
                                           "custom_mpi_options": f"-x HF_TOKEN={HF_TOKEN}"}})
    with pytest.raises(SpecError) as caught:
        build(spec_dir, raw)
    fields = {p.field for p in caught.value.problems}
    assert {"distribution.mpi.processes_per_host", "distribution.mpi.custom_mpi_options"} <= fields
