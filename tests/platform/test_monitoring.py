"""Each environment's dashboard and alarms: what a platform engineer opens to see how runs are going.

Expected values are written from the facts, not read from the code: Step Functions' metrics are per state machine
ARN (`arn:aws:states:<region>:<account>:stateMachine:<env>-<workload>`), SageMaker's job metrics sit in
/aws/sagemaker/TrainingJobs under Host = `<job name>/algo-<n>`, and job names start with the spec's base job name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.project import ENVIRONMENTS, loaded

ENVS = ("dev", "prod")


def resources(app: Any, env: str, stack: str, kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in app.templates[env][stack]["Resources"].items() if v["Type"] == kind}


def dashboard_widgets(app: Any, env: str) -> list[dict[str, Any]]:
    (dashboard,) = resources(app, env, "Monitoring", "AWS::CloudWatch::Dashboard").values()
    assert dashboard["Properties"]["DashboardName"] == f"{env}-training"
    body = json.loads(dashboard["Properties"]["DashboardBody"])
    assert all(w["properties"].get("region", ENVIRONMENTS[env].region) == ENVIRONMENTS[env].region
               for w in body["widgets"])
    return body["widgets"]


@pytest.mark.parametrize("env", ENVS)
def test_dashboard_has_runs_metrics_and_utilization_of_every_workload(synthesized_app: Any, env: str) -> None:
    settings = ENVIRONMENTS[env]
    widgets = {w["properties"].get("title"): w["properties"] for w in dashboard_widgets(synthesized_app, env)}
    notes = [w["properties"]["markdown"] for w in dashboard_widgets(synthesized_app, env) if "markdown" in w["properties"]]
    for workload in loaded().workloads(env):
        arn = f"arn:aws:states:{settings.region}:{settings.account}:stateMachine:{env}-{workload.name}"
        runs = widgets[f"{workload.name}: runs"]["metrics"]
        assert {(m[0], m[1]) for m in runs if m[2:4] == ["StateMachineArn", arn]} == {
            ("AWS/States", "ExecutionsStarted"), ("AWS/States", "ExecutionsSucceeded"), ("AWS/States", "ExecutionsFailed")}
        assert ["TrainingPlatform", "CapacityRelaunches", "Environment", env, "Workload", workload.name] in [
            m[:6] for m in runs]
        utilization = {m[0]["label"] for m in widgets[f"{workload.name}: utilization (%)"]["metrics"]}
        assert {"GPUUtilization", "GPUMemoryUtilization", "MemoryUtilization"} <= utilization
        if not workload.metric_definitions:  # a built-in algorithm's own metrics: a note instead of a graph
            assert any(n.startswith(f"**{workload.name}**: no `metric_definitions`") for n in notes), workload.name
            continue
        searches = {m[0]["label"]: m[0]["expression"] for m in widgets[f"{workload.name}: training metrics"]["metrics"]}
        assert set(searches) == {m.name for m in workload.metric_definitions or ()}
        for name, expression in searches.items():
            assert re.fullmatch(r"SEARCH\('\{/aws/sagemaker/TrainingJobs,Host\} MetricName=\"" + re.escape(name)
                                + r"\" \"" + re.escape(workload.base_job_name) + r"\"', 'Average', 60\)", expression)


@pytest.mark.parametrize("env", ENVS)
def test_failed_runs_and_exhausted_capacity_alarm_the_environment_topic(synthesized_app: Any, env: str) -> None:
    settings = ENVIRONMENTS[env]
    alarms = [a["Properties"] for stack in synthesized_app.templates[env]
              for a in resources(synthesized_app, env, stack, "AWS::CloudWatch::Alarm").values()]
    failed = {next(d["Value"] for d in a["Dimensions"]).rsplit(":", 1)[-1]: a for a in alarms
              if a.get("MetricName") == "ExecutionsFailed"}
    assert set(failed) == {f"{env}-{w.name}" for w in loaded().workloads(env)}
    (exhausted,) = [a for a in alarms if a.get("MetricName") == "CapacityExhausted"]
    assert exhausted["Namespace"] == "TrainingPlatform"
    assert exhausted["Dimensions"] == [{"Name": "Environment", "Value": env}]
    for alarm in [*failed.values(), exhausted]:
        assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold" and alarm["Threshold"] == 1
        assert alarm["TreatMissingData"] == "notBreaching"
        (action,) = alarm["AlarmActions"]
        assert "RunNotifications" in json.dumps(action)  # the Runs stack's topic, imported
    (topic_policy,) = resources(synthesized_app, env, "Runs", "AWS::SNS::TopicPolicy").values()
    allows = [s for s in topic_policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Allow"
              and s.get("Sid") != "BudgetsOfThisAccount"]  # dev's monthly budget (test_schedules_and_budgets.py)
    assert [s["Principal"] for s in allows] == [{"Service": "cloudwatch.amazonaws.com"}]
    assert allows[0]["Condition"] == {"StringEquals": {"aws:SourceAccount": settings.account}}


def test_dashboards_page_past_the_widget_limit_and_skip_unsearchable_metric_names() -> None:
    import dataclasses

    import aws_cdk as cdk

    from compiler.inputs.model import Metric
    from platform_constructs.monitoring import TrainingDashboards, dashboard_pages

    base = loaded().workloads("dev")[0]
    quoted = dataclasses.replace(base, name="quoted", metric_definitions=(Metric('say "hi"', "hi=(\\d+)"),))
    pairs = [(dataclasses.replace(base, name=f"w{i}"), f"arn:aws:states:us-east-1:1:stateMachine:dev-w{i}")
             for i in range(2)] + [(quoted, "arn:aws:states:us-east-1:1:stateMachine:dev-quoted")]
    app = cdk.App()
    stack = cdk.Stack(app, "M", env=cdk.Environment(account="111111111111", region="us-east-1"))
    TrainingDashboards(stack, "D", environment="dev", pages=dashboard_pages(pairs, workloads_per_page=2))
    dashboards = [r["Properties"] for r in app.synth().get_stack_by_name("M").template["Resources"].values()
                  if r["Type"] == "AWS::CloudWatch::Dashboard"]
    assert [d["DashboardName"] for d in dashboards] == ["dev-training", "dev-training-2"]
    widgets = [json.loads(d["DashboardBody"])["widgets"] for d in dashboards]
    assert [len(w) for w in widgets] == [1 + 3 * 2, 1 + 3]
    # pages in name order: quoted, w0 | w1; the quoted metric name cannot be searched, so its graph is a note
    (note,) = [w for w in widgets[0] if w["type"] == "text" and "quoted" in w["properties"]["markdown"]]
    assert "no `metric_definitions`" in note["properties"]["markdown"]
    assert "w1: runs" in json.dumps(widgets[1])


def test_dashboards_of_many_workloads_spread_over_stacks_inside_the_template_limit() -> None:
    """300 workloads with SageMaker's maximum of metric definitions each, their ARNs imported as in the real app."""
    import dataclasses

    import aws_cdk as cdk
    from aws_cdk import aws_sns as sns

    from compiler.inputs.model import Metric
    from compiler.sdk.limits import limits
    from stacks.monitoring import add_monitoring_stacks
    from tests.project import ENVIRONMENTS

    base = loaded().workloads("dev")[0]
    metrics = tuple(Metric(f"metric-{i}", f"metric-{i}=([0-9.]+)") for i in range(limits().metrics_max))
    pairs = [(dataclasses.replace(base, name=f"w{i:03d}", base_job_name=f"w{i:03d}", metric_definitions=metrics),
              cdk.Fn.import_value(f"dev-w{i:03d}-arn")) for i in range(300)]
    settings = ENVIRONMENTS["dev"]
    stage = cdk.Stage(cdk.App(), "dev", env=cdk.Environment(account=settings.account, region=settings.region))
    topic = sns.Topic(cdk.Stack(stage, "Runs"), "Topic")
    stacks = add_monitoring_stacks(stage, settings=settings, topic=topic, workloads=pairs)
    assembly = stage.synth()
    names, rows = [], 0
    for stack in stacks:
        written = (Path(assembly.directory) / stack.template_file).stat().st_size
        assert written <= 800_000, (stack.stack_name, written)
        template = json.loads((Path(assembly.directory) / stack.template_file).read_text())
        alarms = [r for r in template["Resources"].values() if r["Type"] == "AWS::CloudWatch::Alarm"]
        assert len(alarms) == (1 if stack.node.id == "Monitoring" else 0)
        for resource in template["Resources"].values():
            if resource["Type"] == "AWS::CloudWatch::Dashboard":
                names.append(resource["Properties"]["DashboardName"])
                body = json.dumps(resource["Properties"]["DashboardBody"])
                rows += body.count(": runs")
    assert [s.node.id for s in stacks][:2] == ["Monitoring", "Monitoring02"]
    assert names == ["dev-training"] + [f"dev-training-{n}" for n in range(2, len(names) + 1)]
    assert rows == 300  # every workload on exactly one page
