"""The training network's address budget: how many private IPs jobs may take in the environment's subnet.

The environment fixes the training subnet's size (`training_subnet_mask` in cdk.json), so a spec change can never
resize (and so replace) the subnet, the file system in it, or the endpoints. What the workloads need beyond what the
subnet holds stops `validate` and synth, naming that setting. The CDK layer builds the endpoints listed here.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.inputs.environments import Environment

AWS_RESERVED_IPS = 5  # per subnet: network, router, DNS, future use, broadcast
FILE_SYSTEM_RESERVED_IPS = 32  # a conservative allowance for the FSx for Lustre file servers' interfaces
# AWS services a job reaches through interface endpoints in the training subnet (the S3 gateway endpoint takes no IP).
# Secrets Manager: where a workload's `secrets:` are read at start (compiler/facts/secret_refs.py).
INTERFACE_ENDPOINT_SERVICES = ("ecr.api", "ecr.dkr", "logs", "monitoring", "sts", "sagemaker.api", "secretsmanager")
# A relaunched or queued job can start before the previous one's interfaces are released.
HEADROOM = 2


@dataclass(frozen=True)
class AddressBudget:
    total: int
    reserved: int

    @property
    def for_jobs(self) -> int:
        return self.total - self.reserved


def budget(env: Environment) -> AddressBudget:
    reserved = AWS_RESERVED_IPS + len(INTERFACE_ENDPOINT_SERVICES) + (FILE_SYSTEM_RESERVED_IPS if env.has_fsx else 0)
    return AddressBudget(total=env.training_subnet_addresses, reserved=reserved)


def smallest_mask_for(ips: int, env: Environment) -> int:
    """The largest mask (smallest subnet) that holds `ips` job addresses plus the reserved ones."""
    needed = ips + budget(env).reserved
    mask = 28
    while mask > 16 and 2 ** (32 - mask) < needed:
        mask -= 1
    return mask
