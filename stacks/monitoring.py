"""The monitoring stacks of one environment: its training dashboards and its capacity alarm.

Stateless and apart from the Runs stack (which holds the run logs and the topic), so adding a workload updates
a dashboard here and nothing stateful. `Monitoring` holds the alarm and the first `PAGES_PER_STACK` dashboard
pages; past that, `Monitoring02`, `Monitoring03`, ... hold the next pages. Page n always lives in the same
stack, so a dashboard never moves between stacks (its name is fixed), and each page's size is bounded
(`dashboard_pages`), so each stack stays well inside CloudFormation's 1 MB template limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_sns as sns
from constructs import Construct

from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from platform_constructs.monitoring import CapacityExhaustedAlarm, TrainingDashboards, dashboard_pages

# A page is at most about 120 KB of dashboard body; in the template (escaped, with the state machines' ARNs as
# references) about 150 KB: five pages stay under 800 KB of CloudFormation's 1 MB.
PAGES_PER_STACK = 5


class MonitoringStack(cdk.Stack):
    """Dashboard pages `first_page` .. of the environment's `total_pages`, and, in the first, the capacity alarm."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Environment,
                 pages: Sequence[Sequence[tuple[Workload, str]]], first_page: int, total_pages: int,
                 topic: sns.ITopic | None = None, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description=f"Training dashboards and alarms ({settings.name})",
                         **kwargs)
        self.dashboards = TrainingDashboards(self, "Dashboards", environment=settings.name, pages=pages,
                                             first_page=first_page, total_pages=total_pages)
        self.capacity_alarm = (CapacityExhaustedAlarm(self, "CapacityExhausted", environment=settings.name,
                                                      topic=topic) if first_page == 1 else None)


def add_monitoring_stacks(stage: Construct, *, settings: Environment, topic: sns.ITopic,
                          workloads: Sequence[tuple[Workload, str]]) -> list[MonitoringStack]:
    """`Monitoring` (and `MonitoringNN` past `PAGES_PER_STACK` pages) for (workload, state machine ARN) pairs."""
    pages = dashboard_pages(workloads)
    stacks = []
    for start in range(0, len(pages), PAGES_PER_STACK):
        index = start // PAGES_PER_STACK
        stacks.append(MonitoringStack(
            stage, "Monitoring" if index == 0 else f"Monitoring{index + 1:02d}", settings=settings,
            pages=pages[start:start + PAGES_PER_STACK], first_page=start + 1, total_pages=len(pages),
            topic=topic if index == 0 else None))
    return stacks
