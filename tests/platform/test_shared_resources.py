"""What every workload of an environment shares, and that a job's role reaches none of it beyond its own part.

A job's code holds its execution role when network isolation is off (docs/security.md, "Threat model"). The run logs
(`/aws/vendedlogs/states/<env>-training`) and the runs topic are shared by every state machine, and a state machine's
role is Step Functions', never a job's: so no execution role, through its own policy or the shared managed policies
of the Access stack, may publish to a topic, start or read an execution, or touch a log group but
/aws/sagemaker/TrainingJobs (listing its streams, and writing its own jobs' streams: test_log_streams.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.platform.test_job_security_groups import ENVS, WORKLOADS, workload_stacks
from tests.platform.test_log_streams import _workload_of

pytestmark = pytest.mark.synth
TRAINING_LOG_GROUP = "/aws/sagemaker/TrainingJobs"


def _execution_statements(app, env: str) -> dict[str, list[dict[str, Any]]]:
    """Workload -> the statements of its execution policy, and those of the Access stack's shared managed policies
    (which every execution role takes)."""
    shared = [s for r in app.templates[env]["Access"]["Resources"].values() if r["Type"] == "AWS::IAM::ManagedPolicy"
              for s in r["Properties"]["PolicyDocument"]["Statement"]]
    found: dict[str, list[dict[str, Any]]] = {}
    for template in workload_stacks(app, env).values():
        for resource in template["Resources"].values():
            name = resource["Properties"].get("PolicyName", "") if resource["Type"] == "AWS::IAM::Policy" else ""
            if "ExecutionPolicy" in name:
                found[_workload_of(name, WORKLOADS)] = [*resource["Properties"]["PolicyDocument"]["Statement"], *shared]
    return found


def _actions(statement: dict[str, Any]) -> list[str]:
    actions = statement["Action"]
    return actions if isinstance(actions, list) else [actions]


@pytest.mark.parametrize("env", ENVS)
def test_no_execution_role_reaches_the_run_logs_the_topic_or_the_executions(synthesized_app, env: str) -> None:
    statements = _execution_statements(synthesized_app, env)
    assert set(statements) == WORKLOADS
    for workload, granted in statements.items():
        for statement in granted:
            services = {a.split(":")[0] for a in _actions(statement)}
            assert not services & {"sns", "states", "events", "scheduler", "iam", "sts"}, (workload, statement)
            if "logs" in services:
                assert statement["Sid"] in ("WriteOwnLogStreams", "ListTrainingLogs"), (workload, statement)
                assert TRAINING_LOG_GROUP in json.dumps(statement["Resource"]), (workload, statement)
                assert "vendedlogs" not in json.dumps(statement["Resource"]), (workload, statement)


@pytest.mark.parametrize("env", ENVS)
def test_the_shared_interface_statement_holds_the_three_actions_sagemaker_documents_in_the_training_vpc(
        synthesized_app, env: str) -> None:
    """The low that stays (docs/security.md, "What stays shared"): any job's role may delete or re-permit network
    interfaces of the training VPC; network interfaces have no security-group condition key to narrow it to the
    workload's own (Service Authorization Reference, EC2: DeleteNetworkInterface's keys)."""
    [statement] = [s for r in synthesized_app.templates[env]["Access"]["Resources"].values()
                   if r["Type"] == "AWS::IAM::ManagedPolicy" for s in r["Properties"]["PolicyDocument"]["Statement"]
                   if s["Sid"] == "ManageJobInterfaces"]
    assert sorted(_actions(statement)) == ["ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface",
                                           "ec2:DeleteNetworkInterfacePermission"]
    assert list(statement["Condition"]) == ["ArnEquals"] and list(statement["Condition"]["ArnEquals"]) == ["ec2:Vpc"]
    assert statement["Resource"].endswith(":network-interface/*")
