"""What an environment grants its workloads by name (cdk.json): datasets of the data bucket, secrets, customer keys.

Several teams' workloads share an environment: one account, one data bucket, one file system. A spec names what its
jobs read, and its execution role is granted exactly that; so that one team's spec cannot name another's data,
secret or key, the environment says who may:

- `datasets: {<name>: {readers: [<workload>, ...]}}`: the data bucket's `datasets/<name>/`, read over S3 and, where
  the environment has a file system, at `/datasets/<name>` (on PERSISTENT_2 linked by its own association);
- `secrets: {<secret ARN>: {readers: [<workload>, ...]}}`: the Secrets Manager secrets a spec's `secrets:` may name;
- `kms_keys: {<key ARN>: {users: [<workload>, ...]}}`: the customer managed keys a spec's `output_kms_key`,
  `volume_kms_key` and `secrets_kms_key` may name.

The rules refuse a spec that names what is not granted to it, naming the entry to add (`compiler/rules/fsx_datasets.py`,
`s3_datasets.py`, `grants.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.facts import secret_refs
from compiler.facts.key_arns import KEY_ARN
from compiler.inputs.reader import Reader

# A dataset's name is a directory of the file system and an S3 prefix of the data bucket, both under this one.
DATASETS_DIRECTORY = "datasets"
_DATASET = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"


@dataclass(frozen=True)
class Dataset:
    """A dataset: s3://<data bucket>/datasets/<name>/ (on the file system /datasets/<name>), and who reads it."""

    name: str
    readers: frozenset[str]

    @property
    def file_system_path(self) -> str:
        return f"/{DATASETS_DIRECTORY}/{self.name}"

    @property
    def key_prefix(self) -> str:
        """Its prefix in the data bucket (with the trailing '/', so dataset a's link never takes in ab's objects)."""
        return f"{DATASETS_DIRECTORY}/{self.name}/"


def _names(parent: Reader, key: str, field: str, what: str) -> frozenset[str]:
    """`<key>: {<field>: [<workload>, ...]}`, the list required and not empty."""
    entry = parent.child(key)
    if entry is None:
        if parent.raw[key] is None:
            parent.problem(key, f"must be a mapping with {field}: [<workload name>, ...]")
        return frozenset()
    entry.unknown_keys({field})
    names = entry.strings(field, min_items=1, explain=f"the names of the workloads that may {what}")
    if names is None and not entry.has(field):
        entry.problem(field, f"is required: the workloads that may {what} (e.g. {field}: [gpt-pretrain])")
    return frozenset(names or ())


def read_datasets(reader: Reader) -> dict[str, Dataset]:
    """`datasets: {<name>: {readers: [<workload>, ...]}}`: who may read each of the data bucket's datasets."""
    datasets = reader.child("datasets")
    if datasets is None:
        return {}
    found = {}
    for name in datasets.raw:
        if not re.fullmatch(_DATASET, str(name)):
            datasets.problem(str(name), f"a dataset's name is a prefix of the data bucket ({DATASETS_DIRECTORY}/<name>/) "
                             f"and a directory of the file system (/{DATASETS_DIRECTORY}/<name>): 1-63 lowercase "
                             "letters, digits or hyphens, starting and ending with a letter or digit")
            continue
        found[str(name)] = Dataset(str(name), _names(datasets, str(name), "readers",
                                                     f"read {DATASETS_DIRECTORY}/{name}/"))
    return found


def _in_environment(parent: Reader, arn: str, match: re.Match[str], account: str, region: str) -> bool:
    if (match["account"], match["region"]) == (account, region):
        return True
    parent.problem(arn, f"is in {match['account']}, {match['region']}, but this environment runs in {account}, "
                   f"{region}: its jobs can use only what is there; remove it")
    return False


def read_secret_grants(reader: Reader, account: str, region: str) -> dict[str, frozenset[str]]:
    """`secrets: {<secret ARN>: {readers: [<workload>, ...]}}`: which workloads' `secrets:` may name each secret."""
    return _arn_grants(reader, "secrets", secret_refs.ARN, "is not a complete Secrets Manager secret ARN "
                       "(arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf; `aws secretsmanager "
                       "describe-secret --secret-id <name> --query ARN` prints it)", ("readers", "read the secret"),
                       account, region)


def read_key_grants(reader: Reader, account: str, region: str) -> dict[str, frozenset[str]]:
    """`kms_keys: {<key ARN>: {users: [<workload>, ...]}}`: which workloads' specs may name each customer key."""
    return _arn_grants(reader, "kms_keys", KEY_ARN, "is not a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key id>; "
                       "an alias names whichever key it points at: give the key's own ARN)", ("users", "use the key"),
                       account, region)


def _arn_grants(reader: Reader, setting: str, pattern: re.Pattern[str], not_an_arn: str, names: tuple[str, str],
                account: str, region: str) -> dict[str, frozenset[str]]:
    """`<setting>: {<ARN>: {<names[0]>: [<workload>, ...]}}`: each ARN of this environment's account and region, with
    the workloads it grants (`names[1]` says what they may do, for a message)."""
    entries = reader.child(setting)
    if entries is None:
        return {}
    found = {}
    for arn in map(str, entries.raw):
        match = pattern.fullmatch(arn)
        if match is None:
            entries.problem(arn, not_an_arn)
        elif _in_environment(entries, arn, match, account, region):
            found[arn] = _names(entries, arn, *names)
    return found
