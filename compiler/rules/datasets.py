"""Whether the environment grants a workload a dataset: what the FSx and the S3 channel rules both ask.

A dataset (cdk.json, `<env>.datasets.<name>`, compiler/inputs/grants.py) is the data bucket's `datasets/<name>/`, on
the file system `/datasets/<name>`; only the workloads its entry names read it, over either. Not a rule: the two
rules that use it (`fsx_datasets`, `s3_datasets`) say where a channel names the dataset.
"""

from __future__ import annotations

from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload


def declared(env: Environment) -> str:
    """The environment's datasets, for a message."""
    return ", ".join(sorted(env.datasets)) or "none"


def not_granted(w: Workload, env: Environment, name: str) -> str | None:
    """Why `w` may not read dataset `name` in `env`, naming the cdk.json entry to add; None when it may."""
    dataset = env.datasets.get(name)
    if dataset is None:
        return (f"dataset '{name}' is not declared for environment {env.name} (declared: {declared(env)}): add it "
                f"to cdk.json, {env.name}.datasets.{name}: {{readers: [{w.name}]}}")
    if w.name not in dataset.readers:
        return (f"dataset '{name}' of environment {env.name} is read by {', '.join(sorted(dataset.readers))}, not "
                f"{w.name}: add {w.name} to cdk.json, {env.name}.datasets.{name}.readers")
    return None
