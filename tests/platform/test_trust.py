"""Who may assume each role: every trust statement names a service and this account (confused-deputy protection),
including the roles of the CDK's own custom-resource providers and of the image copy function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_kms as kms

from platform_constructs.registry import TrainingImageRepository
from tests.project import ENVIRONMENTS

ENVS = ("dev", "prod")


def roles(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v["Properties"] for k, v in template["Resources"].items() if v["Type"] == "AWS::IAM::Role"}


@pytest.mark.parametrize("env", ENVS)
def test_every_role_trusts_a_service_of_this_account_only(synthesized_app: Any, env: str) -> None:
    account = ENVIRONMENTS[env].account
    seen = 0
    for stack, template in synthesized_app.templates[env].items():
        for logical_id, role in roles(template).items():
            for statement in role["AssumeRolePolicyDocument"]["Statement"]:
                seen += 1
                where = f"{stack}/{logical_id}"
                assert set(statement["Principal"]) == {"Service"}, where
                condition = statement.get("Condition", {})
                source_account = condition.get("StringEquals", {}).get("aws:SourceAccount")
                source_arn = {**condition.get("ArnLike", {}), **condition.get("ArnEquals", {})}.get("aws:SourceArn")
                assert source_account == account or source_arn is not None, f"{where} trusts any account's service"
    assert seen >= 13  # flow logs, custom-resource providers, the image copier, two roles per workload


def test_images_of_one_stack_share_the_copy_role_the_copy_function_runs_with(tmp_path: Path) -> None:
    """cdk-ecr-deployment's function is one per stack and runs with the role of the first copy: a second image's
    push permission must be on that same role, or its copy fails at deploy with AccessDenied."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "Dockerfile").write_text("FROM scratch\n")
    app = cdk.App()
    stack = cdk.Stack(app, "Images", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    for name in ("a", "b"):
        TrainingImageRepository(stack, name.upper(), encryption_key=key, build_context=tmp_path / name)
    resources = app.synth().get_stack_by_name("Images").template["Resources"]

    (function,) = [r for r in resources.values() if r["Type"] == "AWS::Lambda::Function"]
    role = function["Properties"]["Role"]["Fn::GetAtt"][0]
    policies = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::IAM::Policy"]
    pushes = {s["Resource"]["Fn::GetAtt"][0] for p in policies if {"Ref": role} in p["Roles"]
              for s in p["PolicyDocument"]["Statement"] if "ecr:PutImage" in s["Action"]}
    repositories = {k for k, r in resources.items() if r["Type"] == "AWS::ECR::Repository"}
    assert len(repositories) == 2 and pushes == repositories
    group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
    assert resources[group]["Type"] == "AWS::Logs::LogGroup" and "KmsKeyId" in resources[group]["Properties"]
    assert not any("logs:CreateLogGroup" in str(p) for p in policies)
