"""`parameter_server`: TensorFlow's parameter-server training, one worker per host."""

from __future__ import annotations

from typing import Any

from compiler.compilation.strategies.base import Job, Report, Strategy
from compiler.sdk import sdk_rules


class ParameterServer(Strategy):
    key = "parameter_server"
    label = "parameter_server"
    frameworks = ("tensorflow",)
    options = frozenset({"enabled", "custom_mpi_options"})
    process_launcher = "parameter-server"
    local_launcher = None

    def check(self, job: Job, report: Report, warn: Report) -> None:
        """`fw_utils.warn_if_parameter_server_with_multi_gpu`: a warning, as in the SDK."""
        if not self.is_enabled:
            return
        single = sdk_rules.constant("SINGLE_GPU_INSTANCE_TYPES")
        for instance_type in job.train_instance_types:
            if instance_type.split(".")[1].startswith("p") and instance_type not in single:
                warn(self.where, f"parameter server runs one worker per host: most GPUs of {instance_type} would sit "
                     "idle; use mpi or a single-GPU type")

    def hyperparameters(self, job: Job) -> dict[str, Any]:
        return {"sagemaker_parameter_server_enabled": self.config.get("enabled", False)}
