"""`pytorchddp`: PyTorch DDP. The PyTorch estimator rewrites it to SMDDP; HuggingFace launches its own DDP runner."""

from __future__ import annotations

from typing import Any

from compiler.compilation.strategies.base import Job, Report, Strategy


class PyTorchDDP(Strategy):
    key = "pytorchddp"
    label = "pytorchddp"
    frameworks = ("pytorch", "huggingface")
    options = frozenset({"enabled", "custom_mpi_options"})
    process_launcher = "mpirun"
    local_launcher = "torchrun"

    def check(self, job: Job, report: Report, warn: Report) -> None:
        if "smdistributed" in job.distribution:
            report("distribution", "cannot use both pytorchddp and smdistributed; keep one")
        if not isinstance(self.config.get("custom_mpi_options", ""), str):
            report(f"{self.where}.custom_mpi_options", "must be a string of mpirun options")
        # For PyTorch the rules of SMDDP apply: the estimator rewrites this key to smdistributed.dataparallel
        # before validating (compiler.compilation.strategies checks the rewritten distribution).

    def hyperparameters(self, job: Job) -> dict[str, Any]:
        return {}  # only the estimators' own composition adds its keys
