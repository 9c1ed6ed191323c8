"""What the synthesized templates of one environment say (cdk.out/assembly-ENV, read by trainctl/common/assembly.py):
the one source for the bootstrap version they check, the names they fix and the network they create, so preflight
never restates the stacks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainctl.common.assembly import Stack, environment_stacks

DEFAULT_VERSION_PARAMETER = "/cdk-bootstrap/hnb659fds/version"


class NoAssembly(Exception):
    """cdk.out holds no synthesized templates for the environment."""


def stacks(cdk_out: Path, env: str) -> list[Stack]:
    """The environment's stacks from the nested assembly `assembly-<env>` that `cdk synth` writes."""
    try:
        found = environment_stacks(cdk_out, env)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise NoAssembly(f"no synthesized templates for {env} in {cdk_out} ({type(error).__name__}); run "
                         "`scripts/synth.sh` (or `npx cdk synth`) first") from None
    if not found:
        raise NoAssembly(f"{cdk_out / f'assembly-{env}'} holds no stack; run `scripts/synth.sh` first")
    return found


def required_bootstrap_version(found: list[Stack]) -> int | None:
    """The lowest bootstrap version every template's `CheckBootstrapVersion` rule accepts (None: no rule)."""
    required = None
    for stack in found:
        rule = stack.template.get("Rules", {}).get("CheckBootstrapVersion")
        if not rule:
            continue
        for assertion in rule.get("Assertions", []):
            refused = assertion["Assert"]["Fn::Not"][0]["Fn::Contains"][0]
            version = max(int(v) for v in refused) + 1
            required = version if required is None else max(required, version)
    return required


def version_parameter(found: list[Stack]) -> str:
    """The SSM parameter the templates read the bootstrap version from (it names the bootstrap qualifier)."""
    for stack in found:
        default = stack.template.get("Parameters", {}).get("BootstrapVersion", {}).get("Default")
        if isinstance(default, str):
            return default
    return DEFAULT_VERSION_PARAMETER


# Resource types whose name property the templates may fix, with that property (a dotted path inside Properties).
NAME_PROPERTIES = {
    "AWS::Logs::LogGroup": "LogGroupName",
    "AWS::StepFunctions::StateMachine": "StateMachineName",
    "AWS::SNS::Topic": "TopicName",
    "AWS::CloudWatch::Dashboard": "DashboardName",
    "AWS::CloudWatch::Alarm": "AlarmName",
    "AWS::S3::Bucket": "BucketName",
    "AWS::ECR::Repository": "RepositoryName",
    "AWS::IAM::Role": "RoleName",
    "AWS::Scheduler::Schedule": "Name",  # platform_constructs/schedule.py: `<env>-<workload>`
    "AWS::Budgets::Budget": "Budget.BudgetName",  # platform_constructs/budget.py: `<env>-training`
}


@dataclass(frozen=True)
class Named:
    stack: str
    kind: str
    name: str


def fixed_names(found: list[Stack]) -> list[Named]:
    """Every resource whose name the templates fix as plain text: CloudFormation cannot create one that exists."""
    named = []
    for stack in found:
        for kind, prop in NAME_PROPERTIES.items():
            for resource in stack.resources(kind):
                name: Any = resource.get("Properties") or {}
                for part in prop.split("."):
                    name = name.get(part) if isinstance(name, dict) else None
                if isinstance(name, str):
                    named.append(Named(stack.stack_name, kind, name))
    return named


@dataclass(frozen=True)
class Network:
    stack: str
    vpcs: int
    subnets: int
    interface_endpoints: int


def network(found: list[Stack]) -> Network | None:
    """What the stack holding the VPC creates (None: the environment creates no VPC)."""
    for stack in found:
        vpcs = len(stack.resources("AWS::EC2::VPC"))
        if vpcs:
            endpoints = [r for r in stack.resources("AWS::EC2::VPCEndpoint")
                         if (r.get("Properties") or {}).get("VpcEndpointType") == "Interface"]
            return Network(stack.stack_name, vpcs, len(stack.resources("AWS::EC2::Subnet")), len(endpoints))
    return None


def stack_with(found: list[Stack], kind: str) -> str | None:
    """The name of the stack that creates a resource of this type."""
    return next((s.stack_name for s in found if s.resources(kind)), None)
