"""`secrets:`: which AWS Secrets Manager secrets a workload's process gets, and how they reach it.

A value never travels in the CreateTrainingJob request, which sits in the template, DescribeTrainingJob and the run
history in clear text. The request carries, per secret, one environment variable `TRAINING_PLATFORM_SECRET_ARN_<NAME>`
holding the secret's ARN (an ARN names a secret, it does not open it); at start the process reads each with the job's
execution role, which may read exactly those ARNs, and sets `<NAME>` in its own environment
(`training/platform_secrets/`). One variable per secret, not one JSON map: SageMaker caps each environment value at
512 characters, a handful of ARNs.
"""

from __future__ import annotations

import re

# The variable that carries one secret's ARN: the prefix plus the name the process reads the value under. The
# trainer's resolver (training/platform_secrets/, which ships alone and cannot import this) spells it out too; a
# test holds the two equal.
ENV_PREFIX = "TRAINING_PLATFORM_SECRET_ARN_"
# Secrets Manager User Guide, "Secret ARN" (and CreateSecret's Name): a secret's ARN is
# arn:<partition>:secretsmanager:<region>:<account>:secret:<name>-<6 random characters>; a name is 1-512 ASCII
# letters, digits and /_+=.@-. Only the complete ARN names one secret: IAM matches a partial ARN only with a
# wildcard, which could cover a later secret whose name starts the same.
ARN = re.compile(r"arn:(?P<partition>aws(?:-[a-z]+)*):secretsmanager:(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+):"
                 r"(?P<account>\d{12}):secret:(?P<name>[A-Za-z0-9/_+=.@-]{1,512})-(?P<suffix>[A-Za-z0-9]{6})")
SECRETS_MANAGER_ARN = re.compile(r"arn:[^:]*:secretsmanager:")
# Names others own in a training container: the SageMaker training toolkit's (SM_*), SageMaker's and the SDK's
# (SAGEMAKER_*), the AWS SDKs' (AWS_*: region, credentials endpoint) and the platform's own.
RESERVED_PREFIXES = ("SM_", "SAGEMAKER_", "AWS_", "TRAINING_PLATFORM_")


def variable(name: str) -> str:
    """The request's variable that carries the ARN of the secret the process reads as `name`."""
    return ENV_PREFIX + name


def request_variables(secrets: dict[str, str]) -> dict[str, str]:
    """The request's variables for a workload's `secrets:` (name -> ARN), in the spec's order."""
    return {variable(name): arn for name, arn in secrets.items()}


def kms_via_service(region: str) -> str:
    """`kms:ViaService` of Secrets Manager in a region (AWS KMS Developer Guide, "kms:ViaService")."""
    return f"secretsmanager.{region}.amazonaws.com"
