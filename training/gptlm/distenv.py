"""Which launcher started this process, and how to join the process group it implies.

SageMaker starts the entry point in one of a few ways, chosen by the workload's `distribution`:
- torchrun (`torch_distributed`): RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT are set;
- mpirun (`mpi`, SMP v1, SMDDP): Open MPI's OMPI_COMM_WORLD_* variables give rank and size, and the master
  is the first of SM_HOSTS (the toolkit's MASTER_ADDR is not forwarded to other hosts by mpirun);
- a single plain process (no distribution, and `python train.py` on a laptop).
SMDDP is on when the toolkit's framework parameters say `sagemaker_distributed_dataparallel_enabled`;
its process-group backend is `smddp`. Otherwise NCCL on GPUs and gloo on CPU.

`detect` is a pure function of the environment so every launcher is testable without launching it.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from gptlm.errors import UserError

DEFAULT_MASTER_PORT = 29500
SMDDP_FLAG = "sagemaker_distributed_dataparallel_enabled"


class LaunchError(UserError, RuntimeError):
    """The environment is inconsistent with the workload; the message names what to change."""


@dataclass(frozen=True)
class DistEnv:
    launcher: str  # "torchrun" | "mpi" | "single"
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: str
    master_port: int
    smddp: bool

    @property
    def distributed(self) -> bool:
        return self.world_size > 1 or self.launcher != "single"

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def backend(self, cuda: bool) -> str:
        if self.smddp:
            return "smddp"
        return "nccl" if cuda else "gloo"


def _int(environ: Mapping[str, str], name: str, default: int | None = None) -> int:
    raw = environ.get(name)
    if raw is None:
        if default is None:
            raise LaunchError(f"environment variable {name} is missing; the launcher did not set it")
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise LaunchError(f"environment variable {name}={raw!r} is not an integer") from exc


def framework_params(environ: Mapping[str, str]) -> dict:
    """The toolkit's `sagemaker_*` parameters (SM_FRAMEWORK_PARAMS); empty outside SageMaker."""
    try:
        params = json.loads(environ.get("SM_FRAMEWORK_PARAMS") or "{}")
    except json.JSONDecodeError:
        return {}
    return params if isinstance(params, dict) else {}


def _first_host(environ: Mapping[str, str]) -> str | None:
    try:
        hosts = json.loads(environ.get("SM_HOSTS") or "[]")
    except json.JSONDecodeError:
        return None
    return sorted(hosts)[0] if hosts else None  # SageMaker names hosts algo-1, algo-2, ...: sorted, first is master


def detect(environ: Mapping[str, str] = os.environ) -> DistEnv:
    smddp = framework_params(environ).get(SMDDP_FLAG) in (True, "true", "True")
    if "RANK" in environ and "WORLD_SIZE" in environ:
        return DistEnv(
            launcher="torchrun",
            rank=_int(environ, "RANK"), world_size=_int(environ, "WORLD_SIZE"),
            local_rank=_int(environ, "LOCAL_RANK", 0),
            local_world_size=_int(environ, "LOCAL_WORLD_SIZE", _int(environ, "WORLD_SIZE")),
            master_addr=environ.get("MASTER_ADDR", "127.0.0.1"),
            master_port=_int(environ, "MASTER_PORT", DEFAULT_MASTER_PORT),
            smddp=smddp,
        )
    if "OMPI_COMM_WORLD_RANK" in environ:
        size = _int(environ, "OMPI_COMM_WORLD_SIZE")
        return DistEnv(
            launcher="mpi",
            rank=_int(environ, "OMPI_COMM_WORLD_RANK"), world_size=size,
            local_rank=_int(environ, "OMPI_COMM_WORLD_LOCAL_RANK", 0),
            local_world_size=_int(environ, "OMPI_COMM_WORLD_LOCAL_SIZE", size),
            master_addr=_first_host(environ) or environ.get("MASTER_ADDR") or "127.0.0.1",
            master_port=_int(environ, "MASTER_PORT", DEFAULT_MASTER_PORT),
            smddp=smddp,
        )
    if smddp:
        raise LaunchError("SageMaker data parallel is enabled but the process was not started by mpirun/smddprun; "
                          "run the job through the SageMaker toolkit or remove smdistributed.dataparallel")
    return DistEnv(launcher="single", rank=0, world_size=1, local_rank=0, local_world_size=1,
                   master_addr="127.0.0.1", master_port=DEFAULT_MASTER_PORT, smddp=False)


def module_available(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package that is missing or broken
        return False


def init_process_group(env: DistEnv, cuda: bool, timeout_minutes: int = 30) -> Any:
    """Join the process group the launcher set up. A single plain process skips it entirely.

    Returns the rendezvous store when this process made it (the MPI launch: rank 0 hosts it, so it must leave
    after its peers, see gptlm.shutdown), else None (torchrun's agent hosts its own; SMDDP rendezvous over MPI).
    """
    import torch.distributed as dist

    if not env.distributed or dist.is_initialized():
        return None
    backend = env.backend(cuda)
    timeout = timedelta(minutes=timeout_minutes)
    if backend == "smddp":
        try:
            importlib.import_module("smdistributed.dataparallel.torch.torch_smddp")
        except ImportError as exc:
            raise LaunchError("the workload enables SageMaker data parallel (SMDDP) but this container has no "
                              "smdistributed.dataparallel; use an AWS PyTorch DLC that ships it (PyTorch <= 2.2 "
                              "per the SDK) or switch the distribution to torch_distributed") from exc
        dist.init_process_group(backend="smddp", timeout=timeout)  # smddp reads rank/size from its MPI launch
        return None
    if env.launcher == "torchrun":  # env:// joins the store torchrun's agent already serves on MASTER_PORT
        dist.init_process_group(backend=backend, init_method="env://", timeout=timeout)
        return None
    store = dist.TCPStore(host_name=env.master_addr, port=env.master_port, world_size=env.world_size,
                          is_master=env.is_main, timeout=timeout)
    dist.init_process_group(backend=backend, store=store, rank=env.rank, world_size=env.world_size, timeout=timeout)
    return store
