"""The instance catalog: the one place that knows what each SageMaker training instance type has.

Every check and figure that depends on an instance type (GPUs per host, EFA, the EFA variables the in-container
toolkit sets, the private IPs a node takes, the cost estimate) reads it from here, so the facts cannot drift.

- `data/instance_types.csv`: one row per training instance type in botocore's SageMaker model (a test keeps the
  two equal), with accelerators, vCPUs, memory and EFA interfaces.
- `data/prices/<region>.json`: SageMaker training on-demand list prices of one region, with their source and date,
  written by `trainctl prices --region R` (the AWS Price List API). A price is a region's: a type without one in the
  environment's region is reported as unknown, never taken from another region or guessed.
- `data/accelerators.csv`: dense BF16 peak per accelerator model, for model-FLOPs utilisation.
- Below: which types the `sagemaker-training` toolkit sets EFA variables for itself, and which do GPUDirect RDMA.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources


class Accelerator(StrEnum):
    NONE = "none"
    NVIDIA_GPU = "nvidia-gpu"
    TRAINIUM = "trainium"


# The region whose prices price what has no environment (a MachineSpec built by hand); every workload compiled for
# an environment is priced in that environment's region (the region is a compile argument, not a workload's field).
REFERENCE_REGION = "us-east-1"

# The sagemaker-training toolkit (`sagemaker_training/environment.py`) sets FI_PROVIDER=efa itself on these types,
# and FI_EFA_USE_DEVICE_RDMA=1 + RDMAV_FORK_SAFE=1 on the second list; other EFA types need them in Environment.
TOOLKIT_SETS_EFA_PROVIDER = frozenset({
    "ml.g4dn.8xlarge", "ml.g4dn.12xlarge", "ml.g5.48xlarge", "ml.p3dn.24xlarge", "ml.p4d.24xlarge",
    "ml.p4de.24xlarge", "ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.trn1.32xlarge", "ml.p6e-gb200.36xlarge",
})
TOOLKIT_SETS_RDMA = frozenset({
    "ml.p4d.24xlarge", "ml.p4de.24xlarge", "ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.trn1.32xlarge",
    "ml.p6e-gb200.36xlarge",
})
# Families whose EFA does GPUDirect RDMA (device memory to the network without a host copy).
RDMA_FAMILIES = frozenset({"p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200", "trn1", "trn1n",
                           "trn2"})

# Private IP addresses one training instance takes in its subnet: one per network interface, and SageMaker asks
# for at least 5 per EFA-enabled instance.
MIN_IPS_PER_EFA_INSTANCE = 5


@dataclass(frozen=True)
class InstanceType:
    """What one SageMaker training instance type offers."""

    name: str
    accelerator: Accelerator
    accelerators: int  # GPUs, or Trainium chips
    vcpus: int
    efa_interfaces: int  # 0: no EFA

    @property
    def family(self) -> str:
        return self.name.split(".")[1]

    @property
    def has_efa(self) -> bool:
        return self.efa_interfaces > 0

    @property
    def has_gpu(self) -> bool:
        return self.accelerator is Accelerator.NVIDIA_GPU

    @property
    def is_trainium(self) -> bool:
        return self.accelerator is Accelerator.TRAINIUM

    @property
    def processes(self) -> int:
        """Processes a node runs at most for data parallel training: one per accelerator, else one per vCPU."""
        return self.accelerators or self.vcpus

    @property
    def rdma_capable(self) -> bool:
        return self.has_efa and self.family in RDMA_FAMILIES

    @property
    def private_ips(self) -> int:
        """Private IPs one instance of this type needs in the training subnet."""
        if self.has_efa:
            return max(MIN_IPS_PER_EFA_INSTANCE, self.efa_interfaces + 1)
        return 1

    def efa_environment(self) -> dict[str, str]:
        """EFA variables the toolkit does not set itself on this type (empty when it does, or without EFA)."""
        env: dict[str, str] = {}
        if not self.has_efa:
            return env
        if self.name not in TOOLKIT_SETS_EFA_PROVIDER:
            env["FI_PROVIDER"] = "efa"
        if self.rdma_capable and self.name not in TOOLKIT_SETS_RDMA:
            env["FI_EFA_USE_DEVICE_RDMA"] = "1"
            env["RDMAV_FORK_SAFE"] = "1"
        return env


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("compiler.facts").joinpath("data", name).read_text()
    return list(csv.DictReader(io.StringIO(text)))


@functools.cache
def catalog() -> dict[str, InstanceType]:
    """Every training instance type, by name, in botocore's order."""
    table = {}
    for row in _rows("instance_types.csv"):
        table[row["instance_type"]] = InstanceType(
            name=row["instance_type"], accelerator=Accelerator(row["accelerator"]),
            accelerators=int(row["accelerator_count"]), vcpus=int(row["vcpus"]),
            efa_interfaces=int(row["efa_interfaces"]),
        )
    return table


@functools.cache
def dense_bf16_tflops() -> dict[str, float]:
    """Dense BF16 peak of each accelerator model in TFLOP/s (vendor data sheets), keyed like instance_types.csv's
    accelerator_model column."""
    return {row["accelerator_model"]: float(row["dense_bf16_tflops"]) for row in _rows("accelerators.csv")
            if row["dense_bf16_tflops"].strip()}


def lookup(name: str) -> InstanceType | None:
    return catalog().get(name)


def get(name: str) -> InstanceType:
    """The catalog entry of a type the spec checks already accepted."""
    entry = catalog().get(name)
    if entry is None:
        raise KeyError(f"{name} is not a SageMaker training instance type")
    return entry


@dataclass(frozen=True)
class PriceTable:
    """One region's SageMaker training on-demand list prices, USD per instance-hour, and where they came from."""

    region: str
    as_of: str  # the day (or month) the prices were read
    source: str  # how: the API call and its filters, or the document
    prices_per_hour_usd: Mapping[str, float]


PRICES_FOLDER = ("data", "prices")


def price_file(region: str) -> str:
    """The path of a region's price table, as the repository holds it (for messages)."""
    return f"compiler/facts/{'/'.join(PRICES_FOLDER)}/{region}.json"


@functools.cache
def price_table(region: str) -> PriceTable | None:
    """The region's price table, or None when the repository holds none for it."""
    path = resources.files("compiler.facts").joinpath(*PRICES_FOLDER, f"{region}.json")
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    return PriceTable(region=data["region"], as_of=data["as_of"], source=data["source"],
                      prices_per_hour_usd=dict(data["prices_per_hour_usd"]))


def price(name: str, region: str) -> float | None:
    """USD per instance-hour of a type in a region (list price), or None when the region's table has none."""
    table = price_table(region)
    return None if table is None else table.prices_per_hour_usd.get(name)


def hourly_cost(name: str, count: int, region: str) -> float | None:
    """Estimated USD per hour for `count` instances of a type in a region (list price), or None when unknown."""
    each = price(name, region)
    return None if each is None else round(each * count, 4)


def price_source(region: str) -> str:
    """Whose prices a cost uses, for every message that shows one: the region, and the table's date or the fix."""
    table = price_table(region)
    if table is None:
        return (f"no verified {region} prices: run `trainctl prices --region {region}` and commit "
                f"{price_file(region)}")
    return f"{region} list prices as of {table.as_of}"


def missing_price(names: Iterable[str], region: str) -> str:
    """Why these types have no price in the region, and the fix (for problems and warnings)."""
    listed = ", ".join(sorted(set(names)))
    if price_table(region) is None:
        return (f"no verified {region} prices for {listed} (the repository has no {price_file(region)}): run "
                f"`trainctl prices --region {region}` with credentials and commit the file")
    return (f"no verified {region} price for {listed} in {price_file(region)}; run `trainctl prices --region "
            f"{region}` to refresh it, or use priced instance types")


def prices_note(region: str) -> str:
    """Whose prices a state machine's cost estimate uses (its output's `cost_estimate` note)."""
    table = price_table(region)
    if table is None:
        return f"no verified {region} prices in this revision"
    return f"catalog list prices in {region}, {table.as_of}"
