"""What `cdk destroy` leaves behind, on the synthesized templates of every environment cdk.json ships
(docs/teardown.md).

Expected values are literals or cdk.json's own: each environment's `removal_policy` as cdk.json says it (`retain`
when absent, README's environments table), CloudFormation's names for the two policies (CloudFormation User Guide,
"DeletionPolicy attribute" and "UpdateReplacePolicy attribute"), SageMaker's log group name (SageMaker developer
guide, "Log groups and streams that Amazon SageMaker AI sends to Amazon CloudWatch Logs") and the CloudWatch Logs
actions that only read a group or write a stream of it (Service Authorization Reference, CloudWatch Logs).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.project import PROJECT, ROOT

pytestmark = pytest.mark.synth

SHIPPED = json.loads(PROJECT.cdk_json.read_text())["context"]["training-platform:environments"]
# (DeletionPolicy, UpdateReplacePolicy) per removal_policy. CloudFormation User Guide, "DeletionPolicy attribute":
# "RetainExceptOnCreate behaves like Retain for stack operations, except for the stack operation that initially created
# the resource. If the stack operation that created the resource is rolled back, CloudFormation deletes the resource."
# UpdateReplacePolicy has no such value: Retain keeps the old resource on replacement.
POLICY = {name: {"retain": ("RetainExceptOnCreate", "Retain"), "destroy": ("Delete", "Delete")}[
    env.get("removal_policy", "retain")] for name, env in SHIPPED.items()}
DESTROY = sorted(name for name, policy in POLICY.items() if policy == ("Delete", "Delete"))
RETAIN = sorted(name for name, policy in POLICY.items() if policy == ("RetainExceptOnCreate", "Retain"))
# What holds data, or decides who can read it.
STATEFUL = {"AWS::KMS::Key", "AWS::S3::Bucket", "AWS::FSx::FileSystem", "AWS::ECR::Repository", "AWS::Logs::LogGroup"}
GROUP = "/aws/sagemaker/TrainingJobs"
# Statements on SageMaker's group may read it or write a job's own stream, never configure or delete the group.
STREAM_ACTIONS = {"logs:DescribeLogStreams", "logs:FilterLogEvents", "logs:GetLogEvents", "logs:CreateLogStream",
                  "logs:PutLogEvents"}
# The only resource types that may name the group: policies (above), the runs' definitions (which only read it) and
# the dashboards (which only show it).
NAMING_GROUP = {"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::StepFunctions::StateMachine",
                "AWS::CloudWatch::Dashboard"}
# Each custom resource of the app, and the property naming what it acts on: a resource of its own stack.
CUSTOM_TARGETS = {"Custom::S3AutoDeleteObjects": "BucketName", "Custom::VpcRestrictDefaultSG": "DefaultSecurityGroupId",
                  "Custom::CDKECRDeployment": "DestImage"}


def resources(app: Any, env: str) -> list[tuple[str, str, dict[str, Any]]]:
    """Every resource of every stack of the environment: (stack id, logical id, resource)."""
    return [(stack, logical_id, resource) for stack, template in app.templates[env].items()
            for logical_id, resource in template["Resources"].items()]


def references(value: Any) -> set[str]:
    """The logical IDs a template value refers to (Ref, Fn::GetAtt; pseudo parameters such as AWS::URLSuffix are no
    resource)."""
    found: set[str] = set()
    if isinstance(value, dict):
        if isinstance(value.get("Ref"), str) and not value["Ref"].startswith("AWS::"):
            found.add(value["Ref"])
        if isinstance(value.get("Fn::GetAtt"), list):
            found.add(value["Fn::GetAtt"][0])
        for item in value.values():
            found |= references(item)
    elif isinstance(value, list):
        for item in value:
            found |= references(item)
    return found


@pytest.mark.parametrize("env", POLICY)
def test_every_stateful_resource_follows_the_environments_removal_policy(synthesized_app: Any, env: str) -> None:
    """Deleting the stack (DeletionPolicy) and replacing the resource (UpdateReplacePolicy) both follow removal_policy;
    a retained resource is still deleted when the deploy that created it rolls back (a failed first deploy leaves no
    file system billing outside any stack, no named log group that fails the next try with AlreadyExists)."""
    stateful = [(stack, logical_id, r) for stack, logical_id, r in resources(synthesized_app, env) if r["Type"] in STATEFUL]
    assert {"AWS::KMS::Key", "AWS::S3::Bucket", "AWS::Logs::LogGroup"} <= {r["Type"] for _, _, r in stateful}
    for stack, logical_id, resource in stateful:
        assert (resource.get("DeletionPolicy"), resource.get("UpdateReplacePolicy")) == POLICY[env], (
            stack, logical_id)


@pytest.mark.parametrize("env", DESTROY)
def test_a_destroy_environment_keeps_nothing_and_acts_only_on_its_own_stacks(synthesized_app: Any, env: str) -> None:
    """dev: no resource outlives its stack, its buckets are emptied before they are deleted, and each custom resource
    acts on a resource of its own stack (nothing set outside the stacks stays behind, docs/teardown.md)."""
    everything = resources(synthesized_app, env)
    kept = [(s, k) for s, k, r in everything if r.get("DeletionPolicy", "Delete") != "Delete"
            or r.get("UpdateReplacePolicy", "Delete") != "Delete"]
    assert kept == []
    # docs/teardown.md: a destroyed key can be brought back for 7 days (KMS's shortest waiting period).
    assert {r["Properties"].get("PendingWindowInDays") for _, _, r in everything if r["Type"] == "AWS::KMS::Key"} == {7}
    templates = synthesized_app.templates[env]
    buckets = {(s, k) for s, k, r in everything if r["Type"] == "AWS::S3::Bucket"}
    emptied = set()
    for stack, logical_id, resource in everything:
        if not resource["Type"].startswith("Custom::"):
            continue
        assert resource["Type"] in CUSTOM_TARGETS, f"{stack}/{logical_id}: a custom resource the teardown doc does not know"
        targets = references(resource["Properties"][CUSTOM_TARGETS[resource["Type"]]])
        assert targets and targets <= set(templates[stack]["Resources"]), (stack, logical_id, targets)
        if resource["Type"] == "Custom::S3AutoDeleteObjects":
            emptied |= {(stack, t) for t in targets}
    assert emptied == buckets


@pytest.mark.parametrize("env", POLICY)
def test_no_template_sets_anything_on_sagemakers_log_group(synthesized_app: Any, env: str) -> None:
    """The account's training log group is every team's: no stack creates, configures (key, retention, filters) or
    deletes it, so no environment's deploy or destroy changes it, and two environments cannot disagree on it."""
    for stack, logical_id, resource in resources(synthesized_app, env):
        text = json.dumps(resource)
        if GROUP not in text:
            continue
        assert resource["Type"] in NAMING_GROUP, (stack, logical_id, resource["Type"])
        if resource["Type"] == "AWS::StepFunctions::StateMachine":
            assert set(re.findall(r"aws-sdk:cloudwatchlogs:(\w+)", text)) <= {"filterLogEvents"}, (stack, logical_id)
            continue
        for statement in resource["Properties"].get("PolicyDocument", {}).get("Statement", []):
            if GROUP in json.dumps(statement.get("Resource")):
                actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                assert set(actions) <= STREAM_ACTIONS, (stack, logical_id, statement.get("Sid"))


def test_the_runbook_lists_exactly_what_a_retain_environment_keeps(synthesized_app: Any) -> None:
    """docs/teardown.md's table of what `cdk destroy` keeps names each (stack, resource type) a retain environment
    retains, and nothing none of them retains."""
    text = (ROOT / "docs" / "teardown.md").read_text()
    section = text[text.index("### What `cdk destroy` keeps"):]
    section = section[:section.index("\n\n", section.index("| Stack |"))]
    listed = set()
    for stack, kinds in re.findall(r"^\| `(\w+)` \|[^|]*\| ([^|]+) \|", section, re.MULTILINE):
        listed |= {(stack, kind) for kind in re.findall(r"`(AWS::[\w:]+)`", kinds)}
    retained = {env: {(stack, r["Type"]) for stack, _, r in resources(synthesized_app, env)
                      if r.get("DeletionPolicy") == "RetainExceptOnCreate"} for env in RETAIN}
    assert retained and all(kept <= listed for kept in retained.values()), {e: k - listed for e, k in retained.items()}
    assert listed <= set().union(*retained.values())
