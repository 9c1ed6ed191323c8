"""How each SDK estimator class turns the distribution into hyperparameters.

`Framework._distribution_configuration` is the generic form (every present strategy adds its keys, in the SDK's
order); the PyTorch and HuggingFace estimators short-cut it for their own launchers; the generic Estimator adds
nothing at all. The parity tests run the real SDK against this module.
"""

from __future__ import annotations

from typing import Any

from compiler.compilation.strategies.base import Job, Strategy
from compiler.compilation.strategies.mpi import Mpi
from compiler.compilation.strategies.mwms import MultiWorkerMirrored
from compiler.compilation.strategies.parameter_server import ParameterServer
from compiler.compilation.strategies.pytorchxla import PyTorchXLA
from compiler.compilation.strategies.smdistributed import block_hyperparameters

INSTANCE_GROUPS = "sagemaker_distribution_instance_groups"
TORCH_DISTRIBUTED = "sagemaker_torch_distributed_enabled"
PYTORCH_DDP = "sagemaker_pytorch_ddp_enabled"
INSTANCE_TYPE = "sagemaker_instance_type"

_GENERIC_ORDER: tuple[type[Strategy], ...] = (PyTorchXLA, ParameterServer, Mpi)


def generic(job: Job) -> dict[str, Any]:
    """`Framework._distribution_configuration`."""
    d = job.distribution
    config: dict[str, Any] = {}
    if "instance_groups" in d:
        config[INSTANCE_GROUPS] = d["instance_groups"]
    for cls in _GENERIC_ORDER:
        if cls.present(d):
            config.update(cls(cls.config_of(d)).hyperparameters(job))
    if "smdistributed" in d:
        config.update(block_hyperparameters(job))
    if MultiWorkerMirrored.present(d):
        config.update(MultiWorkerMirrored(MultiWorkerMirrored.config_of(d)).hyperparameters(job))
    return config


def _launcher_keys(flag: str, value: Any, job: Job) -> dict[str, Any]:
    config = {flag: value}
    if job.instance_type is not None:
        config[INSTANCE_TYPE] = job.instance_type
    return config


def pytorch(job: Job) -> dict[str, Any]:
    """`PyTorch._pytorch_distribution_configuration` (pytorchddp was already rewritten to smdistributed)."""
    d = job.distribution
    torch_distributed = d["torch_distributed"].get("enabled", False) if "torch_distributed" in d else False
    if torch_distributed:
        config = generic(job) if "smdistributed" in d else {}
        config.update(_launcher_keys(TORCH_DISTRIBUTED, torch_distributed, job))
        return config
    return generic(job)


def huggingface(job: Job) -> dict[str, Any]:
    """`HuggingFace._huggingface_distribution_configuration`."""
    d = job.distribution
    if "pytorchddp" in d:
        if d["pytorchddp"].get("enabled", False):
            return _launcher_keys(PYTORCH_DDP, d["pytorchddp"]["enabled"], job)
    elif "torch_distributed" in d and d["torch_distributed"].get("enabled", False):
        return _launcher_keys(TORCH_DISTRIBUTED, d["torch_distributed"]["enabled"], job)
    return generic(job)


def distribution_hyperparameters(framework: str, job: Job) -> dict[str, Any]:
    if not job.distribution:
        return {}
    if framework == "pytorch":
        return pytorch(job)
    if framework == "huggingface":
        return huggingface(job)
    if framework == "tensorflow":
        return generic(job)
    return {}  # the generic, XGBoost and SKLearn estimators send nothing for distribution
