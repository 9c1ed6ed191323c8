"""`torch_distributed`: the toolkit starts the entry point with torchrun on every host (PyTorch, HuggingFace)."""

from __future__ import annotations

from typing import Any

from compiler.compilation.strategies.base import Job, Report, Strategy, unsupported_version, version_field
from compiler.sdk import sdk_instances, sdk_rules


class TorchDistributed(Strategy):
    key = "torch_distributed"
    label = "torch_distributed"
    frameworks = ("pytorch", "huggingface")
    options = frozenset({"enabled"})
    process_launcher = "torchrun"
    local_launcher = "torchrun"

    def check(self, job: Job, report: Report, warn: Report) -> None:
        """`fw_utils.validate_torch_distributed_distribution`, which the SDK runs when the framework it validates is
        PyTorch: the PyTorch estimator, and HuggingFace with pytorch_version (checked against that version)."""
        if not self.is_enabled:
            return
        if job.entry_point is not None and not job.entry_point.endswith(".py"):
            report("entry_point", "torch_distributed runs Python programs only: the entry point must be a .py file")
        if job.base_framework != "pytorch" or job.uses_own_image:
            return  # with an image of your own the SDK skips its version tables, and so do we
        if job.py_version and "py3" not in job.py_version:
            report("py_version", f"torch_distributed needs Python 3 (py3x), not {job.py_version}")
        for instance_type in job.train_instance_types:
            self._check_version(job, instance_type, report)

    def _check_version(self, job: Job, instance_type: str, report: Report) -> None:
        if sdk_instances.is_gpu(instance_type):
            table = "TORCH_DISTRIBUTED_GPU_SUPPORTED_FRAMEWORK_VERSIONS"
        elif sdk_instances.is_trainium(instance_type):
            table = "TRAINIUM_SUPPORTED_TORCH_DISTRIBUTED_FRAMEWORK_VERSIONS"
        else:
            report(self.where, f"runs on GPU or Trainium instances only, not {instance_type}")
            return
        versions = sdk_rules.constant(table)
        if job.base_version not in versions:
            report(version_field(job), f"torch_distributed on {instance_type} supports PyTorch "
                   f"{unsupported_version(job, versions, 5)}")

    def hyperparameters(self, job: Job) -> dict[str, Any]:
        return {}  # the PyTorch and HuggingFace estimators add its keys themselves (see compiler.compilation.strategies.encoding)
