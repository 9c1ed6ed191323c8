"""An S3 channel of the data bucket reads a dataset that names the workload as a reader, or the workload's own prefix.

Every workload of an environment reads the one data bucket, and its execution role is granted exactly the prefixes
its channels (and `model_uri`) name, so the prefix a spec writes is what its jobs can read. The environment decides
who reads what, as on the file system: `datasets/<name>/` only by the workloads its cdk.json entry names
(`<env>.datasets.<name>.readers`, compiler/rules/datasets.py), `<workload name>/` only by that workload (the same
prefix its outputs and checkpoints have in their buckets, and its directory on a file system that imports the whole
bucket). Anything else in the data bucket is nobody's to read.

S3 prefixes are literal: `datasets/gpt-tokens` without the trailing '/' is also the prefix of
`datasets/gpt-tokens-private/`, so a channel must name a dataset (or its own prefix) up to and with its '/'.
Buckets of other accounts (`external_data_buckets`) are the environment's to allow, to every workload
(`environment.s3_locations_are_readable`).
"""

from __future__ import annotations

from compiler.inputs.environments import Environment
from compiler.inputs.grants import DATASETS_DIRECTORY
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.datasets import declared, not_granted
from compiler.rules.registry import environment_rule


def data_bucket_prefixes(w: Workload) -> list[tuple[str, str]]:
    """(spec field, key prefix) of every location in the environment's data bucket the workload's jobs read."""
    return [(where, location.key_prefix) for where, location in w.s3_reads if location.in_data_bucket]


def _dataset_refusal(w: Workload, env: Environment, prefix: str, parts: list[str]) -> str | None:
    """Why a prefix under datasets/ is not the workload's to read; None when it is."""
    if len(parts) < 3 or not parts[1]:
        named = f"{DATASETS_DIRECTORY}/{parts[1]}/" if len(parts) == 2 and parts[1] else f"{DATASETS_DIRECTORY}/<name>/"
        return (f"{prefix!r} is not inside one dataset: S3 prefixes are literal, and this one also takes in the "
                f"objects of every dataset whose name starts the same; write the dataset's prefix with its '/', "
                f"{named} ({env.name}'s datasets: {declared(env)})")
    return not_granted(w, env, parts[1])


@environment_rule
def data_bucket_reads_are_granted_datasets(w: Workload, env: Environment, f: Findings) -> None:
    own = f"{w.name}/"
    for where, prefix in data_bucket_prefixes(w):
        parts = prefix.split("/")
        if parts[0] == DATASETS_DIRECTORY:
            refusal = _dataset_refusal(w, env, prefix, parts)
        elif prefix.startswith(own):
            refusal = None
        elif own.startswith(prefix):
            refusal = (f"{prefix!r} also takes in other workloads' prefixes (S3 prefixes are literal): write this "
                       f"workload's own prefix with its '/', {own}")
        else:
            refusal = (f"{prefix!r} is neither a dataset nor this workload's own prefix {own}: the data bucket is "
                       f"shared by {env.name}'s workloads, and each reads only the datasets that name it and its own "
                       f"prefix; put the data under {DATASETS_DIRECTORY}/<name>/ and declare it in cdk.json, "
                       f"{env.name}.datasets.<name>: {{readers: [{w.name}]}}, or under {own}")
        if refusal is not None:
            f.problem(where, refusal)
