"""What the training VPC's DNS firewall admits (how each environment runs it is cdk.json's: compiler.inputs.dns_firewall).

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
        # The Secrets Manager endpoint's name: a workload's `secrets:` are read at start (compiler/facts/secret_refs.py).
        "Secrets Manager": (f"secretsmanager.{r}.amazonaws.com",),
        # The file system's DNS name, <file system id>.fsx.<region>.amazonaws.com, which the Lustre client mounts.
        "FSx for Lustre": (f"*.fsx.{r}.amazonaws.com",),
        # The instances' own names (ip-10-0-1-5.<region>.compute.internal; ec2.internal in us-east-1), which MPI,
        # NCCL and sshd may resolve, and the search-domain forms of the job's host names (algo-1.<domain>).
        "VPC names": ("*.compute.internal", "*.ec2.internal"),
        "Reverse lookups of private addresses": _PRIVATE_REVERSE,
    }
