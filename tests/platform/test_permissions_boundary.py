"""An organisation that requires a permissions boundary on every role sets it once, in cdk.json's context (README,
"Deploy", step 2): the CDK applies `@aws-cdk/core:permissionsBoundary` to every IAM role created in its scope
(aws-cdk-lib `PermissionsBoundary`, PERMISSIONS_BOUNDARY_CONTEXT_KEY; aws/aws-cdk#22913), the app's own roles and the
CDK's custom-resource providers' alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.inputs.project import Project
from stacks.app import build_app
from tests.project import project_copy

pytestmark = pytest.mark.synth
BOUNDARY = "org-permissions-boundary"


def test_every_role_of_every_stack_gets_the_boundary_named_in_cdk_json(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    settings = json.loads((root / "cdk.json").read_text())
    settings["context"]["@aws-cdk/core:permissionsBoundary"] = {"name": BOUNDARY}
    (root / "cdk.json").write_text(json.dumps(settings))
    outdir = tmp_path / "out"
    build_app(Project(root), outdir=str(outdir), only=["dev"], builtin_validation=False).synth()
    roles = {(path.name, logical): resource["Properties"].get("PermissionsBoundary")
             for path in (outdir / "assembly-dev").glob("*.template.json")
             for logical, resource in json.loads(path.read_text())["Resources"].items()
             if resource["Type"] == "AWS::IAM::Role"}
    assert len(roles) > 10  # the execution and state machine roles of every workload, the functions' roles
    expected = f"arn:aws:iam::111111111111:policy/{BOUNDARY}"  # dev's account (cdk.json)
    assert {role: boundary for role, boundary in roles.items() if _arn(boundary) != expected} == {}


def _arn(value: object) -> object:
    """A boundary as written: the ARN, or the CDK's `Fn::Join` of it with the partition (`aws` in dev's region)."""
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join("aws" if part == {"Ref": "AWS::Partition"} else str(part) for part in parts)
    return value
