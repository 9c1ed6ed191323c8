"""The monitoring stack of one environment: its training dashboards and its capacity alarm.

Stateless and apart from the Runs stack (which holds the run logs and the topic), so adding a workload updates
a dashboard here and nothing stateful.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_sns as sns
from constructs import Construct

from compiler.environments import Environment
from platform_constructs.monitoring import TrainingDashboards
from platform_constructs.workload import TrainingWorkload


class MonitoringStack(cdk.Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Environment, topic: sns.ITopic,
                 workloads: Sequence[TrainingWorkload], **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description=f"Training dashboards and alarms ({settings.name})",
                         **kwargs)
        self.dashboards = TrainingDashboards(
            self, "Dashboards", environment=settings.name, topic=topic,
            workloads=[(w.workload, w.state_machine_arn) for w in workloads])
