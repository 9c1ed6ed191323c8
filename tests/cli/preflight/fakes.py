"""What the preflight tests stand on: a boto3-like session whose clients are real botocore clients behind Stubbers
(every response checked against botocore's model), a small synthesized assembly written as literal JSON, and a fake
`docker` program on a PATH of its own."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import boto3
from botocore.stub import Stubber

from tests.project import ENVIRONMENTS
from trainctl.preflight.checks import Aws, Context

DEV = ENVIRONMENTS["dev"]  # account 111111111111, us-east-1, SCRATCH_2 1200 GiB file system


class StubbedSession:
    """`session.client(service)` returns one stubbed client per service; `stub(service)` queues its answers.

    Services named in `moto` get a plain client instead, answered by moto (inside `mock_aws`): moto's CloudFormation
    needs packages this project does not install, so the moto tests stub CloudFormation and nothing else.
    """

    def __init__(self, moto: tuple[str, ...] = ()) -> None:
        self.moto = moto
        self.clients: dict[str, Any] = {}
        self.stubbers: dict[str, Stubber] = {}
        self.called: set[str] = set()  # "service:Operation" of every call made through a stubbed client
        self._boto = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                   region_name=DEV.region)

    def client(self, service: str, **kwargs: Any) -> Any:
        if service in self.moto:
            return boto3.client(service, region_name=DEV.region)
        self.stub(service)
        return self.clients[service]

    def stub(self, service: str) -> Stubber:
        if service not in self.stubbers:
            self.clients[service] = self._boto.client(service, region_name=DEV.region)
            self.clients[service].meta.events.register(
                "before-parameter-build", lambda model, **_: self.called.add(f"{service}:{model.name}"))
            self.stubbers[service] = Stubber(self.clients[service])
            self.stubbers[service].activate()
        return self.stubbers[service]

    def verify(self) -> None:
        """Every queued answer was asked for."""
        for stubber in self.stubbers.values():
            stubber.assert_no_pending_responses()


def context(session: StubbedSession, cdk_out: Path, configured_region: str | None = None, **fields: Any) -> Context:
    fields.setdefault("credentials_ok", True)
    return Context(env=DEV, aws=Aws(DEV, session=session, configured_region=configured_region),
                   cdk_out=cdk_out, **fields)


def _rule(required: int) -> dict[str, Any]:
    refused = [str(v) for v in range(1, required)]
    return {"CheckBootstrapVersion": {"Assertions": [{"Assert": {"Fn::Not": [{"Fn::Contains": [
        refused, {"Ref": "BootstrapVersion"}]}]}, "AssertDescription": f"CDK bootstrap stack version {required} "
        "required."}]}}


def write_assembly(cdk_out: Path, required: int = 6, qualifier: str = "hnb659fds") -> Path:
    """cdk.out/assembly-dev with three stacks: fixed names (Runs), the network, the file system (Storage)."""
    parameters = {"BootstrapVersion": {"Type": "AWS::SSM::Parameter::Value<String>",
                                       "Default": f"/cdk-bootstrap/{qualifier}/version"}}
    templates = {
        "dev-Runs": {"LogGroup": {"Type": "AWS::Logs::LogGroup",
                                  "Properties": {"LogGroupName": "/aws/vendedlogs/states/dev-training"}},
                     "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "dev-training-runs"}},
                     "Generated": {"Type": "AWS::S3::Bucket", "Properties": {}}},
        "dev-Network": {"Vpc": {"Type": "AWS::EC2::VPC"}, "Subnet": {"Type": "AWS::EC2::Subnet"},
                        "S3": {"Type": "AWS::EC2::VPCEndpoint", "Properties": {"VpcEndpointType": "Gateway"}},
                        "Ecr": {"Type": "AWS::EC2::VPCEndpoint", "Properties": {"VpcEndpointType": "Interface"}},
                        "Logs": {"Type": "AWS::EC2::VPCEndpoint", "Properties": {"VpcEndpointType": "Interface"}}},
        "dev-Storage": {"FileSystem": {"Type": "AWS::FSx::FileSystem"}},
    }
    folder = cdk_out / "assembly-dev"
    folder.mkdir(parents=True)
    artifacts = {}
    for name, resources in templates.items():
        file = f"{name.replace('-', '')}.template.json"
        (folder / file).write_text(json.dumps({"Parameters": parameters, "Rules": _rule(required),
                                               "Resources": resources}))
        artifacts[name.replace("-", "")] = {"type": "aws:cloudformation:stack",
                                            "properties": {"templateFile": file, "stackName": name}}
    (folder / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    return cdk_out


def fake_docker(folder: Path, script: str, name: str = "docker") -> Path:
    """A `docker` program that runs `script` (sh), alone on a PATH folder."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return folder


def quota(name: str, code: str, value: float, service: str = "sagemaker") -> dict[str, Any]:
    return {"ServiceCode": service, "QuotaName": name, "QuotaCode": code, "Value": value}


def stub_quotas(session: StubbedSession, service: str, defaults: list[dict[str, Any]],
                applied: list[dict[str, Any]]) -> None:
    """The two Service Quotas listings, in the order `service_quotas` asks (defaults, then applied values)."""
    stub = session.stub("service-quotas")
    stub.add_response("list_aws_default_service_quotas", {"Quotas": defaults}, {"ServiceCode": service})
    stub.add_response("list_service_quotas", {"Quotas": applied}, {"ServiceCode": service})
