"""Which workload stack holds which workload, and whether each stack stays inside CloudFormation's limits.

A workload goes to shard sha256(name) % `workload_shards` (an environment setting in cdk.json), so adding or
removing a workload never moves another one: a move would collide on the state machine's fixed name. Changing
`workload_shards` moves most workloads, which is why it is a setting and not derived from today's count.
The compile pipeline, which `validate` and synth both run, checks each shard's size with `shard_problem`
(compiler/rules/layout.py) before any construct exists.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence

from compiler.errors import Problem
from compiler.inputs.environments import Environment

# CloudFormation: 500 resources and 1 MB per template (uploaded through S3). Stay well below both.
MAX_STACK_RESOURCES = 400
MAX_TEMPLATE_BYTES = 800_000
# As the template file is written (indented JSON). Per workload, beside its definition: two roles, their policies, the
# alarm, the state machine's substitutions and other properties, its job security group with its rules (about 2.3 KB)
# and, for a workload that reads FSx, the eight Lustre rules with the file system (about 4.4 KB more). Per shard:
# description, parameters, rules, assets.
PER_WORKLOAD_OVERHEAD_BYTES = 16_500
FSX_READER_BYTES = 4_500
FSX_CHANNEL = "FileSystemDataSource"  # in the definition's request when the workload reads FSx
PER_SHARD_BYTES = 2_000


def shard_of(workload: str, shards: int) -> int:
    """Stable shard of a workload name: depends on nothing but the name and the shard count."""
    return int.from_bytes(hashlib.sha256(workload.encode()).digest()[:8], "big") % shards


SHARD_STACK_PREFIX = "Workloads"  # a shard's stack name: the prefix and two digits


def shard_stack_name(index: int) -> str:
    return f"{SHARD_STACK_PREFIX}{index:02d}"


def workload_template_bytes(definition: str, extra: int = 0) -> int:
    """A safe estimate of what one workload adds to its shard's template: its definition (a JSON string there), the
    resources beside it, and `extra` (what else it brings: its schedule, compiler/compilation/schedules.py)."""
    return (len(json.dumps(definition)) + PER_WORKLOAD_OVERHEAD_BYTES
            + (FSX_READER_BYTES if FSX_CHANNEL in definition else 0) + extra)


def shard_template_bytes(workloads: Iterable[int]) -> int:
    """A shard's template size from what each of its workloads adds (`workload_template_bytes`)."""
    return PER_SHARD_BYTES + sum(workloads)


def shard_problem(env: Environment, index: int, workloads: int, template_bytes: int) -> Problem | None:
    """The refusal for a shard whose template would near CloudFormation's 1 MB limit, naming the setting to raise."""
    if template_bytes <= MAX_TEMPLATE_BYTES:
        return None
    return Problem("cdk.json", f"{env.name}.workload_shards", (
        f"{env.name}/{shard_stack_name(index)} would hold {workloads} workloads in about {template_bytes:,} bytes "
        f"(limit {MAX_TEMPLATE_BYTES:,} of CloudFormation's 1 MB): raise workload_shards above {env.workload_shards} "
        "(a change moves workloads between stacks: see docs/infrastructure-changes.md)"))


def too_large_alone(workload_bytes: int) -> int | None:
    """The template bytes of a shard holding only this workload (`workload_template_bytes`), when that alone is too
    large: no workload_shards setting can help then (the workload's own problem, `alone_problem`); None when it
    fits."""
    alone = shard_template_bytes([workload_bytes])
    return alone if alone > MAX_TEMPLATE_BYTES else None


def alone_problem(source: str, env: Environment, template_bytes: int, counts: int) -> Problem:
    """The refusal of a workload whose stack would be too large with nothing else in it, naming what grows it."""
    cause = (f"its state machine checks the cost ceiling of each of the {counts} instance counts a run may ask for "
             "(max_run_cost_usd): lower max_instance_count" if counts > 1 else "its requests fill it (hyperparameters and "
             "environment, repeated for each fallback instance type): shorten them")
    return Problem(source, "max_instance_count" if counts > 1 else "", (
        f"its stack in {env.name} would take about {template_bytes:,} bytes with no other workload in it (limit "
        f"{MAX_TEMPLATE_BYTES:,} of CloudFormation's 1 MB), so no workload_shards setting can hold it; {cause}"))


def layout_problems(env: Environment, shards: Mapping[int, Sequence[int]]) -> list[Problem]:
    """Every shard of one environment that would be too large, given what each of its workloads adds (by shard
    index, as the plan groups them). A workload too large alone is left out: it is refused by itself
    (`alone_problem`)."""
    problems = []
    for index, sizes in sorted(shards.items()):
        fitting = [size for size in sizes if too_large_alone(size) is None]
        problem = shard_problem(env, index, len(fitting), shard_template_bytes(fitting))
        if problem is not None:
            problems.append(problem)
    return problems
