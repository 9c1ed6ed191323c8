"""`smdistributed.modelparallel` (SMP): SageMaker model parallel, v1 under mpirun or v2 under torchrun.

The SDK checks the `parameters` with `fw_utils.validate_mp_config`; the platform also requires a launcher,
because SMP without one starts a single process per host that cannot initialise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.compilation.strategies.base import Job, Report, Strategy, enabled
from compiler.compilation.strategies.smdistributed import block_hyperparameters, check_block, smdistributed

_CHOICES = {"pipeline": ("simple", "interleaved", "_only_forward"), "placement_strategy": ("spread", "cluster"),
            "optimize": ("speed", "memory")}
_POSITIVE = ("microbatches", "partitions", "active_microbatches")
_BOOLEANS = ("auto_partition", "contiguous", "load_partition", "horovod", "ddp", "deterministic_server")
_WHERE = "distribution.smdistributed.modelparallel.parameters."


class SMModelParallel(Strategy):
    key = "smdistributed"
    label = "smp"
    frameworks = ("pytorch", "tensorflow", "huggingface")
    options = frozenset({"enabled", "parameters"})
    process_launcher = "mpirun"
    local_launcher = None  # SMP exists only in SageMaker's containers (run-local offers --without-model-parallel)

    @classmethod
    def present(cls, distribution: Mapping[str, Any]) -> bool:
        return "modelparallel" in smdistributed(distribution)

    @classmethod
    def config_of(cls, distribution: Mapping[str, Any]) -> Mapping[str, Any]:
        value = smdistributed(distribution).get("modelparallel")
        return value if isinstance(value, Mapping) else {}

    @property
    def where(self) -> str:
        return "distribution.smdistributed.modelparallel"

    def version(self, distribution: Mapping[str, Any]) -> int:
        """2 under torch_distributed (`torch.sagemaker`), 1 under mpi (`smdistributed.modelparallel`)."""
        return 2 if enabled(distribution.get("torch_distributed")) else 1

    def check(self, job: Job, report: Report, warn: Report) -> None:
        check_block(job, "distribution.smdistributed", report)
        if not self.is_enabled:
            return
        d = job.distribution
        if not (enabled(d.get("mpi")) or enabled(d.get("torch_distributed"))):
            v1 = "mpi: {enabled: true, processes_per_host: N} (SMP v1)"
            report(self.where, f"needs a launcher: {v1}" + ("" if job.base_framework == "tensorflow" else
                                                            " or torch_distributed: {enabled: true} (SMP v2)"))
        params = self.config.get("parameters", {})
        if isinstance(params, str):
            report(f"{self.where}.parameters", "give the model parallel parameters inline as a mapping (the SDK's "
                   "path-to-a-JSON-file form would read a file on the machine that runs synth)")
        elif not isinstance(params, Mapping):
            report(f"{self.where}.parameters", "must be a mapping of SMP parameters")
        else:
            check_mp_parameters(params, report)

    def hyperparameters(self, job: Job) -> dict[str, Any]:
        return block_hyperparameters(job)


def check_mp_parameters(config: Mapping[str, Any], report: Report) -> None:
    """`fw_utils.validate_mp_config`, rule by rule, in the SDK's order (so problems read in the order it raises them)."""
    for check in (_check_values, _check_partitioning, _check_memory_weight, _check_ddp):
        check(config, report)


def _is_whole(value: Any) -> bool:
    """An int that is not a bool: YAML's true is an int to Python, never a count or a port to SMP."""
    return isinstance(value, int) and not isinstance(value, bool)


def _check_values(config: Mapping[str, Any], report: Report) -> None:
    """Each parameter's own type or choices, regardless of the others."""
    for key, values in _CHOICES.items():
        if key in config and config[key] not in values:
            report(_WHERE + key, f"must be one of {', '.join(v for v in values if not v.startswith('_'))}")
    for key in _POSITIVE:
        if key in config and (not _is_whole(config[key]) or config[key] < 1):
            report(_WHERE + key, "must be a positive whole number")
    for key in _BOOLEANS:
        if key in config and not isinstance(config[key], bool):
            report(_WHERE + key, "must be true or false")
    if "partition_file" in config and not isinstance(config["partition_file"], str):
        report(_WHERE + "partition_file", "must be a string")


def _check_partitioning(config: Mapping[str, Any], report: Report) -> None:
    """default_partition: needed without auto_partition, and one of the partitions (SMP indexes them from 0)."""
    if config.get("auto_partition") is False and "default_partition" not in config:
        report(_WHERE + "default_partition", "is required when auto_partition is false")
    if "default_partition" in config:
        default, partitions = config["default_partition"], config.get("partitions")
        if not isinstance(default, int) or not isinstance(partitions, int) or default >= partitions:
            report(_WHERE + "default_partition", "must be a whole number below partitions")


def _check_memory_weight(config: Mapping[str, Any], report: Report) -> None:
    """memory_weight: a fraction, how much the partitioner weighs memory against compute."""
    if "memory_weight" in config:
        weight = config["memory_weight"]
        if not isinstance(weight, int | float) or isinstance(weight, bool) or not 0.0 <= weight <= 1.0:
            report(_WHERE + "memory_weight", "must be between 0.0 and 1.0")


def _check_ddp(config: Mapping[str, Any], report: Report) -> None:
    """The ddp settings: they mean nothing without ddp, the port must be one, and ddp excludes horovod."""
    for key in ("ddp_port", "ddp_dist_backend"):
        if key in config and "ddp" not in config:
            report(_WHERE + key, "needs ddp to be set as well")
    if "ddp_port" in config and (not _is_whole(config["ddp_port"]) or config["ddp_port"] < 0):
        report(_WHERE + "ddp_port", f"{config['ddp_port']!r} is not a port number")
    if config.get("horovod", False) and config.get("ddp", False):
        report(_WHERE + "ddp", "ddp and horovod cannot both be enabled")
