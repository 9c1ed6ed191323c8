"""What the training VPC's DNS firewall admits, and how each environment runs it.

Why a DNS firewall: the training subnet has no internet route, but the VPC's resolver answers any public name, and a
query for `<data>.attacker.example` carries data to whoever runs that domain's name servers (exfiltration by DNS).
Route 53 Resolver DNS Firewall admits the names below and answers every other query NXDOMAIN (as if it did not
exist, so a resolver's search list goes on as usual), or, in ALERT mode, lets it through and counts it.

What jobs resolve (each name is AWS's, answered by AWS's name servers, so a query for one carries nothing to a third
party): the services of the VPC endpoints (compiler.compilation.network.INTERFACE_ENDPOINT_SERVICES, and S3's gateway), the FSx
file system's DNS name, the instances' own VPC names, and reverse lookups of private addresses. Where we could not
tell whether a name is needed we admit it and say why (the conservative side: a missing name fails jobs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from compiler.errors import Problem, SpecError

CONTEXT_KEY = "training-platform:dns-firewall"
MODES = ("block", "alert", "off")
# RFC 1918's private ranges in reverse-lookup form (RFC 1035, section 3.5): the VPC resolver answers them itself.
_PRIVATE_REVERSE = ("*.10.in-addr.arpa", "*.168.192.in-addr.arpa",
                    *(f"*.{octet}.172.in-addr.arpa" for octet in range(16, 32)))


def allowed_domains(region: str) -> dict[str, tuple[str, ...]]:
    """The names jobs of a VPC in `region` need, by why (the keys are what the docs list)."""
    r = region
    return {
        # Gateway endpoint; virtual-hosted buckets (ECR's layer bucket too); the global and dual-stack names the SDKs
        # use in some regions and configurations (unsure which the platform's own download uses: admitted).
        "S3": (f"s3.{r}.amazonaws.com", f"*.s3.{r}.amazonaws.com", f"s3.dualstack.{r}.amazonaws.com",
               f"*.s3.dualstack.{r}.amazonaws.com", "s3.amazonaws.com", "*.s3.amazonaws.com"),
        # ECR's API and registry names (<account>.dkr.ecr.<region>.amazonaws.com), and the older ecr.<region> API name.
        "ECR": (f"api.ecr.{r}.amazonaws.com", f"*.dkr.ecr.{r}.amazonaws.com", f"ecr.{r}.amazonaws.com"),
        "CloudWatch Logs": (f"logs.{r}.amazonaws.com",),
        "CloudWatch metrics": (f"monitoring.{r}.amazonaws.com",),
        # The regional name, and the global one older SDKs default to (its interface endpoint does not serve it).
        "STS": (f"sts.{r}.amazonaws.com", "sts.amazonaws.com"),
        # The SageMaker API endpoint's name, and SageMaker's metrics service (the toolkit may report through it).
        "SageMaker": (f"api.sagemaker.{r}.amazonaws.com", f"metrics.sagemaker.{r}.amazonaws.com"),
        # The Secrets Manager endpoint's name: a workload's `secrets:` are read at start (compiler/compilation/secret_refs.py).
        "Secrets Manager": (f"secretsmanager.{r}.amazonaws.com",),
        # The file system's DNS name, <file system id>.fsx.<region>.amazonaws.com, which the Lustre client mounts.
        "FSx for Lustre": (f"*.fsx.{r}.amazonaws.com",),
        # The instances' own names (ip-10-0-1-5.<region>.compute.internal; ec2.internal in us-east-1), which MPI,
        # NCCL and sshd may resolve, and the search-domain forms of the job's host names (algo-1.<domain>).
        "VPC names": ("*.compute.internal", "*.ec2.internal"),
        "Reverse lookups of private addresses": _PRIVATE_REVERSE,
    }


@dataclass(frozen=True)
class DnsFirewallSettings:
    """One environment's firewall: `mode` block, alert or off; query logging; extra names its jobs need."""

    mode: str
    query_logging: bool = False
    allow: tuple[str, ...] = ()

    @property
    def action(self) -> str:
        """The catch-all rule's action."""
        return self.mode.upper()


def settings_for(env_name: str, production: bool, context: Mapping[str, Any] | None) -> DnsFirewallSettings:
    """The environment's settings from cdk.json's `training-platform:dns-firewall` (by environment name); default:
    block in production, alert elsewhere; query logging where it alerts. Raises SpecError naming the key and the
    fix."""
    default = "block" if production else "alert"
    raw = (context or {}).get(env_name, {})
    where = f"{CONTEXT_KEY}.{env_name}"
    if not isinstance(raw, Mapping) or set(raw) - {"mode", "query_logging", "allow"}:
        _refuse(where, f"expected an object with mode ({', '.join(MODES)}), query_logging (true or "
                         "false) and allow (a list of domain names)")
    mode = raw.get("mode", default)
    if mode not in MODES:
        _refuse(f"{where}.mode", f"{mode!r}; use one of {', '.join(MODES)}")
    logging = raw.get("query_logging", mode == "alert")  # what ALERT lets through is read in the query logs
    if not isinstance(logging, bool):
        _refuse(f"{where}.query_logging", f"{logging!r}; use true or false")
    allow = raw.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(d, str) and _domain(d) for d in allow):
        _refuse(f"{where}.allow", "a list of domain names, each 1-255 characters of letters, digits, '-' and "
                         "'.', optionally starting with '*.' (e.g. huggingface.co, *.huggingface.co)")
    return DnsFirewallSettings(mode=mode, query_logging=logging, allow=tuple(allow))


def _refuse(where: str, message: str) -> NoReturn:
    raise SpecError(Problem("cdk.json", where, message))


def _domain(name: str) -> bool:
    bare = name[2:] if name.startswith("*.") else name
    labels = bare.split(".")
    return 0 < len(name) <= 255 and all(
        label and len(label) <= 63 and all(c.isascii() and (c.isalnum() or c == "-") for c in label)
        for label in labels)
