"""An FSx channel reads a dataset that names the workload as a reader, or the workload's own directory.

FSx for Lustre checks no IAM per path, and every workload of an environment mounts the one file system; so what a
job may read there is what its channels' `directory_path` names, and the environment decides who reads what:
`datasets` in cdk.json declares each dataset, at `/datasets/<name>` on the file system (linked to the data bucket's
`datasets/<name>/`, platform_constructs/lustre.py), with the workloads that may read it (compiler/rules/datasets.py).
Anything else on the file system is some workload's own directory (`/<workload name>/`, written by its `rw`
channels) or not linked to the bucket at all.

The root and `rw` outside the workload's own directory are refused by `paths.fsx_channels_stay_in_bounds`; this
rule bounds what a channel reads.
"""

from __future__ import annotations

from compiler.inputs.environments import Environment
from compiler.inputs.grants import DATASETS_DIRECTORY
from compiler.inputs.model import FsxChannel, Workload
from compiler.inputs.reader import Findings
from compiler.rules.datasets import declared, not_granted
from compiler.rules.paths import normalized, segments
from compiler.rules.registry import environment_rule


@environment_rule
def fsx_reads_are_granted_datasets(w: Workload, env: Environment, f: Findings) -> None:
    if env.fsx is None:
        return  # environment.fsx_channels_have_a_file_system says so
    for channel in w.inputs:
        if not isinstance(channel, FsxChannel):
            continue
        parts = segments(channel.directory_path)
        if not parts:
            continue  # a '..' or the root: paths.fsx_channels_stay_in_bounds refuses it
        where = f"inputs.{channel.name}.directory_path"
        path = normalized(channel.directory_path)
        if parts[0] == DATASETS_DIRECTORY:
            if len(parts) == 1:
                f.problem(where, f"{path} holds every dataset of environment {env.name}: mount the one the channel "
                          f"needs, /{DATASETS_DIRECTORY}/<name> ({declared(env)})")
                continue
            refusal = not_granted(w, env, parts[1])
            if refusal is not None:
                f.problem(where, refusal)
        elif parts[0] != w.name:
            f.problem(where, f"{path} is neither a dataset nor this workload's own directory /{w.name}/ (a directory "
                      f"/<name>/ is workload <name>'s own, which only it reads): read a dataset, /{DATASETS_DIRECTORY}/"
                      f"<name> with {w.name} among its readers in cdk.json ({env.name}.datasets), or "
                      f"/{w.name}")
