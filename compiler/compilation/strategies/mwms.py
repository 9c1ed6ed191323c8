"""`multi_worker_mirrored_strategy`: TensorFlow's MultiWorkerMirroredStrategy (TensorFlow 2.9 and newer)."""

from __future__ import annotations

from typing import Any

from compiler.compilation.strategies.base import Job, Report, Strategy
from compiler.sdk.framework_images import release, release_or_none


class MultiWorkerMirrored(Strategy):
    key = "multi_worker_mirrored_strategy"
    label = "multi_worker_mirrored_strategy"
    frameworks = ("tensorflow",)
    options = frozenset({"enabled"})
    process_launcher = "tensorflow-mwms"
    local_launcher = None

    def check(self, job: Job, report: Report, warn: Report) -> None:
        if not self.is_enabled:
            return
        version = job.framework_version
        if job.framework == "tensorflow" and version and _before(version, "2.9"):
            report(self.where, f"needs TensorFlow 2.9 or newer (framework_version is {version})")
        if "smdistributed" in job.distribution or "parameter_server" in job.distribution:
            report(self.where, "cannot be combined with smdistributed or parameter_server")

    def hyperparameters(self, job: Job) -> dict[str, Any]:
        return {"sagemaker_multi_worker_mirrored_strategy_enabled": self.config.get("enabled", False)}


def _before(version: str, bound: str) -> bool:
    numbers = release_or_none(version)
    return numbers is not None and numbers < release(bound)
