"""Paths a job mounts or syncs stay inside what is the workload's own.

FSx for Lustre enforces no IAM per path: a channel's `directory_path` is what a job mounts, with the access mode
it asks for, and the file system is shared by every workload of the environment. So a channel may not mount the
file system's root, and may write (`rw`) only on the workload's own directory, `/<workload name>` in the file
system (`/<MountName>/<workload name>` in the request), never under `/datasets/`, where the environment's datasets
are linked to the data bucket. What a channel may read is the environment's to say (`fsx_datasets`).

SageMaker copies the checkpoint prefix into `checkpoint_local_path` before the algorithm starts and uploads
everything under it while the job runs (the SDK's `checkpoint_local_path` documentation). The API allows any path
(CheckpointConfig.LocalPath, pattern `.*`); the platform keeps it under `/opt/ml/`, the container's SageMaker
directory, and out of `/opt/ml/input` and `/opt/ml/code`, so what the checkpoint prefix holds cannot land in `/etc`,
on the job's inputs or on the training code.

Paths are compared by their segments, after dropping empty and `.` segments; a `..` segment is refused outright
(what it points at depends on symbolic links the compiler cannot see). For the same reason a channel mounts its
workload's own directory itself, never a path below it: every entry there was written by the workload's own jobs,
and a job may leave a symbolic link where a later run expects a directory (to another workload's directory, say).
No AWS page says whether SageMaker's mount of a `DirectoryPath` follows such a link, so no path the platform mounts
passes through one (`fsx_channels_pass_no_job_written_entry`). Below `/datasets/<name>` every entry comes from the
data bucket (FSx imports an object with symlink metadata as a link: FSx for Lustre User Guide, "POSIX metadata
support for data repositories"), which no workload's role may write.
"""

from __future__ import annotations

from compiler.inputs.grants import DATASETS_DIRECTORY
from compiler.inputs.model import FsxChannel, Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import workload_rule

CHECKPOINT_ROOT = ("opt", "ml")
DEFAULT_CHECKPOINT_PATH = "/opt/ml/checkpoints"
# What SageMaker and its training toolkit write before the script starts: the channels and the job's configuration
# under /opt/ml/input, the training code under /opt/ml/code (where the SDK's local mode mounts it too). A checkpoint
# download into them would replace the job's inputs or its code.
RESERVED = {"input": "the job's input data and configuration", "code": "the training code"}


def segments(path: str) -> list[str] | None:
    """The path's segments without empty and '.' ones; None when one is '..'."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return None if ".." in parts else parts


def normalized(path: str) -> str:
    parts = segments(path)
    return "/" + "/".join(parts or [])


@workload_rule
def fsx_channels_stay_in_bounds(w: Workload, f: Findings) -> None:
    for channel in w.inputs:
        if not isinstance(channel, FsxChannel):
            continue
        where = f"inputs.{channel.name}.directory_path"
        parts = segments(channel.directory_path)
        own = f"/{w.name}"
        if parts is None:
            f.problem(where, "has a '..' segment; write the directory it means without one (e.g. /datasets/x)")
        elif not parts:
            f.problem(where, "is the root of the file system, which every workload shares: mount the directory the "
                      f"channel needs (e.g. /datasets/x read only, or {own} to write)")
        elif channel.file_system_access_mode == "rw" and parts[0] == DATASETS_DIRECTORY:
            f.problem(f"inputs.{channel.name}.file_system_access_mode", f"rw under /{DATASETS_DIRECTORY}/ is refused: "
                      "it holds the environment's datasets, linked to the data bucket and read only; mount it ro"
                      + ("" if w.name == DATASETS_DIRECTORY else f", or write in the workload's own directory, {own}"))
        elif channel.file_system_access_mode == "rw" and parts[0] != w.name:
            f.problem(f"inputs.{channel.name}.file_system_access_mode", f"rw is allowed only on the workload's own "
                      f"directory {own} (this channel mounts {normalized(channel.directory_path)}): mount {own} rw, "
                      "or mount this one ro")


@workload_rule
def checkpoint_path_stays_in_opt_ml(w: Workload, f: Findings) -> None:
    path = w.checkpoint_local_path
    if path is None:
        return
    parts = segments(path)
    if parts is None:
        f.problem("checkpoint_local_path", f"has a '..' segment; write the directory it means, e.g. "
                  f"{DEFAULT_CHECKPOINT_PATH}")
    elif tuple(parts[:2]) != CHECKPOINT_ROOT or len(parts) < 3:
        f.problem("checkpoint_local_path", f"{normalized(path)} is not under /opt/ml/: SageMaker downloads the "
                  f"checkpoints into it at start, so it must be a directory of its own there, e.g. "
                  f"{DEFAULT_CHECKPOINT_PATH} (the default when left out)")
    elif parts[2] in RESERVED:
        f.problem("checkpoint_local_path", f"/opt/ml/{parts[2]} holds {RESERVED[parts[2]]}, which a checkpoint "
                  f"download at start would overwrite: use a directory of its own, e.g. {DEFAULT_CHECKPOINT_PATH}")


@workload_rule
def fsx_channels_pass_no_job_written_entry(w: Workload, f: Findings) -> None:
    for channel in w.inputs:
        if not isinstance(channel, FsxChannel):
            continue
        parts = segments(channel.directory_path)
        if not parts or parts[0] != w.name or w.name == DATASETS_DIRECTORY or len(parts) == 1:
            continue
        below = "/".join(parts[1:])
        f.problem(f"inputs.{channel.name}.directory_path", f"{normalized(channel.directory_path)} is below the "
                  f"workload's own directory /{w.name}, whose entries its jobs write: a job may leave a symbolic "
                  f"link there where a later run expects a directory, and whether SageMaker's mount follows it is "
                  f"not documented; mount /{w.name} itself and open {below} inside it (in the job, "
                  f"/opt/ml/input/data/{channel.name}/{below})")
