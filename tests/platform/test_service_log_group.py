"""SageMaker's log group is never owned by a stack: the Access stack creates it only when missing, applies the
environment's retention and key, never deletes it, and may touch that one group only.

Expected values are literals: the group name (SageMaker developer guide, "Log groups and streams that Amazon SageMaker
AI sends to Amazon CloudWatch Logs"), the error code CreateLogGroup returns for an existing group (CloudWatch Logs API
reference, CreateLogGroup: ResourceAlreadyExistsException), the retention of each environment (cdk.json: 30 days in
dev, 365 in production), and the key-policy condition key (CloudWatch Logs user guide, "Encrypt log data in CloudWatch
Logs using AWS Key Management Service").
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_kms as kms

from platform_constructs.service_log_group import ServiceLogGroup
from tests.platform.conftest import Synth

pytestmark = pytest.mark.synth
GROUP = "/aws/sagemaker/TrainingJobs"
ENVIRONMENTS = {"dev": ("111111111111", "us-east-1", 30), "prod": ("222222222222", "us-west-2", 365)}


def resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def resolve(value: Any) -> Any:
    """Template values with the pseudo parameters and imports these tests need turned into text."""
    if isinstance(value, dict):
        if "Fn::Join" in value:
            delimiter, parts = value["Fn::Join"]
            return delimiter.join(str(resolve(p)) for p in parts)
        if "Ref" in value:
            return {"AWS::Partition": "aws"}.get(value["Ref"], f"<{value['Ref']}>")
        if "Fn::ImportValue" in value:
            return f"<import {value['Fn::ImportValue']}>"
        return {k: resolve(v) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v) for v in value]
    return value


def calls(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each Custom::AWS resource's calls by event (Create, Update, Delete), parsed."""
    found = {}
    for logical_id, resource in resources(template, "Custom::AWS").items():
        props = resource["Properties"]
        found[logical_id] = {event: json.loads(resolve(props[event])) for event in ("Create", "Update", "Delete")
                             if event in props}
    return found


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_group_is_created_only_when_missing_with_retention_and_key(synth: Synth, env: str) -> None:
    template = synth.template(env, "Access")
    assert all(r["Properties"].get("LogGroupName") != GROUP for r in resources(template, "AWS::Logs::LogGroup").values())
    by_action = {}
    for events in calls(template).values():
        assert events["Create"] == events["Update"]  # an update (a new key or retention) applies the settings again
        by_action[events["Create"]["action"]] = events["Create"]
    assert set(by_action) == {"createLogGroup", "putRetentionPolicy", "associateKmsKey"}
    assert all(call["service"] == "CloudWatchLogs" and call["parameters"]["logGroupName"] == GROUP
               for call in by_action.values())
    assert by_action["createLogGroup"]["ignoreErrorCodesMatching"] == "ResourceAlreadyExistsException"
    assert "ignoreErrorCodesMatching" not in by_action["putRetentionPolicy"]
    assert by_action["putRetentionPolicy"]["parameters"]["retentionInDays"] == ENVIRONMENTS[env][2]
    assert by_action["associateKmsKey"]["parameters"]["kmsKeyId"].startswith(f"<import {env}-Storage:")


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_deleting_the_stack_never_deletes_the_group(synth: Synth, env: str) -> None:
    template = synth.template(env, "Access")
    found = calls(template)
    assert len(found) == 3
    for logical_id, events in found.items():
        assert "Delete" not in events, f"{logical_id} calls {events.get('Delete')} on delete"
    settings = [k for k, v in found.items() if v["Create"]["action"] != "createLogGroup"]
    create = next(k for k, v in found.items() if v["Create"]["action"] == "createLogGroup")
    for logical_id in settings:  # retention and key only once the group exists
        assert create in template["Resources"][logical_id]["DependsOn"]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_settings_function_may_touch_that_one_group_only(synth: Synth, env: str) -> None:
    account, region, _ = ENVIRONMENTS[env]
    template = synth.template(env, "Access")
    (function,) = [f for k, f in resources(template, "AWS::Lambda::Function").items() if k.startswith("AWS679f53fa")]
    role = function["Properties"]["Role"]["Fn::GetAtt"][0]
    own_logs = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
    group_arn = f"arn:aws:logs:{region}:{account}:log-group:{GROUP}"
    statements = [s for p in resources(template, "AWS::IAM::Policy").values() if {"Ref": role} in p["Properties"]["Roles"]
                  for s in resolve(p["Properties"]["PolicyDocument"])["Statement"]]
    assert len(statements) == 2
    for statement in statements:
        assert statement["Effect"] == "Allow"
        if statement["Sid"] == "WriteLogs":  # the function's own group, which has a generated name
            assert statement["Resource"] == {"Fn::GetAtt": [own_logs, "Arn"]}
            assert sorted(statement["Action"]) == ["logs:CreateLogStream", "logs:PutLogEvents"]
        else:
            assert sorted(statement["Action"]) == ["logs:AssociateKmsKey", "logs:CreateLogGroup",
                                                   "logs:PutRetentionPolicy"]
            assert sorted(statement["Resource"]) == [group_arn, f"{group_arn}:*"]
    assert "LogGroupName" not in template["Resources"][own_logs]["Properties"]
    trust = template["Resources"][role]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert [s["Condition"] for s in trust] == [{"StringEquals": {"aws:SourceAccount": account}}]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_environment_key_lets_cloudwatch_logs_encrypt_the_group(synth: Synth, env: str) -> None:
    account, region, _ = ENVIRONMENTS[env]
    (key,) = resources(synth.template(env, "Storage"), "AWS::KMS::Key").values()
    group_arn = f"arn:aws:logs:{region}:{account}:log-group:{GROUP}"
    allowed = []
    for statement in resolve(key["Properties"]["KeyPolicy"])["Statement"]:
        if statement.get("Principal") != {"Service": f"logs.{region}.amazonaws.com"}:
            continue
        condition = statement["Condition"]
        patterns = {**condition.get("ArnLike", {}), **condition.get("ArnEquals", {})}
        if fnmatchcase(group_arn, patterns["kms:EncryptionContext:aws:logs:arn"]):
            allowed.extend(statement["Action"])
    assert {"kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"} <= set(allowed)


def test_the_construct_shares_one_function_role_and_skips_the_key_without_one() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Groups", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    ServiceLogGroup(stack, "Training", log_group_name="/aws/sagemaker/TrainingJobs", retention_days=14,
                    encryption_key=key)
    plain = ServiceLogGroup(stack, "Processing", log_group_name="/aws/sagemaker/ProcessingJobs", retention_days=7)
    assert plain.log_group.log_group_name == "/aws/sagemaker/ProcessingJobs"
    template = app.synth().get_stack_by_name("Groups").template
    (function,) = resources(template, "AWS::Lambda::Function").values()
    role = function["Properties"]["Role"]["Fn::GetAtt"][0]
    groups = {}
    for policy in resources(template, "AWS::IAM::Policy").values():
        assert policy["Properties"]["Roles"] == [{"Ref": role}]  # the role the one function runs with
        for statement in resolve(policy["Properties"]["PolicyDocument"])["Statement"]:
            if "logs:CreateLogGroup" in statement["Action"]:
                groups[statement["Resource"][0].rsplit(":", 1)[-1]] = statement["Resource"]
    assert set(groups) == {"/aws/sagemaker/TrainingJobs", "/aws/sagemaker/ProcessingJobs"}
    actions = sorted(e["Create"]["action"] for e in calls(template).values())
    assert actions == ["associateKmsKey", "createLogGroup", "createLogGroup", "putRetentionPolicy",
                       "putRetentionPolicy"]


@pytest.mark.parametrize(("props", "message"), [
    ({"log_group_name": "/aws/sagemaker/Training Jobs"}, "is not a CloudWatch Logs log group name"),
    ({"log_group_name": "/aws/sagemaker/TrainingJobs", "retention_days": 0}, "is not one CloudWatch Logs accepts"),
    ({"log_group_name": "/aws/sagemaker/TrainingJobs", "retention_days": 31}, "is not one CloudWatch Logs accepts"),
])
def test_bad_props_stop_synth(props: dict[str, Any], message: str) -> None:
    stack = cdk.Stack(cdk.App(), "Groups", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    with pytest.raises(ValueError, match=message):
        ServiceLogGroup(stack, "Group", **props)


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_each_call_is_an_operation_of_botocores_cloudwatch_logs_model(synth: Synth, env: str) -> None:
    """AwsCustomResource sends `action` (SDK v3 spelling) with `parameters` as the operation's input; botocore's model
    of the same API says which members exist and are required, and which errors CreateLogGroup returns."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("logs")
    for events in calls(synth.template(env, "Access")).values():
        call = events["Create"]
        operation = model.operation_model(call["action"][0].upper() + call["action"][1:])
        members = operation.input_shape.members
        assert set(call["parameters"]) <= set(members), (operation.name, set(call["parameters"]) - set(members))
        assert set(operation.input_shape.required_members) <= set(call["parameters"]), operation.name
        if "ignoreErrorCodesMatching" in call:
            assert call["ignoreErrorCodesMatching"] in {e.name for e in operation.error_shapes}


def test_a_metric_filter_on_the_group_names_it_and_waits_for_the_settings() -> None:
    from aws_cdk import aws_logs as logs

    app = cdk.App()
    stack = cdk.Stack(app, "Groups", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    group = ServiceLogGroup(stack, "Training", log_group_name=GROUP, retention_days=30)
    metric_filter = group.log_group.add_metric_filter("Loss", metric_namespace="Training", metric_name="loss",
                                                      filter_pattern=logs.FilterPattern.literal("train_loss"))
    metric_filter.node.add_dependency(group)
    template = app.synth().get_stack_by_name("Groups").template
    (resource,) = resources(template, "AWS::Logs::MetricFilter").values()
    assert resource["Properties"]["LogGroupName"] == GROUP
    create = next(k for k, v in calls(template).items() if v["Create"]["action"] == "createLogGroup")
    assert create in resource["DependsOn"]
