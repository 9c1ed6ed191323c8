"""`pytorchxla`: PyTorch/XLA multi-worker training, which the SDK allows only with SageMaker Training Compiler."""

from __future__ import annotations

from typing import Any

from compiler.compilation.strategies.base import Job, Report, Strategy


class PyTorchXLA(Strategy):
    key = "pytorchxla"
    label = "pytorchxla"
    frameworks = ("pytorch", "huggingface")
    options = frozenset({"enabled"})
    process_launcher = "xla"
    local_launcher = None

    def check(self, job: Job, report: Report, warn: Report) -> None:
        report(self.where, "PyTorch/XLA distributed training needs SageMaker Training Compiler (compiler_config), "
               "which the platform does not take; use torch_distributed")

    def hyperparameters(self, job: Job) -> dict[str, Any]:
        return {"sagemaker_pytorch_xla_multi_worker_enabled": self.config.get("enabled", False)}
