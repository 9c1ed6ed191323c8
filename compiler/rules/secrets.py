"""Credentials do not belong in a spec: it is committed, reviewed, and compiled into templates in clear text.

Jobs get AWS access from their execution role; other secrets belong in AWS Secrets Manager (or SSM Parameter
Store), read at start-up with the role. This rule recognises the forms credentials take in practice: AWS access
key ids and secret keys, private keys, and the token formats of GitHub, Hugging Face, Slack, OpenAI and W&B, plus
variables whose name says they hold a secret, unless the value is a reference to one: what the advice asks for
(a Secrets Manager or SSM ARN, a parameter path, a file path, or a secret's name under a variable whose name says it
holds a name, id, ARN or path), or a tokenizer's special token such as <pad> under PAD_TOKEN.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from compiler.model import Workload
from compiler.reader import Findings
from compiler.rules.registry import workload_rule

_VALUE_PATTERNS = (
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b")),
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("a Slack token", re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b")),
    ("an API secret key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b")),
)
# Variable names that say they hold a secret. Hyperparameter names are matched without TOKEN: tokenizers have
# pad_token, eos_token and the like, which are not secrets.
_SECRET_VARIABLE = re.compile(r"(?:^|_)(?:SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)(?:_|$)",
                              re.IGNORECASE)
_SECRET_HYPERPARAMETER = re.compile(r"(?:^|_)(?:secret|password|passwd|api_?key|access_key|private_key)(?:_|$)",
                                    re.IGNORECASE)
_HARMLESS_VALUES = {"", "none", "null", "false", "true", "0", "1"}
# Values that point at a secret instead of holding it: an ARN, an absolute path (an SSM parameter or a file).
_REFERENCE_VALUE = re.compile(r"^(?:arn:aws[a-z-]*:|/)")
# Names that say the value names, identifies or locates a secret (HF_TOKEN_SECRET_ARN, SECRET_ID, secret_name).
_REFERENCE_NAME = re.compile(r"(?:^|_)(?:ARN|NAME|ID|PATH|FILE|PARAMETER|PARAM|SSM)$", re.IGNORECASE)
# A tokenizer's special tokens (PAD_TOKEN=<pad>, EOS_TOKEN=</s>, MASK_TOKEN=[MASK]).
_SPECIAL_TOKEN = re.compile(r"^(?:</?[A-Za-z0-9_|.-]{1,32}>|<\|[A-Za-z0-9_]{1,32}\|>|\[[A-Z]{2,10}\])$")
ADVICE = ("remove it: jobs reach AWS with their execution role, and other secrets belong in AWS Secrets Manager, "
          "read at start-up with the role")


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def secret_in(name: str, value: str, names: re.Pattern[str] = _SECRET_VARIABLE) -> str | None:
    """What kind of credential a value (under a name) looks like, or None."""
    for kind, pattern in _VALUE_PATTERNS:
        if pattern.search(value):
            return kind
    leaf = re.split(r"[.\[]", name)[-1]
    if names.search(leaf) and not _harmless(leaf, value.strip()):
        return "a secret (by its name)"
    return None


def _harmless(leaf: str, value: str) -> bool:
    """A value under a secret-sounding name that cannot be the secret itself."""
    return (value.lower() in _HARMLESS_VALUES or bool(_REFERENCE_VALUE.match(value))
            or bool(_REFERENCE_NAME.search(leaf)) or bool(_SPECIAL_TOKEN.match(value)))


@workload_rule
def no_credentials_in_the_spec(w: Workload, f: Findings) -> None:
    sources = [("environment", w.environment, _SECRET_VARIABLE), ("hyperparameters", w.hyperparameters,
                                                                  _SECRET_HYPERPARAMETER)]
    for section, values, names in sources:
        for where, text in _strings(values, section):
            kind = secret_in(where, text, names)
            if kind:
                f.problem(where, f"looks like {kind}, which would sit in the template and the job description in clear "
                          f"text; {ADVICE}")
