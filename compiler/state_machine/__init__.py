"""A workload's Step Functions state machine: its inputs (`machine`), its input check, its encoding, its definition.

The names below are what the rest of the project uses (`from compiler import state_machine as sm`). They are loaded
on first use (PEP 562), so that the package's own modules, which import one another (`from
compiler.state_machine.poll import ...`), never run through a half-initialized package: importing one module of the
package imports that module and what it needs, nothing more.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_WHERE = {
    "INVALID_INPUT": "asl",
    **{name: "definition" for name in ("CREATE_RESOURCE", "NOTIFICATION_TOPIC_ARN", "QUOTA_ERRORS", "THROTTLING_ERRORS",
                                       "build_definition", "definition_string", "deploy_time_names",
                                       "substitute_definition")},
    **{name: "machine" for name in ("MachineSpec", "Variant", "spec_for", "state_machine_name")},
}

__all__ = [
    "CREATE_RESOURCE", "INVALID_INPUT", "NOTIFICATION_TOPIC_ARN", "QUOTA_ERRORS", "THROTTLING_ERRORS", "MachineSpec",
    "Variant", "build_definition", "definition_string", "deploy_time_names", "spec_for", "state_machine_name",
    "substitute_definition",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
