"""What an execution's history says about its training jobs.

The history is the one record of every training job a run launched, relaunches included: each `createTrainingJob`
task is scheduled with the job's name and resources in its parameters. Reading those keeps this module independent
of the definition's state names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trainctl.common.aws import Clients, aws_errors
from trainctl.common.target import Target


def history(clients: Clients, target: Target, execution_arn: str) -> list[dict[str, Any]]:
    """Every event of the execution, oldest first."""
    events: list[dict[str, Any]] = []
    request: dict[str, Any] = {"executionArn": execution_arn, "maxResults": 1000}
    with aws_errors(target, "reading the execution's history"):
        while True:
            page = clients.sfn.get_execution_history(**request)
            events += page.get("events", [])
            if not page.get("nextToken"):
                break
            request["nextToken"] = page["nextToken"]
    return sorted(events, key=lambda e: e["id"])


@dataclass(frozen=True)
class Launch:
    """One CreateTrainingJob the execution scheduled: a job, with what it runs on."""

    job_name: str
    instance_type: str
    instance_count: int

    @property
    def resources(self) -> str:
        return f"{self.instance_count} x {self.instance_type}"


def json_or_none(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


# CreateTrainingJob tasks: the AWS SDK integration's (`aws-sdk:sagemaker`, since issue 21) and the optimized
# `.sync` one's (`sagemaker`, in the history of runs from before).
CREATE_RESOURCE_TYPES = ("aws-sdk:sagemaker", "sagemaker")


def _creates_a_job(details: Mapping[str, Any]) -> bool:
    return (details.get("resourceType") in CREATE_RESOURCE_TYPES
            and str(details.get("resource", "")).startswith("createTrainingJob"))


def launch_of(event: Mapping[str, Any]) -> Launch | None:
    """The job a history event schedules, if it schedules one."""
    details = event.get("taskScheduledEventDetails") or {}
    if not _creates_a_job(details):
        return None
    parameters = json_or_none(details.get("parameters")) or {}
    name = parameters.get("TrainingJobName")
    if not name:
        return None
    resources = parameters.get("ResourceConfig") or {}
    groups = resources.get("InstanceGroups") or []
    if groups:
        kind = " + ".join(f"{g.get('InstanceCount')} x {g.get('InstanceType')}" for g in groups)
        return Launch(name, kind, sum(int(g.get("InstanceCount", 0)) for g in groups))
    return Launch(name, str(resources.get("InstanceType", "?")), int(resources.get("InstanceCount", 0)))


def launches(events: list[dict[str, Any]]) -> list[Launch]:
    """The training jobs of the execution in launch order (a task retried under the same name counts once)."""
    found: dict[str, Launch] = {}
    for event in events:
        launch = launch_of(event)
        if launch is not None and launch.job_name not in found:
            found[launch.job_name] = launch
    return list(found.values())


def create_failure(event: Mapping[str, Any]) -> str | None:
    """`error: cause` of a CreateTrainingJob call that failed without a job (throttling, quota), if it is one."""
    details = event.get("taskFailedEventDetails") or {}
    if _creates_a_job(details) and details.get("error") != "States.TaskFailed":
        return f"{details.get('error', '')}: {details.get('cause', '')}"
    return None
