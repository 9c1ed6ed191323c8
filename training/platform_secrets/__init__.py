"""Read the workload's `secrets:` from AWS Secrets Manager into this process's environment, before anything else.

The platform never puts a secret's value in the training job: the job's environment holds, per secret, only its ARN
in `TRAINING_PLATFORM_SECRET_ARN_<NAME>` (docs/security.md, "Secrets"). `resolve()` reads each with the job's
execution role (which may read exactly those secrets, through the network's Secrets Manager endpoint) and sets
`<NAME>`. It prints names, never values, and its errors name the secret's ARN and AWS's error code only.

The project's trainer (train.py) calls it first thing. Another entry point calls it the same way, before importing
libraries that read their tokens at import time, with this package in its code bundle: under its `source_dir`, or
`dependencies: [<path to>/training/platform_secrets]` in its spec, which puts the folder beside the entry point:

    import platform_secrets
    platform_secrets.resolve()

boto3 is imported only when the job has secrets: the SageMaker training toolkit, in every SageMaker framework
image, depends on it. Under torchrun or mpirun each process reads the secrets itself (one call per secret each).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, MutableMapping
from typing import Any

# compiler/facts/secret_refs.py's ENV_PREFIX: this file ships alone in the job and imports nothing of the platform.
ENV_PREFIX = "TRAINING_PLATFORM_SECRET_ARN_"


class SecretsError(RuntimeError):
    """A secret could not be read: its name, ARN and AWS's error code, never a value."""


def references(environ: MutableMapping[str, str]) -> dict[str, str]:
    """name -> ARN of the secrets the job names, in name order."""
    return {key[len(ENV_PREFIX):]: value for key, value in sorted(environ.items())
            if key.startswith(ENV_PREFIX) and len(key) > len(ENV_PREFIX)}


def _client(region: str) -> Any:
    import boto3  # only with secrets: see the module's docstring

    return boto3.client("secretsmanager", region_name=region)


def _value(client: Any, name: str, arn: str) -> str:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        response = client.get_secret_value(SecretId=arn)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "an error")
        raise SecretsError(f"reading secret {name} ({arn}) failed with {code}: the workload's role may read only the "
                           "secrets its spec names, through the environment's Secrets Manager endpoint") from None
    except BotoCoreError as exc:
        raise SecretsError(f"reading secret {name} ({arn}) failed: {type(exc).__name__}") from None
    if "SecretString" in response:
        return str(response["SecretString"])
    try:
        return bytes(response["SecretBinary"]).decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        raise SecretsError(f"secret {name} ({arn}) holds binary data that is not UTF-8 text; an environment "
                           "variable holds text") from None


def resolve(environ: MutableMapping[str, str] | None = None,
            client_for: Callable[[str], Any] = _client) -> list[str]:
    """Set each secret the job names in `environ` (the process's environment by default); return their names.

    The region is the secret's own (its ARN's), which the platform checks is the job's.
    """
    environ = os.environ if environ is None else environ
    wanted = references(environ)
    clients: dict[str, Any] = {}
    for name, arn in wanted.items():
        parts = arn.split(":")
        if len(parts) < 7 or parts[2] != "secretsmanager":
            raise SecretsError(f"{ENV_PREFIX}{name} does not hold a Secrets Manager secret ARN")
        region = parts[3]
        if region not in clients:
            clients[region] = client_for(region)
        environ[name] = _value(clients[region], name, arn)
    if wanted:
        print(f"read {len(wanted)} secret(s) from Secrets Manager: {', '.join(wanted)}", file=sys.stderr, flush=True)
    return list(wanted)
