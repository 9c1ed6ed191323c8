"""`secrets:` and `secrets_kms_key:`: the names a process reads secrets under, and the exact secrets
(compiler.facts.secret_refs).

Each name must work as the request's variable (`TRAINING_PLATFORM_SECRET_ARN_<NAME>`, within SageMaker's key pattern
and length) and as a process variable nobody else owns; each ARN must be a complete Secrets Manager secret ARN. Where
it may be read (account, region, network isolation) is checked by the rules (compiler/rules/secret_refs.py).
"""

from __future__ import annotations

from compiler.facts import secret_refs
from compiler.inputs.reader import Reader, describe
from compiler.sdk.limits import limits, matches

_HOW_TO_FIND = ("give the secret's complete ARN, with the six characters Secrets Manager appends to its name "
                "(arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf; `aws secretsmanager describe-secret "
                "--secret-id <name> --query ARN` prints it)")


def _name_problem(name: str) -> str | None:
    lim = limits()
    if not matches(lim.environment_key_pattern, name):
        return "is the variable the process reads the value under: letters, digits and _, not starting with a digit"
    if len(secret_refs.variable(name)) > lim.environment_key_max:
        return (f"is too long: the request carries it as {secret_refs.ENV_PREFIX}<name>, at most "
                f"{lim.environment_key_max} characters")
    reserved = next((p for p in secret_refs.RESERVED_PREFIXES if name.upper().startswith(p)), None)
    if reserved is not None:
        return (f"starts with {reserved}, which the training toolkit, SageMaker, the AWS SDKs or the platform set in a "
                "job; pick another name")
    return None


def _arn_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return f"must be a Secrets Manager secret ARN, not {describe(value)}; {_HOW_TO_FIND}"
    if secret_refs.ARN.fullmatch(value):
        return None
    if secret_refs.SECRETS_MANAGER_ARN.match(value):
        return f"is not a complete secret ARN; {_HOW_TO_FIND}"
    return (f"must be a Secrets Manager secret ARN, never the value itself (the spec is committed and compiled into "
            f"the template in clear text); {_HOW_TO_FIND}")


def read_secrets(r: Reader) -> dict[str, str]:
    """name -> ARN, each checked; a refused entry is left out (its problem is reported)."""
    secrets = r.child("secrets")
    if secrets is None:
        return {}
    result = {}
    for name, value in secrets.raw.items():
        problem = _name_problem(str(name)) or _arn_problem(value)
        if problem is not None:
            secrets.problem(str(name), problem)
        else:
            result[str(name)] = str(value)
    if not secrets.raw:
        r.problem("secrets", "is empty; name each secret the process needs (NAME: <secret ARN>), or remove it")
    return result


def read_secrets_kms_key(r: Reader) -> str | None:
    """The customer managed KMS key the secrets are encrypted with (its ARN; checked by keys_belong_to_the_environment)."""
    return r.string("secrets_kms_key", max_length=2048)
