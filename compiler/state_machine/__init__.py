"""A workload's Step Functions state machine: its inputs (`machine`), its input check, its encoding, its definition."""

from compiler.state_machine.asl import INVALID_INPUT
from compiler.state_machine.definition import (
    CREATE_RESOURCE,
    NOTIFICATION_TOPIC_ARN,
    QUOTA_ERRORS,
    THROTTLING_ERRORS,
    build_definition,
    definition_string,
    deploy_time_names,
    substitute_definition,
)
from compiler.state_machine.machine import MachineSpec, Variant, spec_for, state_machine_name

__all__ = [
    "CREATE_RESOURCE",
    "INVALID_INPUT",
    "NOTIFICATION_TOPIC_ARN",
    "QUOTA_ERRORS",
    "THROTTLING_ERRORS",
    "MachineSpec",
    "Variant",
    "build_definition",
    "definition_string",
    "deploy_time_names",
    "spec_for",
    "state_machine_name",
    "substitute_definition",
]
