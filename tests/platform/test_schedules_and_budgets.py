"""Issue 25: a workload's schedule (EventBridge Scheduler, a role that may start only its own state machine) and an
environment's monthly budget (AWS Budgets, notifying the runs topic), as templates.

Expected values are AWS's: FlexibleTimeWindow Mode OFF, a Budgets TagKeyValue filter written `user:<key>$<value>`,
notification types ACTUAL and FORECASTED with threshold type PERCENTAGE, the service principals
scheduler.amazonaws.com and budgets.amazonaws.com.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns

from compiler.compilation.schedules import describe_schedule
from compiler.spec import parse_workload
from platform_constructs.budget import EnvironmentBudget
from platform_constructs.schedule import METADATA_KEY, WorkloadSchedule
from tests.project import ENVIRONMENTS

ACCOUNT = "123456789012"
MACHINE = f"arn:aws:states:eu-west-1:{ACCOUNT}:stateMachine:dev-demo"


def _stack() -> tuple[cdk.App, cdk.Stack]:
    app = cdk.App()
    return app, cdk.Stack(app, "S", env=cdk.Environment(account=ACCOUNT, region="eu-west-1"))


def _resources(app: cdk.App, kind: str) -> list[dict[str, Any]]:
    template = app.synth().get_stack_by_name("S").template
    return [r for r in template["Resources"].values() if r["Type"] == kind]


def _workload(tmp_path: Path, **changes: Any) -> Any:
    (tmp_path / "train.py").write_text("print('hi')\n")
    raw = {"name": "demo", "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311",
           "entry_point": "train.py", "instance_type": "ml.g5.2xlarge", "instance_count": 1, "max_run": 3600,
           "hyperparameters": {"steps": 10}, **changes}
    return parse_workload(raw, source="demo.yaml", spec_dir=tmp_path, project_root=tmp_path)


def _facts(workload: Any) -> dict[str, Any]:
    """What the pipeline's plan records for the schedule in dev (compiler/pipeline.py)."""
    facts = describe_schedule(workload, ENVIRONMENTS["dev"])
    assert facts is not None
    return facts


def test_the_schedule_starts_its_state_machine_at_the_minute_with_its_input(tmp_path: Path) -> None:
    workload = _workload(tmp_path, schedule={"expression": "cron(0 2 ? * MON-FRI *)", "timezone": "Europe/Berlin",
                                             "input": {"hyperparameters": {"steps": 5}}})
    app, stack = _stack()
    WorkloadSchedule(stack, "Schedule", workload=workload, environment="dev", facts=_facts(workload),
                     state_machine_arn=MACHINE)
    (schedule,) = _resources(app, "AWS::Scheduler::Schedule")
    props = schedule["Properties"]
    assert props["Name"] == "dev-demo"
    assert props["ScheduleExpression"] == "cron(0 2 ? * MON-FRI *)"
    assert props["ScheduleExpressionTimezone"] == "Europe/Berlin"
    assert props["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert props["Target"]["Arn"] == MACHINE
    assert json.loads(props["Target"]["Input"]) == {"hyperparameters": {"steps": 5}}
    assert schedule["Metadata"][METADATA_KEY]["worst_cost_per_hour_usd"] == 1.515  # ml.g5.2xlarge, the catalog's


def test_the_schedules_role_may_start_only_that_state_machine_for_this_account_only(tmp_path: Path) -> None:
    app, stack = _stack()
    workload = _workload(tmp_path, schedule="rate(1 day)")
    WorkloadSchedule(stack, "Schedule", workload=workload, environment="dev", facts=_facts(workload),
                     state_machine_arn=MACHINE)
    (role,) = _resources(app, "AWS::IAM::Role")
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": ACCOUNT}}
    (policy,) = _resources(app, "AWS::IAM::Policy")
    assert policy["Properties"]["PolicyDocument"]["Statement"] == [
        {"Sid": "StartOwnStateMachine", "Effect": "Allow", "Action": "states:StartExecution", "Resource": MACHINE}]


def test_without_input_a_scheduled_run_starts_with_the_spec_as_written(tmp_path: Path) -> None:
    app, stack = _stack()
    workload = _workload(tmp_path, schedule="rate(1 day)")
    WorkloadSchedule(stack, "Schedule", workload=workload, environment="dev", facts=_facts(workload),
                     state_machine_arn=MACHINE)
    (schedule,) = _resources(app, "AWS::Scheduler::Schedule")
    assert schedule["Properties"]["Target"]["Input"] == "{}"
    assert schedule["Properties"]["ScheduleExpressionTimezone"] == "UTC"


def _budget(amount: float) -> cdk.App:
    app, stack = _stack()
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    topic = sns.Topic(stack, "Topic", master_key=key)
    env = dataclasses.replace(ENVIRONMENTS["dev"], monthly_budget_usd=amount)
    EnvironmentBudget(stack, "Budget", environment=env, topic=topic, key=key)
    return app


def test_the_budget_is_monthly_filtered_to_the_environments_tags_and_notifies_the_topic() -> None:
    app = _budget(2500)
    (budget,) = _resources(app, "AWS::Budgets::Budget")
    data = budget["Properties"]["Budget"]
    assert data["BudgetType"] == "COST" and data["TimeUnit"] == "MONTHLY" and data["BudgetName"] == "dev-training"
    assert data["BudgetLimit"] == {"Amount": 2500, "Unit": "USD"}
    assert data["CostFilters"] == {"TagKeyValue": ["user:environment$dev", "user:training-platform:environment$dev"]}
    notifications = [(n["Notification"]["NotificationType"], n["Notification"]["Threshold"],
                      n["Notification"]["ThresholdType"], n["Notification"]["ComparisonOperator"])
                     for n in budget["Properties"]["NotificationsWithSubscribers"]]
    assert notifications == [("ACTUAL", 80, "PERCENTAGE", "GREATER_THAN"), ("FORECASTED", 100, "PERCENTAGE",
                                                                             "GREATER_THAN")]
    for n in budget["Properties"]["NotificationsWithSubscribers"]:
        assert n["Subscribers"] == [{"SubscriptionType": "SNS", "Address": {"Ref": "TopicBFC7AF6E"}}]


def test_budgets_may_publish_to_the_topic_and_use_its_key_for_this_accounts_budgets_only() -> None:
    app = _budget(10)
    (policy,) = _resources(app, "AWS::SNS::TopicPolicy")
    statements = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s.get("Sid") == "BudgetsOfThisAccount"]
    (publish,) = statements
    assert publish["Principal"] == {"Service": "budgets.amazonaws.com"} and publish["Action"] == "sns:Publish"
    assert publish["Condition"]["StringEquals"] == {"aws:SourceAccount": ACCOUNT}
    assert publish["Condition"]["ArnLike"] == {"aws:SourceArn": {"Fn::Join": ["", [
        "arn:", {"Ref": "AWS::Partition"}, f":budgets::{ACCOUNT}:*"]]}}
    (key,) = _resources(app, "AWS::KMS::Key")
    (use,) = [s for s in key["Properties"]["KeyPolicy"]["Statement"] if s.get("Sid") == "BudgetNotifications"]
    assert use["Principal"] == {"Service": "budgets.amazonaws.com"}
    assert use["Condition"]["StringEquals"] == {"aws:SourceAccount": ACCOUNT}


def test_the_shipped_schedule_and_budget_deploy_to_dev_only(synthesized_app: Any) -> None:
    """gpt-finetune-single is scheduled in dev only, and only dev's cdk.json entry has monthly_budget_usd."""
    def of(env: str, kind: str) -> list[tuple[str, dict[str, Any]]]:
        return [(stack, r) for stack, t in synthesized_app.templates[env].items()
                for r in t["Resources"].values() if r["Type"] == kind]

    ((stack, schedule),) = of("dev", "AWS::Scheduler::Schedule")
    assert schedule["Properties"]["Name"] == "dev-gpt-finetune-single"
    assert stack == synthesized_app.platform.workload_stacks["dev"].stack_of()["gpt-finetune-single"]
    assert json.loads(schedule["Properties"]["Target"]["Input"]) == {"hyperparameters": {"max_steps": 500}}
    ((stack, budget),) = of("dev", "AWS::Budgets::Budget")
    assert stack == "Runs" and budget["Properties"]["Budget"]["BudgetLimit"] == {"Amount": 2000, "Unit": "USD"}
    assert of("prod", "AWS::Scheduler::Schedule") == [] and of("prod", "AWS::Budgets::Budget") == []
