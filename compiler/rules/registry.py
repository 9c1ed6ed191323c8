"""Where validation rules register: small named functions that report every problem they find.

A workload rule reads one checked `Workload`; an environment rule reads it together with the environment it is
deployed to (FSx present, buckets allowed, room in the network, ...). Rules never raise: they add problems and
warnings to the `Findings`, so one `validate` run lists everything that must change.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings

WorkloadRule = Callable[[Workload, Findings], None]
EnvironmentRule = Callable[[Workload, Environment, Findings], None]

WORKLOAD_RULES: list[WorkloadRule] = []
ENVIRONMENT_RULES: list[EnvironmentRule] = []


def workload_rule(rule: WorkloadRule) -> WorkloadRule:
    WORKLOAD_RULES.append(rule)
    return rule


def environment_rule(rule: EnvironmentRule) -> EnvironmentRule:
    ENVIRONMENT_RULES.append(rule)
    return rule
