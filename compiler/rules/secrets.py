"""Credentials do not belong in a spec: it is committed, reviewed, and compiled into templates in clear text.

Jobs get AWS access from their execution role; other secrets belong in AWS Secrets Manager (or SSM Parameter
Store), read at start-up with the role. One rule scans every string of the spec as it is read, another every string
of the CreateTrainingJob request compiled for each environment (`no_credentials_in_the_request`: hyperparameters
decoded from the SDK's JSON, MPI options, container arguments, channels, tags, ...), because a credential anywhere in
it sits in the template, DescribeTrainingJob and the run history alike. Three tests, in order, none of which a
variable's name can switch off:

1. token formats published by their issuers, a private key block, and a password in a URL, anywhere;
2. under a name with a KEY word (`WANDB_KEY`, `api_key_id`): 32 or more hex digits, or 40 characters shaped like an
   AWS secret access key (an image digest `sha256:<64 hex>` is not a key);
3. under a name that says it holds a secret (`DB_PASSWORD`, `HF_TOKEN`, also `NAME=value` inside a string such as
   `-x DB_PASSWORD=...`): any value except one that cannot be the secret (a switch, an ARN, an absolute path, a
   tokenizer's special token), and, under a name that says it holds a reference (`*_ARN`, `*_ID`, `*_NAME`,
   `*_PATH`), any value that does not look random.

A git commit SHA (40 hex) under `git_commit` or `revision` is accepted: no KEY or secret word, and it is public.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from compiler.errors import Problem
from compiler.inputs.model import FsxChannel, S3Channel, Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import compiled_rule, workload_rule
from compiler.rules.views import CompiledView

_VALUE_PATTERNS = (
    # IAM User Guide, "IAM identifiers", unique ID prefixes: AKIA (access key), ASIA (temporary access key), ...
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b")),
    # RFC 7468, textual encodings: "-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----", ...
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    # GitHub blog, "Behind GitHub's new authentication token formats" (2021): ghp_ gho_ ghu_ ghs_ ghr_ + 36;
    # GitHub docs, "Managing your personal access tokens": fine-grained tokens start github_pat_.
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    # Hugging Face docs, "User access tokens": tokens start hf_.
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    # Slack docs, "Tokens" (docs.slack.dev/authentication/tokens): xoxb- xoxp- xoxa- xoxr- xoxe- ..., xapp- app-level.
    ("a Slack token", re.compile(r"\b(?:xox[a-z]|xapp)-[A-Za-z0-9-]{10,}\b")),
    # OpenAI API reference, "Authentication": secret keys start sk- (project keys sk-proj-).
    ("an API secret key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b")),
    # RFC 3986 section 3.2.1: "user:password" in a URI's userinfo is deprecated; s3:// URIs carry none.
    ("a password in a URL", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")),
)
# Names with a KEY word; under them a long hex run or an AWS-secret-shaped value is a key.
_KEY_NAME = re.compile(r"(?:^|[_-])KEY(?:[_-]|$)|[A-Z]KEY(?:[_-]|$)", re.IGNORECASE)
_HEX_KEY = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])")
# IAM User Guide, "Manage access keys": a secret access key is 40 characters (wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY).
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
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
# Twenty letters and digits in a row, both kinds: what generated secrets look like and names of things do not.
_RANDOM = re.compile(r"(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{20,}")
# A tokenizer's special tokens (PAD_TOKEN=<pad>, EOS_TOKEN=</s>, MASK_TOKEN=[MASK]).
_SPECIAL_TOKEN = re.compile(r"^(?:</?[A-Za-z0-9_|.-]{1,32}>|<\|[A-Za-z0-9_]{1,32}\|>|\[[A-Z]{2,10}\])$")
# NAME=value inside a string: mpirun's -x, a command line's --name=value, a URL's query.
_ASSIGNMENT = re.compile(r"(?:^|(?<=[\s,;'\"?&]))-{0,2}([A-Za-z_][A-Za-z0-9_]*)=([^\s,;'\"&]*)")
ADVICE = ("remove it: jobs reach AWS with their execution role, and other secrets belong in AWS Secrets Manager, "
          "read at start-up with the role")
# Spec names of model fields whose spec key differs (the rest are flat: compute.volume_kms_key is volume_kms_key).
_SPEC_NAMES = {"uri": "image_uri", "debugger_hook": "debugger_hook_config", "profiler": "profiler_config",
               "tensorboard_local_path": "tensorboard_output_config", "regex": "metric_definitions"}


def secret_in(name: str, value: str, names: re.Pattern[str] = _SECRET_VARIABLE) -> str | None:
    """What kind of credential a value (under a name, which may be '') looks like, or None."""
    for kind, pattern in _VALUE_PATTERNS:
        if pattern.search(value):
            return kind
    key = _key_shape(_DIGEST.sub("", value)) if _KEY_NAME.search(name) else None
    if key:
        return key
    if names.search(name) and not _harmless(name, value.strip()):
        return "a secret (by its name)"
    for inner, inner_value in _ASSIGNMENT.findall(value):
        if inner != name and inner_value != value:
            found = secret_in(inner, inner_value)
            if found:
                return found
    return None


def _key_shape(value: str) -> str | None:
    """32+ hex digits, or 40 characters of an AWS secret access key's alphabet mixing lower, upper case and digits."""
    if _HEX_KEY.search(value):
        return "a key (32 or more hex digits under a KEY name)"
    if any(re.search("[a-z]", m) and re.search("[A-Z]", m) and re.search("[0-9]", m) for m in _AWS_SECRET.findall(value)):
        return "an AWS secret access key"
    return None


def _harmless(name: str, value: str) -> bool:
    """A value under a secret-sounding name that cannot be the secret itself."""
    if value.lower() in _HARMLESS_VALUES or _REFERENCE_VALUE.match(value) or _SPECIAL_TOKEN.match(value):
        return True
    return bool(_REFERENCE_NAME.search(name)) and not _RANDOM.search(value)


def _walk(value: Any, where: str, name: str) -> Iterator[tuple[str, str, str]]:
    """(where, the nearest mapping key, text) of every string; JSON-encoded hyperparameters are decoded first."""
    if isinstance(value, str):
        decoded = _json(value)
        if decoded is not None and decoded != value:
            yield from _walk(decoded, where, name)
        else:
            yield where, name, value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from _walk(getattr(value, item.name), _field(value, where, item.name), item.name)
    elif isinstance(value, Mapping):
        if set(value) == {"Key", "Value"}:  # a tag: the value's name is its key
            yield from _walk(value["Value"], f"{where}.{value['Key']}", str(value["Key"]))
            return
        for key, item in value.items():
            yield from _walk(item, f"{where}.{key}" if where else str(key), str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _walk(item, f"{where}[{index}]", name)


def _json(text: str) -> Any:
    if text[:1] not in ('"', "{", "["):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _field(parent: Any, where: str, name: str) -> str:
    """The spec's name for a model field (inputs by channel name, nested settings by their flat spec key)."""
    if isinstance(parent, S3Channel | FsxChannel):
        return f"inputs.{parent.name}" if name != "name" else where
    if isinstance(parent, Workload):
        return name
    return _SPEC_NAMES.get(name, name) if where in ("compute", "debugging", "code", "estimator", "image", "run",
                                                     "capacity_retry") else f"{where}.{name}"


@workload_rule
def no_credentials_in_the_spec(w: Workload, f: Findings) -> None:
    """Every string of the spec itself (its description and names reach the template too); the request compiled from
    it is scanned once per environment (`no_credentials_in_the_request`)."""
    _scan(w, None, f)


def request_credentials(w: Workload, request: Mapping[str, Any]) -> list[Problem]:
    """Every string of a compiled request, each finding reported once under the spec field it came from."""
    findings = Findings(w.source)
    _scan(w, request, findings)
    return findings.problems


@compiled_rule
def no_credentials_in_the_request(view: CompiledView, f: Findings) -> None:
    f.problems.extend(request_credentials(view.workload, view.request))


def _scan(w: Workload, request: Mapping[str, Any] | None, f: Findings) -> None:
    """The request's strings (or, without one, the spec's own), named by the spec field each came from."""
    own = list(_walk(w, "", ""))
    fields: dict[str, list[tuple[str, str]]] = {}
    for where, name, text in own:
        fields.setdefault(text, []).append((where, name))
    reported = set()
    for where, name, text in (_walk(dict(request), "", "") if request is not None else own):
        names = _SECRET_HYPERPARAMETER if where.startswith(("HyperParameters", "hyperparameters")) else _SECRET_VARIABLE
        kind = secret_in(name, text, names)
        if not kind:
            continue
        sources = fields.get(text, [(where, name)])
        field = next((s for s, n in sources if n == name), sources[0][0])
        if field not in reported:
            reported.add(field)
            f.problem(field, f"looks like {kind}, which would sit in the template and the job description in clear "
                      f"text; {ADVICE}")
