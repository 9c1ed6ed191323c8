"""Every Lambda function of the app logs to a log group of its own stack with a KMS key and the environment's
retention; none is left to write to the `/aws/lambda/<name>` group Lambda would create without either.

Lambda developer guide, "Configuring advanced logging controls": without `LoggingConfig.LogGroup` a function writes to
`/aws/lambda/<function name>`, created on first write (never expiring, not encrypted with a customer key) when the
role may `logs:CreateLogGroup`, which the managed policy AWSLambdaBasicExecutionRole grants on every group.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.synth
# README, cdk.json: log_retention_days defaults to 365 in production (prod) and 30 elsewhere (dev).
RETENTION = {"dev": 30, "prod": 365}
BASIC_EXECUTION = "policy/service-role/AWSLambdaBasicExecutionRole"


def functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == "AWS::Lambda::Function"}


@pytest.mark.parametrize("env", RETENTION)
def test_every_function_logs_to_its_own_keyed_retained_group(synthesized_app: Any, env: str) -> None:
    seen = 0
    for stack, template in synthesized_app.templates[env].items():
        resources = template["Resources"]
        for logical_id, function in functions(template).items():
            seen += 1
            where = f"{stack}/{logical_id}"
            group_ref = function["Properties"].get("LoggingConfig", {}).get("LogGroup")
            assert isinstance(group_ref, dict) and set(group_ref) == {"Ref"}, f"{where} has no log group of its own"
            group = resources[group_ref["Ref"]]
            assert group["Type"] == "AWS::Logs::LogGroup"
            assert "KmsKeyId" in group["Properties"], f"{where} logs to a group without a key"
            assert group["Properties"].get("RetentionInDays") == RETENTION[env], where
            assert "LogGroupName" not in group["Properties"]  # a generated name, never /aws/lambda/<name>
    assert seen >= 2  # the default security group's and the image copier's (dev: also the bucket emptier's)


@pytest.mark.parametrize("env", RETENTION)
def test_no_function_role_may_create_log_groups_through_the_basic_execution_policy(synthesized_app: Any,
                                                                                   env: str) -> None:
    for stack, template in synthesized_app.templates[env].items():
        for logical_id, resource in template["Resources"].items():
            if resource["Type"] == "AWS::IAM::Role":
                managed = str(resource["Properties"].get("ManagedPolicyArns", []))
                assert BASIC_EXECUTION not in managed, f"{stack}/{logical_id}"


@pytest.mark.parametrize("env", RETENTION)
def test_the_provider_functions_write_streams_to_their_own_group_only(synthesized_app: Any, env: str) -> None:
    for stack, template in synthesized_app.templates[env].items():
        resources = template["Resources"]
        for logical_id, function in functions(template).items():
            if "CustomResourceProviderHandler" not in logical_id:
                continue
            role = function["Properties"]["Role"]["Fn::GetAtt"][0]
            ((policy_id, policy),) = [(k, r["Properties"]) for k, r in resources.items()
                                      if r["Type"] == "AWS::IAM::Policy" and {"Ref": role} in r["Properties"]["Roles"]
                                      and r["Properties"]["PolicyName"] == "WriteOwnLogs"]
            assert policy_id in function.get("DependsOn", []), f"{stack}/{logical_id} may start before it may log"
            (statement,) = policy["PolicyDocument"]["Statement"]
            assert statement["Action"] == ["logs:CreateLogStream", "logs:PutLogEvents"]
            assert statement["Resource"] == {"Fn::GetAtt": [function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"],
                                                            "Arn"]}, f"{stack}/{logical_id}"
