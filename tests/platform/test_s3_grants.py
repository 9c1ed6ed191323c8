"""Every S3 grant of every synthesized role is a literal key prefix followed by one `*` (or one exact key), and a
workload's data grants are exactly the prefixes its channels read (issue 35).

IAM reads `*` in a Resource or a StringLike value as any run of characters, `?` as any one, `${...}` as a policy
variable (IAM User Guide, "IAM policy elements: Variables and tags", "Special characters"): a grant whose prefix held
one would reach more than SageMaker reads, which is an S3 prefix compared literally. Probed with IAM's own wildcard
rules on the session's app: no execution role reaches another workload's prefix of any bucket, or a dataset whose
cdk.json entry does not name it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from compiler.inputs.model import S3Channel
from tests.platform.test_job_security_groups import ENVS, WORKLOADS, workload_stacks
from tests.platform.test_log_streams import _iam_match, _workload_of
from tests.project import ENVIRONMENTS, loaded

pytestmark = pytest.mark.synth
SPECIAL = set("*?$")
POLICIES = ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")


def _text(value: Any) -> str:
    """A template value as text: imports and references by name, joins joined, literals as they are."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        return "".join(_text(v) for v in value["Fn::Join"][1])
    if "Fn::ImportValue" in value:
        export = value["Fn::ImportValue"]
        for bucket in ("DataBucket", "OutputBucket", "CheckpointsBucket"):
            if bucket in export:
                return f"arn:aws:s3:::<{bucket}>"
        return f"<import {export}>"
    if "Ref" in value:
        return f"<{value['Ref']}>"
    if "Fn::GetAtt" in value:
        return f"<{'.'.join(value['Fn::GetAtt'])}>"
    raise AssertionError(f"an S3 grant built from {value}")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _s3_statements(app, env: str) -> list[tuple[str, dict[str, Any]]]:
    """(policy name or logical id, statement) of every statement of every policy of the environment with an s3: action
    (inline policies of roles included)."""
    found = []
    for template in app.templates[env].values():
        for logical, resource in template["Resources"].items():
            documents = []
            if resource["Type"] in POLICIES:
                documents.append((resource["Properties"].get("PolicyName", logical), resource["Properties"]["PolicyDocument"]))
            if resource["Type"] == "AWS::IAM::Role":
                documents += [(p["PolicyName"], p["PolicyDocument"]) for p in resource["Properties"].get("Policies", [])]
            for name, document in documents:
                found += [(name, s) for s in document["Statement"] if "s3:" in json.dumps(s["Action"])]
    return found


def _key_part(arn: str) -> str | None:
    """The key part of an S3 object ARN (None for a bucket ARN)."""
    assert arn.startswith("arn:aws:s3:::"), arn
    bucket, slash, key = arn.removeprefix("arn:aws:s3:::").partition("/")
    assert bucket, arn
    return key if slash else None


def _literal_then_one_star(pattern: str) -> bool:
    return pattern.endswith("*") and not SPECIAL & set(pattern[:-1])


@pytest.mark.parametrize("env", ENVS)
def test_every_s3_grant_is_a_literal_prefix_and_one_star(synthesized_app, env: str) -> None:
    statements = _s3_statements(synthesized_app, env)
    assert statements
    for name, statement in statements:
        for resource in _list(statement["Resource"]):
            key = _key_part(_text(resource))
            if key is not None:  # an object: a prefix and its one `*`, or one exact key (the code bundle)
                assert _literal_then_one_star(key) or not SPECIAL & set(key), (name, statement)
        for operator, keys in statement.get("Condition", {}).items():
            for condition, values in keys.items():
                if condition != "s3:prefix":
                    continue
                for value in _list(values):
                    literal = operator == "StringEquals" and not SPECIAL & set(value)
                    assert literal or (operator == "StringLike" and _literal_then_one_star(value)), (name, statement)


def _execution_statements(app, env: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(workload, statement) of every workload's execution policy in the environment's templates."""
    for template in workload_stacks(app, env).values():
        for resource in template["Resources"].values():
            if resource["Type"] != "AWS::IAM::Policy" or "ExecutionPolicy" not in resource["Properties"]["PolicyName"]:
                continue
            workload = _workload_of(resource["Properties"]["PolicyName"], WORKLOADS)
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
                yield workload, statement


def _data_grants(app, env: str) -> dict[str, dict[str, set[str]]]:
    """Workload -> bucket -> the patterns its execution role reads and lists (resources and s3:prefix values)."""
    grants: dict[str, dict[str, set[str]]] = {}
    for workload, statement in _execution_statements(app, env):
        if not re.fullmatch(r"(Read|List)(Data|External\d+)", statement["Sid"]):
            continue
        for arn in map(_text, _list(statement["Resource"])):
            bucket = arn.removeprefix("arn:aws:s3:::").split("/")[0]
            patterns = grants.setdefault(workload, {}).setdefault(bucket, set())
            key = _key_part(arn)
            if key is not None:
                patterns.add(key)
            for value in _list(statement.get("Condition", {}).get("StringLike", {}).get("s3:prefix", [])):
                patterns.add(value)
    return grants


@pytest.mark.parametrize("env", ENVS)
def test_each_roles_data_grants_are_its_channels_prefixes_and_nothing_else(synthesized_app, env: str) -> None:
    grants = _data_grants(synthesized_app, env)
    for workload in loaded().workloads(env):
        expected: dict[str, set[str]] = {}
        channels = [c for c in workload.inputs if isinstance(c, S3Channel)]
        if workload.model_uri is not None:
            channels.append(S3Channel("model", workload.model_uri))
        for channel in channels:
            bucket = "<DataBucket>" if channel.in_data_bucket else str(channel.bucket)
            expected.setdefault(bucket, set()).add(channel.key_prefix + "*")
        assert grants.get(workload.name, {}) == expected, workload.name


def _own_grants(app, env: str) -> dict[str, list[str]]:
    """Workload -> every object pattern its execution role holds in the environment's buckets, as `<Bucket>/pattern`."""
    found: dict[str, list[str]] = {}
    for workload, statement in _execution_statements(app, env):
        for arn in map(_text, _list(statement["Resource"])):
            if arn.startswith("arn:aws:s3:::<"):
                found.setdefault(workload, []).append(arn.removeprefix("arn:aws:s3:::"))
    return found


@pytest.mark.parametrize("env", ENVS)
def test_no_role_reaches_another_workloads_objects_or_a_dataset_not_granted_it(synthesized_app, env: str) -> None:
    """The probe: for each role, a key under every other workload's prefix of each bucket, and under every dataset
    whose readers leave it out, matches none of its patterns as IAM matches them."""
    datasets = ENVIRONMENTS[env].datasets
    checkpointing = {w.name for w in loaded().workloads(env) if w.checkpoints}
    reads = {w.name: [c.key_prefix for c in w.inputs if isinstance(c, S3Channel) and c.in_data_bucket]
             for w in loaded().workloads(env)}
    grants = _own_grants(synthesized_app, env)
    assert set(grants) == WORKLOADS
    for workload, patterns in grants.items():
        others = [f"<{b}>/{o}/x" for o in WORKLOADS - {workload} for b in ("DataBucket", "OutputBucket",
                                                                             "CheckpointsBucket")]
        others += [f"<DataBucket>/{d.key_prefix}x" for d in datasets.values() if workload not in d.readers]
        others += ["<DataBucket>/x", "<DataBucket>/datasets/x", f"<DataBucket>/{workload}x/y"]
        for key in others:
            assert not any(_iam_match(p, key) for p in patterns), (workload, key)
        # its own prefixes: of the output bucket, and of the checkpoints bucket where it checkpoints (the tabular
        # examples do not)
        own = [f"<{b}>/{workload}/x" for b in ("OutputBucket", "CheckpointsBucket")
               if b == "OutputBucket" or workload in checkpointing]
        own += [f"<DataBucket>/{prefix}x" for prefix in reads[workload]]  # what its channels read, in its datasets
        for key in own:
            assert any(_iam_match(p, key) for p in patterns), (workload, key)
