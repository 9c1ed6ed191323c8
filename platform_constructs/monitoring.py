"""How an environment's runs are going: CloudWatch dashboards, and an alarm when capacity relaunches run out.

One dashboard per environment (more pages past 40 workloads, since a dashboard holds at most 500 widgets): a
title, then one row per workload with its runs (started, succeeded, failed, capacity relaunches), its
training metrics (the spec's `metric_definitions`) and its instances' GPU, CPU and memory utilization. Job names
change per run, so job metrics are metric searches on the workload's job-name prefix (`compiler.facts.run_metrics`).

The dashboard body is written here as plain JSON (CloudWatch's dashboard body format) rather than built from
`GraphWidget` and `Metric` objects: each of those is a call into the CDK's JavaScript, and a page holds hundreds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_sns as sns
from constructs import Construct

from compiler.facts import run_metrics
from compiler.inputs.model import Workload

_WIDTH = 8
_HEIGHT = 6
_PERIOD = 60


def dashboard_body(title: str, region: str, environment: str, rows: Sequence[tuple[Workload, str]]) -> dict[str, Any]:
    """The body of one dashboard page: a title, then per (workload, state machine ARN) one row of three graphs."""
    widgets: list[dict[str, Any]] = [{"type": "text", "x": 0, "y": 0, "width": 24, "height": 2,
                                      "properties": {"markdown": title}}]
    for index, (workload, arn) in enumerate(rows):
        y = 2 + index * _HEIGHT
        for column, (name, metrics) in enumerate(_graphs(workload, arn, environment)):
            widget: dict[str, Any] = {"type": "metric", "x": column * _WIDTH, "y": y, "width": _WIDTH,
                                      "height": _HEIGHT,
                                      "properties": {"view": "timeSeries", "title": f"{workload.name}: {name}",
                                                     "region": region, "metrics": metrics, "period": _PERIOD}}
            if not metrics:
                widget = {"type": "text", "x": column * _WIDTH, "y": y, "width": _WIDTH, "height": _HEIGHT,
                          "properties": {"markdown": f"**{workload.name}**: no `metric_definitions` to search (a name "
                                         "with a quote or a backslash cannot be searched)"}}
            widgets.append(widget)
    return {"start": "-P7D", "widgets": widgets}


def _graphs(workload: Workload, arn: str, environment: str) -> list[tuple[str, list[Any]]]:
    runs = [[run_metrics.STATES_NAMESPACE, metric, run_metrics.STATE_MACHINE, arn, {"label": label, "stat": "Sum"}]
            for metric, label in ((run_metrics.EXECUTIONS_STARTED, "started"),
                                  (run_metrics.EXECUTIONS_SUCCEEDED, "succeeded"), (run_metrics.EXECUTIONS_FAILED, "failed"))]
    runs.append([run_metrics.NAMESPACE, run_metrics.CAPACITY_RELAUNCHES, run_metrics.ENVIRONMENT, environment,
                 run_metrics.WORKLOAD, workload.name, {"label": "relaunches", "stat": "Sum"}])

    def searches(names: Sequence[str]) -> list[Any]:
        found = []
        for number, name in enumerate(names):
            search = run_metrics.job_metric_search(name, workload.base_job_name, period=_PERIOD)
            if search is not None:
                found.append([{"expression": search, "label": name, "id": f"m{number}", "period": _PERIOD}])
        return found

    training = searches([m.name for m in workload.metric_definitions or ()])
    return [("runs", runs), ("training metrics", training), ("utilization (%)", searches(run_metrics.UTILIZATION))]


def dashboard_pages(workloads: Sequence[tuple[Workload, str]], *, workloads_per_page: int = 40,
                    page_bytes: int = 120_000) -> list[list[tuple[Workload, str]]]:
    """(workload, state machine ARN) pairs in name order, cut into dashboard pages.

    A page ends at `workloads_per_page` workloads (3 widgets each plus the title: under CloudWatch's 500 widgets) or
    at about `page_bytes` of dashboard body, whichever comes first, so a page's share of its stack's template is
    bounded however many metric definitions the workloads have.
    """
    if not 1 <= workloads_per_page <= 150:
        raise ValueError(f"workloads_per_page must be 1-150, not {workloads_per_page}")
    pages: list[list[tuple[Workload, str]]] = [[]]
    size = 0
    for pair in sorted(workloads, key=lambda pair: pair[0].name):
        row = len(json.dumps(dashboard_body("", "", "", [pair])))
        if pages[-1] and (len(pages[-1]) == workloads_per_page or size + row > page_bytes):
            pages.append([])
            size = 0
        pages[-1].append(pair)
        size += row
    return pages


class TrainingDashboards(Construct):
    """Dashboard pages `first_page` .. of an environment's `total_pages` (`dashboards`).

    `pages`: from `dashboard_pages`. Page 1 is `<env>-training`, page n `<env>-training-<n>`.
    """

    def __init__(self, scope: Construct, construct_id: str, *, environment: str,
                 pages: Sequence[Sequence[tuple[Workload, str]]], first_page: int = 1,
                 total_pages: int | None = None) -> None:
        super().__init__(scope, construct_id)
        region = cdk.Stack.of(self).region
        total = total_pages or len(pages)
        self.dashboards: list[cloudwatch.CfnDashboard] = []
        for number, page in enumerate(pages, first_page):
            of = f" (page {number} of {total})" if total > 1 else ""
            title = (f"# Training runs: {environment}{of}\n\nRuns per workload; training metrics and utilization of "
                     "every host of the workload's jobs.")
            self.dashboards.append(cloudwatch.CfnDashboard(
                self, f"Page{number}", dashboard_name=f"{environment}-training" + (f"-{number}" if number > 1 else ""),
                dashboard_body=json.dumps(dashboard_body(title, region, environment, page))))


class CapacityExhaustedAlarm(Construct):
    """The environment's alarm when a run spent every capacity relaunch (`alarm`), sent to `topic`."""

    def __init__(self, scope: Construct, construct_id: str, *, environment: str,
                 topic: sns.ITopic | None = None) -> None:
        super().__init__(scope, construct_id)
        self.alarm = cloudwatch.Metric(
            namespace=run_metrics.NAMESPACE, metric_name=run_metrics.CAPACITY_EXHAUSTED,
            dimensions_map={run_metrics.ENVIRONMENT: environment}, statistic="Sum", period=cdk.Duration.minutes(5),
        ).create_alarm(
            self, "Alarm", threshold=1, evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"A run in {environment} spent every capacity relaunch without getting instances: add "
                              "fallback_instance_types or a training_plan, or raise capacity_retry.max_attempts",
        )
        if topic is not None:
            self.alarm.add_alarm_action(cloudwatch_actions.SnsAction(topic))
