"""Deployment environments (dev, prod, ...) as declared in cdk.json.

Pure Python: the CDK app, the CLI and the tests all read environments through this module, so one
reading of cdk.json is the source of truth for account, region, Availability Zone and storage settings.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.errors import Problem, SpecError

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CDK_JSON = PROJECT_ROOT / "cdk.json"
CONTEXT_KEY = "training-platform:environments"

FSX_DEPLOYMENT_TYPES = ("SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2")
PERSISTENT_2_THROUGHPUTS = (125, 250, 500, 1000)
_ACCOUNT = re.compile(r"^\d{12}$")
_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
_AZ_ID = re.compile(r"^[a-z]{2,4}\d-az\d+$")
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,15}$")


@dataclass(frozen=True)
class FsxSettings:
    """FSx for Lustre sizing for one environment."""

    deployment_type: str
    storage_capacity_gib: int
    per_unit_storage_throughput: int | None = None
    data_compression_type: str | None = None
    automatic_backup_retention_days: int | None = None


@dataclass(frozen=True)
class Environment:
    """One deployment target, pinned to a single Availability Zone."""

    name: str
    account: str
    region: str
    availability_zone: str | None
    availability_zone_id: str | None = None
    production: bool = False
    vpc_cidr: str = "10.0.0.0/16"
    nat_gateway: bool = False
    removal_policy: str = "retain"
    fsx: FsxSettings | None = None
    checkpoint_expiration_days: int = 30
    notification_emails: tuple[str, ...] = field(default_factory=tuple)

    @property
    def has_fsx(self) -> bool:
        return self.fsx is not None


_KNOWN_KEYS = {
    "account", "region", "availability_zone", "availability_zone_id", "production", "vpc_cidr",
    "nat_gateway", "removal_policy", "fsx", "checkpoint_expiration_days", "notification_emails",
}
_FSX_KEYS = {
    "deployment_type", "storage_capacity_gib", "per_unit_storage_throughput",
    "data_compression_type", "automatic_backup_retention_days",
}


def _check_fsx(source: str, name: str, raw: Any, problems: list[Problem]) -> FsxSettings | None:
    if raw is None:
        return None
    where = f"{name}.fsx"
    if not isinstance(raw, dict):
        problems.append(Problem(source, where, "must be an object or null (no file system)"))
        return None
    for key in sorted(set(raw) - _FSX_KEYS):
        problems.append(Problem(source, f"{where}.{key}", f"unknown key; known keys: {', '.join(sorted(_FSX_KEYS))}"))
    kind = raw.get("deployment_type")
    capacity = raw.get("storage_capacity_gib")
    if kind not in FSX_DEPLOYMENT_TYPES:
        problems.append(Problem(source, f"{where}.deployment_type", f"must be one of {', '.join(FSX_DEPLOYMENT_TYPES)}"))
    if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity <= 0:
        problems.append(Problem(source, f"{where}.storage_capacity_gib", "must be a positive integer (GiB)"))
    elif kind in ("SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2") and not (
        capacity == 1200 or (capacity % 2400 == 0)
    ):
        problems.append(Problem(
            source, f"{where}.storage_capacity_gib",
            f"{kind} takes 1200, 2400 or a multiple of 2400 GiB, not {capacity}",
        ))
    throughput = raw.get("per_unit_storage_throughput")
    if kind == "PERSISTENT_2" and throughput not in PERSISTENT_2_THROUGHPUTS:
        problems.append(Problem(
            source, f"{where}.per_unit_storage_throughput",
            f"PERSISTENT_2 needs one of {', '.join(map(str, PERSISTENT_2_THROUGHPUTS))} MB/s/TiB",
        ))
    if kind in ("SCRATCH_1", "SCRATCH_2") and throughput is not None:
        problems.append(Problem(source, f"{where}.per_unit_storage_throughput", f"not used by {kind}; remove it"))
    if kind in ("SCRATCH_1", "SCRATCH_2") and raw.get("automatic_backup_retention_days"):
        problems.append(Problem(
            source, f"{where}.automatic_backup_retention_days",
            f"{kind} file systems cannot be backed up; use PERSISTENT_2 or remove it",
        ))
    compression = raw.get("data_compression_type")
    if compression not in (None, "NONE", "LZ4"):
        problems.append(Problem(source, f"{where}.data_compression_type", "must be NONE or LZ4"))
    return FsxSettings(
        deployment_type=str(kind),
        storage_capacity_gib=capacity if isinstance(capacity, int) else 0,
        per_unit_storage_throughput=throughput,
        data_compression_type=compression,
        automatic_backup_retention_days=raw.get("automatic_backup_retention_days"),
    )


def parse_environments(raw: Any, source: str = "cdk.json") -> dict[str, Environment]:
    """Turn the cdk.json context block into checked Environment objects, or raise SpecError."""
    problems: list[Problem] = []
    if not isinstance(raw, dict) or not raw:
        raise SpecError(Problem(source, f"context.{CONTEXT_KEY}", "must map environment names to settings"))
    envs: dict[str, Environment] = {}
    for name, settings in raw.items():
        if not _NAME.match(name):
            problems.append(Problem(source, name, "environment names are 1-16 lowercase letters, digits or hyphens"))
        if not isinstance(settings, dict):
            problems.append(Problem(source, name, "must be an object"))
            continue
        for key in sorted(set(settings) - _KNOWN_KEYS):
            problems.append(Problem(source, f"{name}.{key}", f"unknown key; known keys: {', '.join(sorted(_KNOWN_KEYS))}"))
        account = str(settings.get("account", ""))
        region = str(settings.get("region", ""))
        az = settings.get("availability_zone")
        az_id = settings.get("availability_zone_id")
        if not _ACCOUNT.match(account):
            problems.append(Problem(source, f"{name}.account", "must be a 12-digit AWS account id (as a string)"))
        if not _REGION.match(region):
            problems.append(Problem(source, f"{name}.region", f"'{region}' is not a region name like us-east-1"))
        if az is None and az_id is None:
            problems.append(Problem(
                source, f"{name}.availability_zone",
                "pin exactly one Availability Zone: set availability_zone (e.g. us-east-1a) and/or availability_zone_id",
            ))
        if az is not None and (not isinstance(az, str) or not az.startswith(region) or len(az) != len(region) + 1):
            problems.append(Problem(
                source, f"{name}.availability_zone",
                f"'{az}' is not one Availability Zone of {region} (expected {region} followed by one letter)",
            ))
        if az_id is not None and (not isinstance(az_id, str) or not _AZ_ID.match(az_id)):
            problems.append(Problem(source, f"{name}.availability_zone_id", f"'{az_id}' is not an AZ ID like use1-az4"))
        removal = settings.get("removal_policy", "retain")
        if removal not in ("retain", "destroy"):
            problems.append(Problem(source, f"{name}.removal_policy", "must be retain or destroy"))
        production = bool(settings.get("production", False))
        if production and removal == "destroy":
            problems.append(Problem(
                source, f"{name}.removal_policy",
                "a production environment must retain its data: set removal_policy to retain",
            ))
        emails = settings.get("notification_emails", [])
        if not isinstance(emails, list) or not all(isinstance(e, str) and "@" in e for e in emails):
            problems.append(Problem(source, f"{name}.notification_emails", "must be a list of e-mail addresses"))
            emails = []
        expiration = settings.get("checkpoint_expiration_days", 30)
        if not isinstance(expiration, int) or isinstance(expiration, bool) or expiration < 1:
            problems.append(Problem(source, f"{name}.checkpoint_expiration_days", "must be a positive number of days"))
        fsx = _check_fsx(source, name, settings.get("fsx"), problems)
        envs[name] = Environment(
            name=name,
            account=account,
            region=region,
            availability_zone=az,
            availability_zone_id=az_id,
            production=production,
            vpc_cidr=str(settings.get("vpc_cidr", "10.0.0.0/16")),
            nat_gateway=bool(settings.get("nat_gateway", False)),
            removal_policy=removal,
            fsx=fsx,
            checkpoint_expiration_days=expiration if isinstance(expiration, int) else 30,
            notification_emails=tuple(emails),
        )
    if problems:
        raise SpecError(problems)
    return envs


def load_environments(cdk_json: Path = CDK_JSON) -> dict[str, Environment]:
    """Read and check every environment declared in cdk.json."""
    data = json.loads(Path(cdk_json).read_text())
    return parse_environments(data.get("context", {}).get(CONTEXT_KEY), source=Path(cdk_json).name)
