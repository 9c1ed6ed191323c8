"""The instance catalog: the one place that knows what each SageMaker training instance type has.

Every check and figure that depends on an instance type (GPUs per host, EFA, the EFA variables the
in-container toolkit sets, the cost estimate) reads it from here, so the facts cannot drift apart.

Sources: AWS instance-type pages and the SageMaker pricing page (us-east-1, on-demand training list
prices; check the pricing page before quoting them); the EFA lists of the `sagemaker-training` toolkit
(`sagemaker_training/environment.py`), see ../shared/FACTS.md section 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Accelerator(StrEnum):
    NONE = "none"
    NVIDIA_GPU = "nvidia-gpu"
    TRAINIUM = "trainium"


PRICES_AS_OF = "2026-11"
PRICE_REGION = "us-east-1"


@dataclass(frozen=True)
class InstanceType:
    """What one SageMaker training instance type offers."""

    name: str
    accelerator: Accelerator
    accelerators: int  # GPUs, or Trainium chips
    accelerator_model: str  # e.g. "H100", "A100-40GB", "Trainium"
    vcpus: int
    memory_gib: int
    efa_interfaces: int  # 0: no EFA
    price_per_hour: float  # USD, on-demand SageMaker training list price in PRICE_REGION as of PRICES_AS_OF
    toolkit_sets_efa_provider: bool = False  # sagemaker-training sets FI_PROVIDER=efa itself
    toolkit_sets_rdma: bool = False  # sagemaker-training sets FI_EFA_USE_DEVICE_RDMA=1 and RDMAV_FORK_SAFE=1
    rdma_capable: bool = False  # GPUDirect RDMA over EFA works on this type

    @property
    def has_efa(self) -> bool:
        return self.efa_interfaces > 0

    @property
    def has_gpu(self) -> bool:
        return self.accelerator is Accelerator.NVIDIA_GPU

    @property
    def is_trainium(self) -> bool:
        return self.accelerator is Accelerator.TRAINIUM

    def efa_environment(self) -> dict[str, str]:
        """EFA variables the toolkit does not set itself on this type (empty when it does, or no EFA)."""
        env: dict[str, str] = {}
        if not self.has_efa:
            return env
        if not self.toolkit_sets_efa_provider:
            env["FI_PROVIDER"] = "efa"
        if self.rdma_capable and not self.toolkit_sets_rdma:
            env["FI_EFA_USE_DEVICE_RDMA"] = "1"
            env["RDMAV_FORK_SAFE"] = "1"
        return env


_G = Accelerator.NVIDIA_GPU
_T = Accelerator.TRAINIUM
_N = Accelerator.NONE

# name, accelerator, count, model, vcpus, memory GiB, EFA interfaces, $/h, toolkit EFA, toolkit RDMA, RDMA capable
_ROWS: list[tuple] = [
    # CPU instances, for small jobs and tests
    ("ml.m5.xlarge", _N, 0, "", 4, 16, 0, 0.23),
    ("ml.m5.2xlarge", _N, 0, "", 8, 32, 0, 0.461),
    ("ml.m5.4xlarge", _N, 0, "", 16, 64, 0, 0.922),
    ("ml.c5.xlarge", _N, 0, "", 4, 8, 0, 0.204),
    ("ml.c5.4xlarge", _N, 0, "", 16, 32, 0, 0.816),
    ("ml.c5n.18xlarge", _N, 0, "", 72, 192, 1, 4.666),
    # NVIDIA V100
    ("ml.p3.2xlarge", _G, 1, "V100-16GB", 8, 61, 0, 3.825),
    ("ml.p3.8xlarge", _G, 4, "V100-16GB", 32, 244, 0, 14.688),
    ("ml.p3.16xlarge", _G, 8, "V100-16GB", 64, 488, 0, 28.152),
    ("ml.p3dn.24xlarge", _G, 8, "V100-32GB", 96, 768, 1, 35.894, True, False, False),
    # NVIDIA T4
    ("ml.g4dn.xlarge", _G, 1, "T4", 4, 16, 0, 0.736),
    ("ml.g4dn.2xlarge", _G, 1, "T4", 8, 32, 0, 0.94),
    ("ml.g4dn.8xlarge", _G, 1, "T4", 32, 128, 1, 2.72, True, False, False),
    ("ml.g4dn.12xlarge", _G, 4, "T4", 48, 192, 1, 4.89, True, False, False),
    ("ml.g4dn.16xlarge", _G, 1, "T4", 64, 256, 1, 5.44, False, False, False),
    # NVIDIA A10G
    ("ml.g5.xlarge", _G, 1, "A10G", 4, 16, 0, 1.408),
    ("ml.g5.2xlarge", _G, 1, "A10G", 8, 32, 0, 1.515),
    ("ml.g5.4xlarge", _G, 1, "A10G", 16, 64, 0, 2.03),
    ("ml.g5.8xlarge", _G, 1, "A10G", 32, 128, 1, 3.06, False, False, False),
    ("ml.g5.12xlarge", _G, 4, "A10G", 48, 192, 1, 7.09, False, False, False),
    ("ml.g5.16xlarge", _G, 1, "A10G", 64, 256, 1, 5.12, False, False, False),
    ("ml.g5.24xlarge", _G, 4, "A10G", 96, 384, 1, 10.18, False, False, False),
    ("ml.g5.48xlarge", _G, 8, "A10G", 192, 768, 1, 20.36, True, False, False),
    # NVIDIA L40S
    ("ml.g6e.xlarge", _G, 1, "L40S", 4, 32, 0, 2.336),
    ("ml.g6e.12xlarge", _G, 4, "L40S", 48, 384, 1, 13.12, False, False, False),
    ("ml.g6e.48xlarge", _G, 8, "L40S", 192, 1536, 4, 37.67, False, False, False),
    # NVIDIA A100 / H100 / H200
    ("ml.p4d.24xlarge", _G, 8, "A100-40GB", 96, 1152, 4, 37.688, True, True, True),
    ("ml.p4de.24xlarge", _G, 8, "A100-80GB", 96, 1152, 4, 47.11, True, True, True),
    ("ml.p5.48xlarge", _G, 8, "H100", 192, 2048, 32, 113.07, True, True, True),
    ("ml.p5e.48xlarge", _G, 8, "H200", 192, 2048, 32, 124.3, True, True, True),
    ("ml.p5en.48xlarge", _G, 8, "H200", 192, 2048, 16, 126.5, False, False, True),
    # AWS Trainium
    ("ml.trn1.2xlarge", _T, 1, "Trainium", 8, 32, 0, 1.544),
    ("ml.trn1.32xlarge", _T, 16, "Trainium", 128, 512, 8, 24.725, True, True, True),
    ("ml.trn1n.32xlarge", _T, 16, "Trainium", 128, 512, 16, 27.26, False, False, True),
]


def _build(rows: list[tuple]) -> dict[str, InstanceType]:
    table: dict[str, InstanceType] = {}
    for row in rows:
        name, acc, count, model, vcpus, mem, efa, price, *flags = row
        efa_provider, rdma_set, rdma_ok = ([*flags, False, False, False])[:3]
        table[name] = InstanceType(
            name=name, accelerator=acc, accelerators=count, accelerator_model=model, vcpus=vcpus,
            memory_gib=mem, efa_interfaces=efa, price_per_hour=price, toolkit_sets_efa_provider=efa_provider,
            toolkit_sets_rdma=rdma_set, rdma_capable=rdma_ok,
        )
    return table


CATALOG: dict[str, InstanceType] = _build(_ROWS)

# Dense BF16 peak of each accelerator model in TFLOP/s (vendor data sheets; SXM parts where applicable),
# used for model-FLOPs utilisation in bench/train_throughput.py. Keyed by the catalog's accelerator_model.
DENSE_BF16_TFLOPS: dict[str, float] = {
    "V100-16GB": 125.0,  # FP16 tensor-core peak; V100 has no BF16
    "V100-32GB": 125.0,
    "T4": 65.0,  # FP16 tensor-core peak; T4 has no BF16
    "A10G": 70.0,
    "L40S": 181.0,
    "A100-40GB": 312.0,
    "A100-80GB": 312.0,
    "H100": 989.0,
    "H200": 989.0,
}

# Private IP addresses one training instance takes in its subnet: one per network interface,
# and SageMaker asks for at least 5 per EFA-enabled instance (../shared/FACTS.md section 2).
MIN_IPS_PER_EFA_INSTANCE = 5


def hourly_cost(name: str, count: int) -> float:
    """Estimated USD per hour for `count` instances of a type (list price; the state machine and summary use it)."""
    return round(CATALOG[name].price_per_hour * count, 4)


def lookup(name: str) -> InstanceType | None:
    return CATALOG.get(name)


def ips_per_instance(instance: InstanceType) -> int:
    """Private IPs one instance of this type needs in the training subnet."""
    if instance.has_efa:
        return max(MIN_IPS_PER_EFA_INSTANCE, instance.efa_interfaces + 1)
    return 1
