"""The `smdistributed` key's shared part: the SDK encodes dataparallel and modelparallel in one block.

`Framework._distribution_configuration` writes, whenever `smdistributed` is present: the modelparallel
parameters (when enabled and not empty), whether data parallel is enabled, the instance type, and the data-parallel MPI
options (when enabled). It refuses ml.p5.48xlarge without torch_distributed and one DLC image it cannot run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.compilation.strategies.base import Job, Report, enabled

# Framework.UNSUPPORTED_DLC_IMAGE_FOR_SM_PARALLELISM in the SDK.
UNSUPPORTED_IMAGE_TAGS = ("2.0.1-gpu-py310-cu121",)


def smdistributed(distribution: Mapping[str, Any]) -> Mapping[str, Any]:
    value = distribution.get("smdistributed")
    return value if isinstance(value, Mapping) else {}


def block_hyperparameters(job: Job) -> dict[str, Any]:
    smd = smdistributed(job.distribution)
    config: dict[str, Any] = {}
    modelparallel = smd.get("modelparallel", {})
    if enabled(modelparallel) and modelparallel.get("parameters"):  # `if get_mp_parameters(...)`: none when empty
        config["mp_parameters"] = modelparallel["parameters"]
    dataparallel = smd.get("dataparallel", {})
    config["sagemaker_distributed_dataparallel_enabled"] = dataparallel.get("enabled", False)
    config["sagemaker_instance_type"] = job.instance_type
    if dataparallel.get("enabled", False):
        config["sagemaker_distributed_dataparallel_custom_mpi_options"] = dataparallel.get("custom_mpi_options", "")
    return config


def check_block(job: Job, where: str, report: Report) -> None:
    """The rules of `_distribution_configuration` for any smdistributed strategy, enabled or not."""
    torch_distributed = enabled(job.distribution.get("torch_distributed"))
    if torch_distributed:
        return
    # `_distribution_configuration` looks at instance_type, or else at every instance group, training or not.
    for instance_type in (job.instance_type,) if job.instance_type else job.cluster_instance_types:
        if "p5.48xlarge" in instance_type:
            fix = ("use ml.p4d.24xlarge (torch_distributed, which p5 needs here, is PyTorch's)"
                   if job.framework == "tensorflow" else
                   "add torch_distributed: {enabled: true} (SMP v2) or use ml.p4d.24xlarge")
            even = "" if instance_type in job.train_instance_types else ", even in a group that does not train"
            report(where, f"SageMaker data/model parallel does not run on {instance_type} without torch_distributed"
                   f"{even}; {fix}")
    image = job.image_uri or ""
    for tag in UNSUPPORTED_IMAGE_TAGS:
        if tag in image:
            report("image_uri", f"SageMaker's smdistributed libraries do not run in the DLC image {tag} without "
                   "torch_distributed; pick another image or enable torch_distributed")
