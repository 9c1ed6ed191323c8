"""`mpi`: the toolkit starts the entry point with mpirun (Horovod, SMP v1, custom MPI programs)."""

from __future__ import annotations

from typing import Any

from compiler.compilation.strategies.base import Job, Report, Strategy
from compiler.facts import catalog


class Mpi(Strategy):
    key = "mpi"
    label = "mpi"
    frameworks = ("pytorch", "tensorflow", "huggingface")
    options = frozenset({"enabled", "processes_per_host", "custom_mpi_options"})
    process_launcher = "mpirun"
    local_launcher = "torchrun"

    def check(self, job: Job, report: Report, warn: Report) -> None:
        options = self.config.get("custom_mpi_options", "")
        if not isinstance(options, str):
            report(f"{self.where}.custom_mpi_options", "must be a string of mpirun options")
        per_host = self.config.get("processes_per_host")
        if per_host is None:
            return
        if not isinstance(per_host, int) or isinstance(per_host, bool) or per_host < 1:
            report(f"{self.where}.processes_per_host", "must be a positive whole number")
            return
        if not self.is_enabled:
            return  # sent as the SDK sends it, but mpirun does not start: nothing to fit on the GPUs
        for instance_type in job.train_instance_types:
            instance = catalog.get(instance_type)
            limit = instance.processes
            what = "GPU" if instance.has_gpu else ("Trainium chip" if instance.is_trainium else "vCPU")
            if per_host > limit:
                report(f"{self.where}.processes_per_host", f"{per_host} processes on {instance_type}, which has {limit} "
                       f"{what}{'s' if limit > 1 else ''}; use at most {limit}")

    def hyperparameters(self, job: Job) -> dict[str, Any]:
        config: dict[str, Any] = {"sagemaker_mpi_enabled": self.config.get("enabled", False)}
        if self.config.get("processes_per_host"):
            config["sagemaker_mpi_num_of_processes_per_host"] = self.config["processes_per_host"]
        config["sagemaker_mpi_custom_mpi_options"] = self.config.get("custom_mpi_options", "")
        return config
