"""The guards' one walk per stack (platform_constructs/stack_resources.py) sees what the template holds, and the
workload shards' resource-count guard stops synth past its limit and not at it."""

from __future__ import annotations

import json
from collections import Counter

import aws_cdk as cdk
import pytest
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns

import stacks.workloads
from platform_constructs import stack_resources
from stacks.app import build_app
from tests.project import PROJECT

pytestmark = pytest.mark.synth


def test_every_stack_holds_the_resources_its_template_lists_by_type(synthesized_app) -> None:
    for name, stage in synthesized_app.stages.items():
        for stack in (child for child in stage.node.children if isinstance(child, cdk.Stack)):
            template = synthesized_app.templates[name][stack.node.id]
            expected = Counter(resource["Type"] for resource in template["Resources"].values())
            found = stack_resources.of(stack)
            assert {kind: len(nodes) for kind, nodes in found.by_type.items()} == dict(expected), stack.node.path
            assert found.count == len(template["Resources"])


def test_a_nested_stack_keeps_its_own_resources_and_properties_are_resolved() -> None:
    app = cdk.App()
    parent = cdk.Stack(app, "Parent", env=cdk.Environment(account="123456789012", region="us-east-1"))
    logs.LogGroup(parent, "Own", log_group_name="own")
    nested = cdk.NestedStack(parent, "Nested")
    logs.LogGroup(nested, "Inner", log_group_name="inner")
    sns.CfnTopic(parent, "Raw")
    cdk.CfnResource(parent, "Untyped", type="AWS::Logs::LogGroup", properties={"LogGroupName": "raw"})

    found = stack_resources.of(parent)
    groups = [node for _, node in found.of_type("AWS::Logs::LogGroup")]
    assert [node.node.id for node in groups] == ["Resource", "Untyped"]  # the nested stack's group is not here
    assert found.properties(groups[0]) == {"logGroupName": "own", "retentionInDays": 731}
    assert found.properties(groups[1]) == {"LogGroupName": "raw"}  # a raw resource keeps the template's spelling
    assert [kind for kind, _ in found.of_type("AWS::SNS::Topic")] == ["AWS::SNS::Topic"]


def test_the_resource_count_guard_stops_a_shard_past_the_limit_and_not_at_it(synthesized_app, tmp_path,
                                                                               monkeypatch) -> None:
    counts = {shard.stack_name: len(json.loads((synthesized_app.outdir / "assembly-dev" / shard.template_file)
                                               .read_text())["Resources"])
              for shard in synthesized_app.platform.workload_stacks["dev"].shards}
    limit = sorted(set(counts.values()))[-2]  # a shard holds exactly this many, a larger one more
    monkeypatch.setattr(stacks.workloads, "MAX_STACK_RESOURCES", limit)
    app = build_app(PROJECT, outdir=str(tmp_path), only=["dev"], builtin_validation=False)
    with pytest.raises(Exception) as caught:
        app.synth()
    message = str(caught.value)
    for stack_name, count in counts.items():
        said = f"{stack_name} has {count} resources (limit {limit} of CloudFormation's 500)"
        assert (said in message) == (count > limit), (stack_name, count)
    assert "raise dev.workload_shards in cdk.json above" in message
