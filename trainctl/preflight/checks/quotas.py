"""Account limits the environment meets at deploy or at its first run: SageMaker training instances per type
(each workload's types, fallbacks included, times its largest count), the VPC it adds, and FSx for Lustre storage.

Values come from Service Quotas: the applied value (ListServiceQuotas) where the account has one, else AWS's default
(ListAWSDefaultServiceQuotas), since the first lists only quotas whose applied value is available.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compiler.inputs.model import Workload
from trainctl.preflight.checks import templates
from trainctl.preflight.checks.base import FAIL, PASS, SKIP, Context, Result


@dataclass(frozen=True)
class Quota:
    name: str
    code: str
    value: float


def service_quotas(ctx: Context, service: str) -> dict[str, Quota]:
    """Every quota of a service by name, the applied value winning over the default."""
    client = ctx.aws.client("service-quotas")
    found: dict[str, Quota] = {}
    for operation in ("list_aws_default_service_quotas", "list_service_quotas"):  # applied values last: they win
        for page in client.get_paginator(operation).paginate(ServiceCode=service):
            for q in page.get("Quotas", []):
                found[q["QuotaName"]] = Quota(q["QuotaName"], q.get("QuotaCode", "?"), float(q.get("Value", 0)))
    return found


def _increase(ctx: Context, service: str, quota: Quota, value: int) -> str:
    return (f"`aws service-quotas request-service-quota-increase --service-code {service} --quota-code {quota.code} "
            f"--desired-value {value} --region {ctx.env.region}`")


def training_demand(workload: Workload) -> dict[str, int]:
    """Quota name -> instances one run of the workload may hold at once (a fallback type runs the same count)."""
    usage = "spot training job usage" if workload.use_spot_instances else "training job usage"
    ceiling = workload.instance_count_ceiling
    counts: dict[str, int] = {}
    if workload.compute.instance_groups:
        for group in workload.compute.instance_groups:
            counts[group.instance_type] = counts.get(group.instance_type, 0) + group.instance_count
    else:
        counts[workload.instance_type] = ceiling
    for fallback in workload.capacity_retry.fallback_instance_types:
        counts[fallback] = max(counts.get(fallback, 0), ceiling)
    return {f"{kind} for {usage}": count for kind, count in counts.items()}


def training_quotas(ctx: Context) -> list[Result]:
    """Every workload of the environment fits its SageMaker training quota, type by type; the shortfall is named."""
    name = "training-quotas"
    if ctx.compile_error is not None:
        return [Result(name, FAIL, f"the workloads do not compile ({ctx.compile_error}); run `trainctl validate`")]
    need: dict[str, tuple[int, str]] = {}  # quota name -> (largest count, the workload that needs it)
    on_plans = []
    for compiled in ctx.compiled:
        if compiled.workload.compute.training_plan:
            on_plans.append(compiled.name)  # reserved capacity of a training plan, not the on-demand quota
            continue
        for quota_name, count in training_demand(compiled.workload).items():
            if count > need.get(quota_name, (0, ""))[0]:
                need[quota_name] = (count, compiled.name)
    if not need:
        return [Result(name, SKIP, f"no workload of {ctx.env.name} runs on on-demand or spot capacity")]
    quotas = service_quotas(ctx, "sagemaker")
    rows, fine = [], []
    for quota_name, (count, workload) in sorted(need.items()):
        quota = quotas.get(quota_name)
        if quota is None:
            rows.append(Result(name, FAIL, f"{workload} needs {count} x '{quota_name}', which Service Quotas does not "
                               f"list in {ctx.env.region}: the type is not offered for training there; pick another"))
        elif quota.value < count:
            rows.append(Result(name, FAIL, f"{workload} needs {count} x '{quota_name}', the quota is {quota.value:g} "
                               f"(short by {count - quota.value:g}): {_increase(ctx, 'sagemaker', quota, count)}"))
        else:
            fine.append(f"{quota_name} {quota.value:g} >= {count}")
    if not rows:
        plans = f"; on training plans (not checked): {', '.join(on_plans)}" if on_plans else ""
        rows.append(Result(name, PASS, "; ".join(fine) + plans))
    return rows


def _network_stack_exists(ctx: Context, stack: str) -> bool:
    from botocore.exceptions import ClientError

    try:
        ctx.aws.client("cloudformation").describe_stacks(StackName=stack)
    except ClientError as error:
        if "does not exist" in str(error):
            return False
        raise
    return True


def _limit(quotas: dict[str, Quota], quota_name: str, need: int, what: str) -> str | None:
    quota = quotas.get(quota_name)
    if quota is None or quota.value >= need:
        return None
    return f"{what} needs {need}, the quota '{quota_name}' is {quota.value:g} (quota code {quota.code})"


def network_limits(ctx: Context) -> list[Result]:
    """The VPC the Network stack adds fits 'VPCs per Region', and its subnets and interface endpoints fit the
    per-VPC quotas (the subnet's own size is checked offline by validate: training_subnet_mask)."""
    name = "network-limits"
    try:
        net = templates.network(ctx.stacks)
    except templates.NoAssembly as error:
        return [Result(name, FAIL, f"{error}, so preflight can count what the Network stack creates")]
    if net is None:
        return [Result(name, SKIP, f"the templates of {ctx.env.name} create no VPC")]
    quotas = service_quotas(ctx, "vpc")
    existing = len(ctx.aws.client("ec2").describe_vpcs().get("Vpcs", []))
    new = 0 if _network_stack_exists(ctx, net.stack) else net.vpcs
    problems = [p for p in (
        _limit(quotas, "VPCs per Region", existing + new, f"{existing} existing VPCs + {new} new"),
        _limit(quotas, "Subnets per VPC", net.subnets, f"{net.stack}'s VPC"),
        _limit(quotas, "Interface VPC endpoints per VPC", net.interface_endpoints, f"{net.stack}'s VPC"),
    ) if p]
    if problems:
        return [Result(name, FAIL, f"{p}; request an increase in Service Quotas (service vpc) or remove unused VPCs")
                for p in problems]
    return [Result(name, PASS, f"{existing} VPCs + {new} new, {net.subnets} subnets and {net.interface_endpoints} "
                   "interface endpoints per VPC: within the account's VPC quotas")]


def _lustre_quota_applies(quota_name: str, deployment_type: str) -> bool:
    """An FSx quota on Lustre storage capacity that covers this deployment type (SSD; scratch or persistent)."""
    lowered = quota_name.lower()
    if "lustre" not in lowered or "storage capacity" not in lowered or "hdd" in lowered:
        return False
    kind = "scratch" if deployment_type.upper().startswith("SCRATCH") else "persistent"
    other = "persistent" if kind == "scratch" else "scratch"
    return other not in lowered


def _lustre_file_systems(ctx: Context) -> list[dict[str, Any]]:
    systems: list[dict[str, Any]] = []
    for page in ctx.aws.client("fsx").get_paginator("describe_file_systems").paginate():
        systems += [fs for fs in page.get("FileSystems", []) if fs.get("FileSystemType") == "LUSTRE"]
    return systems


def _owned_by(system: dict[str, Any], stack: str | None) -> bool:
    return any(t.get("Key") == "aws:cloudformation:stack-name" and t.get("Value") == stack
               for t in system.get("Tags", []))


def fsx_limits(ctx: Context) -> list[Result]:
    """The environment's file system fits the account's FSx for Lustre storage quotas next to the file systems
    already there (its own, from an earlier deploy of the same stack, counted once)."""
    name = "fsx-limits"
    fsx = ctx.env.fsx
    if fsx is None:
        return [Result(name, SKIP, f"{ctx.env.name} has no file system (cdk.json fsx)")]
    try:
        stack = templates.stack_with(ctx.stacks, "AWS::FSx::FileSystem")
    except templates.NoAssembly:
        stack = None
    deployment, size = fsx.deployment_type, fsx.storage_capacity_gib
    quotas = [q for q in service_quotas(ctx, "fsx").values() if _lustre_quota_applies(q.name, deployment)]
    if not quotas:
        return [Result(name, SKIP, f"Service Quotas lists no FSx for Lustre storage-capacity quota in {ctx.env.region} "
                       "(FSx then refuses only at deploy)")]
    others = [fs for fs in _lustre_file_systems(ctx) if not _owned_by(fs, stack)]
    used = sum(int(fs.get("StorageCapacity", 0)) for fs in others)
    rows = [Result(name, FAIL, f"{ctx.env.name}'s {size} GiB {deployment} file system + {used} GiB of other Lustre "
                   f"file systems exceeds '{q.name}' ({q.value:g} GiB): delete unused file systems or "
                   f"{_increase(ctx, 'fsx', q, used + size)}") for q in quotas if used + size > q.value]
    return rows or [Result(name, PASS, f"{size} GiB {deployment} + {used} GiB in use within "
                           + ", ".join(f"'{q.name}' ({q.value:g} GiB)" for q in quotas))]
