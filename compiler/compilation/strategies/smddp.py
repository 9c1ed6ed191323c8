"""`smdistributed.dataparallel` (SMDDP): SageMaker's data-parallel collectives, launched with smddprun/mpirun."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.compilation.strategies.base import Job, Report, Strategy, enabled, unsupported_version, version_field
from compiler.compilation.strategies.smdistributed import block_hyperparameters, check_block, smdistributed
from compiler.sdk import sdk_rules

# p5-class types run SMDDP only through torch_distributed (SMDDP v2); the SDK's list predates them.
_SMDDP_WITH_TORCHRUN = ("ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p5en.48xlarge")


class SMDataParallel(Strategy):
    key = "smdistributed"
    label = "smddp"
    frameworks = ("pytorch", "tensorflow", "huggingface")
    options = frozenset({"enabled", "custom_mpi_options"})
    process_launcher = "smddprun"
    local_launcher = "torchrun"

    @classmethod
    def present(cls, distribution: Mapping[str, Any]) -> bool:
        return "dataparallel" in smdistributed(distribution)

    @classmethod
    def config_of(cls, distribution: Mapping[str, Any]) -> Mapping[str, Any]:
        value = smdistributed(distribution).get("dataparallel")
        return value if isinstance(value, Mapping) else {}

    @property
    def where(self) -> str:
        return "distribution.smdistributed.dataparallel"

    def check(self, job: Job, report: Report, warn: Report) -> None:
        check_block(job, "distribution.smdistributed", report)
        if not self.is_enabled:
            return
        if not isinstance(self.config.get("custom_mpi_options", ""), str):
            report(f"{self.where}.custom_mpi_options", "must be a string of mpirun options")
        self._check_instances(job, warn)
        if job.uses_own_image:
            return  # with an image of your own the SDK skips its version tables (`_validate_smdataparallel_args`)
        # `_validate_smdataparallel_args`, with HuggingFace's base framework and version (as the SDK passes them)
        tables = sdk_rules.constant("SM_DATAPARALLEL_SUPPORTED_FRAMEWORK_VERSIONS")
        if job.base_framework not in tables:
            report(self.where, f"the SDK has no SMDDP version table for {job.base_framework} images (its estimator "
                   "fails); use pytorchddp or torch_distributed, or give image_uri")
            return
        versions = tables[job.base_framework]
        if job.base_version not in versions:
            report(version_field(job), f"SMDDP supports {job.base_framework} "
                   f"{unsupported_version(job, versions, 4)}")
        if job.py_version and "py3" not in job.py_version:
            report("py_version", f"SMDDP needs Python 3 (py3x), not {job.py_version}")

    def _check_instances(self, job: Job, warn: Report) -> None:
        """The SDK lists SMDDP's instance types but does not check them, and jobs elsewhere do run: `pytorchddp` (which
        the PyTorch estimator sends as SMDDP) with the nccl backend, on g4dn or g5. Only SMDDP's own collectives
        (backend "smddp") need the listed types, so this is a warning."""
        supported = [t for t in sdk_rules.constant("SM_DATAPARALLEL_SUPPORTED_INSTANCE_TYPES") if t.startswith("ml.")]
        torchrun = enabled(job.distribution.get("torch_distributed"))
        for instance_type in job.train_instance_types:
            if instance_type in supported or (torchrun and instance_type in _SMDDP_WITH_TORCHRUN):
                continue
            warn(self.where, f"SMDDP's own collectives (backend \"smddp\") run on {', '.join(supported)} (and p5 types "
                 f"with torch_distributed), not {instance_type}: there the script must use the nccl backend "
                 "(pytorchddp sends this strategy)")

    def hyperparameters(self, job: Job) -> dict[str, Any]:
        return block_hyperparameters(job)
