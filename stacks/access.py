"""The access stack of one environment: what every training job's role shares.

Each workload's own execution role (its data, output and checkpoint prefixes, its image) lives with the workload;
this stack holds the statements AWS cannot scope to one workload, so a new workload never changes it. SageMaker's
log group is the account's, not the environment's: nothing here sets anything on it (platform_constructs/training_jobs.py).
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from constructs import Construct

from compiler.inputs.environments import Environment
from platform_constructs.network import TrainingNetwork
from platform_constructs.training_jobs import TrainingJobsAccess


class AccessStack(cdk.Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Environment, network: TrainingNetwork,
                 **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description=f"Training platform access ({settings.name})", **kwargs)
        self.training_jobs = TrainingJobsAccess(
            self, "TrainingJobs", vpc=network.vpc, subnets=network.training_subnets,
            security_groups=[],  # each workload's role may use its own job security group only
        )
