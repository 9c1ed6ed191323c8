"""Deployment environments (dev, prod, ...) as declared in cdk.json, and the AZ lookups cached beside it.

The CDK app, the CLI and the tests read environments only through this module, so one reading of cdk.json is
the source of truth for account, region, Availability Zone, network size, storage, what the environment grants its
workloads by name (datasets, secrets, keys: compiler/inputs/grants.py), policies and the DNS firewall
(`training-platform:environments`, `training-platform:dns-firewall`). Paths are
given by the caller (see `compiler.inputs.project`); nothing here knows where the repository is.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from compiler.errors import Problem, SpecError
from compiler.inputs.dns_firewall import DnsFirewallSettings, read_dns_firewall, unknown_environments
from compiler.inputs.grants import Dataset, read_datasets, read_key_grants, read_secret_grants
from compiler.inputs.reader import Findings, Reader

CONTEXT_KEY = "training-platform:environments"

FSX_DEPLOYMENT_TYPES = ("SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2")
PERSISTENT_2_THROUGHPUTS = (125, 250, 500, 1000)
# What an environment that leaves a setting out gets (README.md's environments table, docs/platform.md's costs):
# stated once here, for the Environment fields and the cdk.json reader alike.
DEFAULT_VPC_CIDR = "10.0.0.0/16"
DEFAULT_TRAINING_SUBNET_MASK = 24
DEFAULT_LOG_RETENTION_DAYS = 30
PRODUCTION_LOG_RETENTION_DAYS = 365
DEFAULT_CHECKPOINT_EXPIRATION_DAYS = 30
# Workload stacks per environment (see compiler.compilation.stack_layout). CloudFormation takes at most 2,000 stacks per account
# and region (default quota): the ceiling leaves room for everything else there.
DEFAULT_WORKLOAD_SHARDS = 64
MAX_WORKLOAD_SHARDS = 1000
# monthly_budget_usd: AWS Budgets takes a decimal amount ("NumericValue", no sign or exponent); cents are its unit.
MIN_BUDGET_USD = 0.01
MAX_BUDGET_USD = 1_000_000_000
_ACCOUNT = r"\d{12}"
_REGION = r"[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d"
_AZ_ID = r"[a-z]{2,4}\d-az\d+"
_ZONE_NAME = re.compile(r"[a-z0-9-]{1,64}")  # us-east-1a, us-west-2-lax-1a (a Local Zone)
_NAME = r"[a-z][a-z0-9-]{0,15}"
_BUCKET = r"(?!xn--)(?!.*-s3alias$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
_PLAN_ARN = r"arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:training-plan/[A-Za-z0-9-]+"
# FSx for Lustre: at most 8 data repository associations per file system (FSx API reference,
# CreateDataRepositoryAssociation). PERSISTENT_2 links one per dataset (`datasets`, compiler/inputs/grants.py); the
# other types keep their whole-bucket ImportPath (platform_constructs/lustre.py).
MAX_FSX_DATASETS = 8


@dataclass(frozen=True)
class FsxSettings:
    """FSx for Lustre sizing for one environment (which datasets it links: the environment's `datasets`)."""

    deployment_type: str
    storage_capacity_gib: int
    per_unit_storage_throughput: int | None = None
    data_compression_type: str | None = None
    automatic_backup_retention_days: int | None = None


@dataclass(frozen=True)
class TrainingPlan:
    """A SageMaker training plan (reserved capacity) this environment may use, with what it reserves."""

    name: str
    arn: str
    instance_type: str
    instance_count: int


@dataclass(frozen=True)
class Environment:
    """One deployment target, pinned to a single Availability Zone, with its network sized here (not by specs)."""

    name: str
    account: str
    region: str
    availability_zone: str | None
    availability_zone_id: str | None = None
    production: bool = False
    vpc_cidr: str = DEFAULT_VPC_CIDR
    training_subnet_mask: int = DEFAULT_TRAINING_SUBNET_MASK
    nat_gateway: bool = False
    removal_policy: str = "retain"
    fsx: FsxSettings | None = None
    # What the environment grants its workloads by name (compiler/inputs/grants.py): the data bucket's datasets (over
    # S3 and FSx), secrets (ARN -> readers) and customer keys (ARN -> users).
    datasets: Mapping[str, Dataset] = field(default_factory=dict)
    secrets: Mapping[str, frozenset[str]] = field(default_factory=dict)
    kms_keys: Mapping[str, frozenset[str]] = field(default_factory=dict)
    checkpoint_expiration_days: int = DEFAULT_CHECKPOINT_EXPIRATION_DAYS
    notification_emails: tuple[str, ...] = ()
    external_data_buckets: tuple[str, ...] = ()
    training_plans: Mapping[str, TrainingPlan] = field(default_factory=dict)
    encrypt_inter_container_traffic: bool = False
    log_retention_days: int = DEFAULT_LOG_RETENTION_DAYS
    workload_shards: int = DEFAULT_WORKLOAD_SHARDS
    # Which workloads without an `environments:` block deploy here: None (`all`, the default), or exactly these
    # names (`none` is the empty set). A workload whose block names the environment deploys here either way.
    default_workloads: frozenset[str] | None = None
    monthly_budget_usd: float | None = None  # an AWS Budgets cost budget, notifying the runs topic (None: no budget)
    # The training VPC's DNS firewall (cdk.json's training-platform:dns-firewall): block in production, alert elsewhere.
    dns_firewall: DnsFirewallSettings = field(default_factory=lambda: DnsFirewallSettings(mode="alert",
                                                                                          query_logging=True))

    def takes_by_default(self, workload: str) -> bool:
        """Whether a workload that names no environments deploys here."""
        return self.default_workloads is None or workload in self.default_workloads

    @property
    def has_fsx(self) -> bool:
        return self.fsx is not None

    @property
    def partition(self) -> str:
        if self.region.startswith("cn-"):
            return "aws-cn"
        return "aws-us-gov" if "-gov-" in self.region else "aws"

    @property
    def training_subnet_addresses(self) -> int:
        return 2 ** (32 - self.training_subnet_mask)

    def context_lookup_key(self) -> str:
        """The key under which the CDK caches this account's and region's Availability Zones."""
        return f"availability-zones:account={self.account}:region={self.region}"


# SageMaker's log group for training jobs: one per account and region, created by SageMaker and shared by every team
# there; the platform sets nothing on it, no key and no retention (platform_constructs/training_jobs.py).
TRAINING_LOG_GROUP = "/aws/sagemaker/TrainingJobs"

_KNOWN_KEYS = {
    "account", "region", "availability_zone", "availability_zone_id", "production", "vpc_cidr",
    "training_subnet_mask", "nat_gateway", "removal_policy", "fsx", "checkpoint_expiration_days",
    "notification_emails", "external_data_buckets", "training_plans", "encrypt_inter_container_traffic",
    "log_retention_days", "workload_shards", "default_workloads", "monthly_budget_usd", "datasets", "secrets",
    "kms_keys",
}
_FSX_KEYS = {
    "deployment_type", "storage_capacity_gib", "per_unit_storage_throughput",
    "data_compression_type", "automatic_backup_retention_days", "datasets",
}
# CloudWatch Logs accepts only these retention periods (days).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
                      3288, 3653)


def _fsx(reader: Reader, datasets: Mapping[str, Dataset]) -> FsxSettings | None:
    fsx = reader.child("fsx")
    if fsx is None:
        return None
    fsx.unknown_keys(_FSX_KEYS)
    kind = fsx.string("deployment_type", required=True, choices=FSX_DEPLOYMENT_TYPES)
    capacity = fsx.integer("storage_capacity_gib", low=1, required=True, unit="GiB")
    if capacity and kind in ("SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2") and not (capacity == 1200 or capacity % 2400 == 0):
        fsx.problem("storage_capacity_gib", f"{kind} takes 1200, 2400 or a multiple of 2400 GiB, not {capacity}")
    throughput = fsx.raw.get("per_unit_storage_throughput")
    if kind == "PERSISTENT_2" and throughput not in PERSISTENT_2_THROUGHPUTS:
        fsx.problem("per_unit_storage_throughput",
                    f"PERSISTENT_2 needs one of {', '.join(map(str, PERSISTENT_2_THROUGHPUTS))} MB/s/TiB")
    if kind in ("SCRATCH_1", "SCRATCH_2") and throughput is not None:
        fsx.problem("per_unit_storage_throughput", f"not used by {kind}; remove it")
    backups = fsx.integer("automatic_backup_retention_days", low=0, high=90)
    if kind in ("SCRATCH_1", "SCRATCH_2") and backups:
        fsx.problem("automatic_backup_retention_days", f"{kind} file systems cannot be backed up; use PERSISTENT_2 or "
                    "remove it")
    compression = fsx.string("data_compression_type", choices=("NONE", "LZ4"))
    _fsx_datasets(reader, fsx, str(kind), datasets)
    linked = "the whole data bucket (ImportPath)" if kind == "PERSISTENT_1" else (
        "each dataset (a data repository association)" if kind == "PERSISTENT_2" and datasets else None)
    if backups and linked:
        # FSx for Lustre user guide, "Using data repositories": file system backups aren't supported on file systems
        # linked to an S3 data repository (CreateBackup in the API reference says the same).
        fsx.problem("automatic_backup_retention_days", f"FSx takes no backups of a file system linked to S3, and "
                    f"{kind} here is linked to {linked}; the data lives in the data bucket: set 0 (or remove it)"
                    + (f", or remove {reader.where('datasets')}" if kind == "PERSISTENT_2" else ""))
    return FsxSettings(deployment_type=str(kind), storage_capacity_gib=capacity or 0,
                       per_unit_storage_throughput=throughput if isinstance(throughput, int) else None,
                       data_compression_type=compression, automatic_backup_retention_days=backups)


def _fsx_datasets(reader: Reader, fsx: Reader, kind: str, datasets: Mapping[str, Dataset]) -> None:
    """The environment's datasets, as the file system links them: PERSISTENT_2 one association each, at most 8."""
    if fsx.has("datasets"):
        fsx.problem("datasets", "datasets are the environment's, read over S3 and FSx alike: move this block to "
                    f"{reader.where('datasets')} ({{<name>: {{readers: [<workload>, ...]}}}})")
    if kind == "PERSISTENT_2" and len(datasets) > MAX_FSX_DATASETS:
        reader.problem("datasets", f"has {len(datasets)} datasets, and the PERSISTENT_2 file system links each by a "
                       f"data repository association, at most {MAX_FSX_DATASETS} per file system: group them under "
                       "fewer names, or use another environment")


def _network(name: str, reader: Reader) -> tuple[str, int]:
    cidr = reader.string("vpc_cidr", default=DEFAULT_VPC_CIDR)
    mask = reader.integer("training_subnet_mask", low=16, high=28, default=DEFAULT_TRAINING_SUBNET_MASK)
    try:
        network = ipaddress.ip_network(cidr)
    except ValueError:
        reader.problem("vpc_cidr", f"{cidr!r} is not an IPv4 network like 10.20.0.0/16")
        return cidr, mask
    if network.version != 4 or not 16 <= network.prefixlen <= 24 or not network.is_private:
        reader.problem("vpc_cidr", f"{cidr} must be a private IPv4 block from /16 to /24 (a VPC's allowed sizes)")
    elif mask < network.prefixlen + 1:
        reader.problem("training_subnet_mask", f"/{mask} does not fit twice in the VPC {cidr} (the subnet layout keeps "
                       f"room for a public subnet); use /{network.prefixlen + 1} or smaller, or a larger vpc_cidr")
    return cidr, mask


def _training_plans(reader: Reader) -> dict[str, TrainingPlan]:
    plans = reader.child("training_plans")
    if plans is None:
        return {}
    found = {}
    for plan_name in plans.raw:
        plan = plans.child(str(plan_name))
        if plan is None:
            continue
        plan.unknown_keys({"arn", "instance_type", "instance_count"})
        arn = plan.string("arn", required=True, pattern=_PLAN_ARN,
                          explain="must be a training plan ARN, arn:aws:sagemaker:<region>:<account>:training-plan/<name>")
        instance_type = plan.string("instance_type", required=True, pattern=r"ml\.[a-z0-9-]+\.[a-z0-9]+",
                                    explain="the instance type the plan reserves, e.g. ml.p5.48xlarge")
        count = plan.integer("instance_count", low=1, required=True)
        if arn and instance_type and count:
            found[str(plan_name)] = TrainingPlan(str(plan_name), arn, instance_type, count)
    return found


def _default_workloads(reader: Reader) -> frozenset[str] | None:
    """`all` (default), `none`, or a list of workload names: which workloads without `environments:` deploy here."""
    value = reader.raw.get("default_workloads", "all")
    if value == "all":
        return None
    if value == "none":
        return frozenset()
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return frozenset(value)
    reader.problem("default_workloads", "must be all (every workload that names no environments deploys here), none "
                   "(only workloads whose environments: names this one) or a list of workload names, "
                   f"not {value!r}")
    return None


def _zone(reader: Reader, region: str) -> tuple[str | None, str | None]:
    """The pinned Availability Zone, by name and/or ID: the training subnet and the file system live in exactly one."""
    az = reader.string("availability_zone")
    az_id = reader.string("availability_zone_id", pattern=_AZ_ID, explain="is not an AZ ID like use1-az4")
    if az is None and az_id is None:
        reader.problem("availability_zone", "pin exactly one Availability Zone: set availability_zone (e.g. us-east-1a) "
                       "and/or availability_zone_id")
    if az is not None and region and not (az.startswith(region) and len(az) == len(region) + 1 and az[-1].isalpha()):
        reader.problem("availability_zone", f"'{az}' is not one Availability Zone of {region} (expected {region} "
                       "followed by one letter)")
    return az, az_id


def _removal_policy(reader: Reader, production: bool) -> str:
    """retain (default) or destroy; a production environment may not destroy its data with its stacks."""
    removal = reader.string("removal_policy", choices=("retain", "destroy"), default="retain") or "retain"
    if production and removal == "destroy":
        reader.problem("removal_policy", "a production environment must retain its data: set removal_policy to retain")
    return removal


def _notification_emails(reader: Reader) -> tuple[str, ...]:
    """Subscribers of the runs topic (run results, alarms, the budget); none rather than a list with a mistake in it."""
    emails = reader.strings("notification_emails") or ()
    if any("@" not in e for e in emails):
        reader.problem("notification_emails", "must be a list of e-mail addresses")
        return ()
    return tuple(emails)


def _external_data_buckets(reader: Reader) -> tuple[str, ...]:
    """Other accounts' buckets that specs may read: names, because the role and endpoint policies name each bucket."""
    buckets = reader.strings("external_data_buckets",
                             explain="bucket names (not URIs) that workloads of this environment may read") or ()
    for bucket in buckets:
        if not re.fullmatch(_BUCKET, bucket):
            reader.problem("external_data_buckets", f"{bucket!r} is not an S3 bucket name (give the name, not s3://...)")
    return tuple(buckets)


def _log_retention_days(reader: Reader, production: bool) -> int:
    """How long every log group keeps its logs: one of the periods CloudWatch offers, a year by default in production."""
    retention = reader.integer("log_retention_days", low=1,
                               default=PRODUCTION_LOG_RETENTION_DAYS if production else DEFAULT_LOG_RETENTION_DAYS)
    if retention not in LOG_RETENTION_DAYS:
        reader.problem("log_retention_days", f"CloudWatch Logs keeps logs for one of {', '.join(map(str, LOG_RETENTION_DAYS))} "
                       f"days, not {retention}")
    return retention


def _one(name: str, reader: Reader) -> Environment:
    """One environment's block, its keys read in one fixed order: the problems of a block are always listed alike."""
    reader.unknown_keys(_KNOWN_KEYS)
    account = reader.string("account", required=True, pattern=_ACCOUNT, explain="must be a 12-digit AWS account id "
                            "(as text)") or ""
    region = reader.string("region", required=True, pattern=_REGION,
                           explain="must be a region name like us-east-1") or ""
    az, az_id = _zone(reader, region)
    production = bool(reader.boolean("production", default=False))
    removal = _removal_policy(reader, production)
    emails = _notification_emails(reader)
    buckets = _external_data_buckets(reader)
    cidr, mask = _network(name, reader)
    retention = _log_retention_days(reader, production)
    budget = reader.number("monthly_budget_usd", low=MIN_BUDGET_USD, high=MAX_BUDGET_USD)
    datasets = read_datasets(reader)
    return Environment(
        monthly_budget_usd=budget,
        name=name, account=account, region=region, availability_zone=az, availability_zone_id=az_id,
        production=production, vpc_cidr=cidr, training_subnet_mask=mask,
        nat_gateway=bool(reader.boolean("nat_gateway", default=False)), removal_policy=removal,
        fsx=_fsx(reader, datasets), datasets=datasets, secrets=read_secret_grants(reader, account, region),
        kms_keys=read_key_grants(reader, account, region),
        checkpoint_expiration_days=reader.integer("checkpoint_expiration_days", low=1,
                                                  default=DEFAULT_CHECKPOINT_EXPIRATION_DAYS),
        notification_emails=emails, external_data_buckets=buckets,
        training_plans=_training_plans(reader),
        encrypt_inter_container_traffic=bool(reader.boolean("encrypt_inter_container_traffic", default=production)),
        log_retention_days=retention,
        workload_shards=reader.integer("workload_shards", low=1, high=MAX_WORKLOAD_SHARDS,
                                       default=DEFAULT_WORKLOAD_SHARDS) or DEFAULT_WORKLOAD_SHARDS,
        default_workloads=_default_workloads(reader),
    )


def parse_environments(raw: Any, source: str = "cdk.json", firewall: Any = None) -> dict[str, Environment]:
    """Turn the cdk.json context blocks (the environments, and each one's DNS firewall) into checked Environment
    objects, or raise SpecError listing every problem."""
    findings = Findings(source)
    if not isinstance(raw, Mapping) or not raw:
        raise SpecError(Problem(source, f"context.{CONTEXT_KEY}", "must map environment names to settings"))
    envs: dict[str, Environment] = {}
    for name, settings in raw.items():
        if not re.fullmatch(_NAME, str(name)):
            findings.problem(str(name), "environment names are 1-16 lowercase letters, digits or hyphens, starting "
                             "with a letter")
        if not isinstance(settings, Mapping):
            findings.problem(str(name), "must be an object")
            continue
        env = _one(str(name), Reader(settings, findings, prefix=f"{name}."))
        envs[str(name)] = replace(env, dns_firewall=read_dns_firewall(env.name, env.production, firewall, findings))
    unknown_environments(firewall, set(envs), findings)
    _one_environment_per_account_and_region(envs, findings)
    if findings.problems:
        raise SpecError(findings.problems)
    return envs


def _one_environment_per_account_and_region(envs: Mapping[str, Environment], findings: Findings) -> None:
    """A training job's name is `<base_job_name>-<run id>-<attempt>` and its log streams in SageMaker's one log group
    of the account and region are named after it: nothing in either says which environment ran it. Each environment's
    roles are held to their workloads' jobs and streams by those names, so two environments in one account and region
    would reach each other's jobs (stop them, write their progress). (They would agree on the log group itself: no
    environment sets anything on it.)"""
    seen: dict[tuple[str, str], str] = {}
    for env in envs.values():
        first = seen.setdefault((env.account, env.region), env.name)
        if first != env.name:
            findings.problem(f"{env.name}.region", f"environments {first} and {env.name} both deploy to account "
                             f"{env.account} in {env.region}: training job names (and their log streams in "
                             f"{TRAINING_LOG_GROUP}) carry the workload's base_job_name but not the environment, so the "
                             f"roles of each, scoped by those names, would reach the other's jobs; give {env.name} its "
                             "own account or region")


def cached_zones(context: Mapping[str, Any], env: Environment) -> list[str] | None:
    """The Availability Zones the CDK cached for the environment's account and region, or None when not cached as the
    lookup writes them (a list of zone names: lowercase letters, digits and dashes)."""
    zones = context.get(env.context_lookup_key())
    if isinstance(zones, list) and zones and all(isinstance(z, str) and _ZONE_NAME.fullmatch(z) for z in zones):
        return list(zones)
    return None


def zone_problems(context: Mapping[str, Any], envs: Mapping[str, Environment], source: str = "cdk.context.json") -> list[Problem]:
    """Each environment's pinned AZ must be in its account's cached lookup: never synthesize an unverified zone."""
    problems = []
    for env in envs.values():
        zones = cached_zones(context, env)
        if zones is None and env.context_lookup_key() in context:
            problems.append(Problem(source, env.context_lookup_key(), f"environment {env.name}: is not a list of "
                                    "Availability Zone names, as the lookup writes it; run `trainctl lookup-zones --env "
                                    f"{env.name}` again with credentials for account {env.account}, then commit {source}"))
        elif zones is None:
            problems.append(Problem(source, env.context_lookup_key(), f"environment {env.name}: the Availability Zones of "
                                    f"account {env.account} in {env.region} are not cached; run `trainctl lookup-zones "
                                    f"--env {env.name}` with credentials for that account, then commit {source}"))
        elif env.availability_zone is not None and env.availability_zone not in zones:
            problems.append(Problem("cdk.json", f"{env.name}.availability_zone", f"{env.availability_zone} is not one of "
                                    f"account {env.account}'s zones in {env.region} ({', '.join(zones)}); pick one of "
                                    f"them, or refresh the lookup with `trainctl lookup-zones --env {env.name}`"))
    return problems
