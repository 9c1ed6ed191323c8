"""SMP's `parameters`, checked rule by rule as the SDK's `fw_utils.validate_mp_config` checks them.

`check_mp_parameters` runs its rules in groups (values, partitioning, memory weight, ddp); these tests hold each rule
at its boundary and the order of the problems across the groups, which is the order the SDK would raise them in.
"""

from __future__ import annotations

from typing import Any

import pytest

from compiler.compilation.strategies.smp import check_mp_parameters


def problems(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(parameter, message) for each problem, in the order reported."""
    found: list[tuple[str, str]] = []
    check_mp_parameters(config, lambda where, message: found.append((where.rsplit(".", 1)[1], message)))
    return found


@pytest.mark.parametrize("config", [
    {},
    {"pipeline": "_only_forward"},  # accepted, though not offered in the message
    {"partitions": 2, "microbatches": 1, "default_partition": 1},
    {"auto_partition": False, "default_partition": 0, "partitions": 1},
    {"memory_weight": 0}, {"memory_weight": 1.0},
    {"partition_file": "partitions.json"},
    {"ddp": True, "ddp_port": 0, "ddp_dist_backend": "nccl"},
    {"ddp": False, "horovod": True},
])
def test_parameters_at_the_edge_of_each_rule_pass(config: dict[str, Any]) -> None:
    assert problems(config) == []


@pytest.mark.parametrize(("config", "key", "message"), [
    ({"pipeline": "zigzag"}, "pipeline", "must be one of simple, interleaved"),
    ({"partitions": True}, "partitions", "must be a positive whole number"),  # true is an int to Python, not a count
    ({"active_microbatches": 0}, "active_microbatches", "must be a positive whole number"),
    ({"contiguous": 1}, "contiguous", "must be true or false"),
    ({"partition_file": 3}, "partition_file", "must be a string"),
    ({"default_partition": 2, "partitions": 2}, "default_partition", "must be a whole number below partitions"),
    ({"default_partition": 0}, "default_partition", "must be a whole number below partitions"),
    ({"memory_weight": True}, "memory_weight", "must be between 0.0 and 1.0"),
    ({"memory_weight": -0.01}, "memory_weight", "must be between 0.0 and 1.0"),
    ({"ddp_dist_backend": "nccl"}, "ddp_dist_backend", "needs ddp to be set as well"),
    ({"ddp": True, "ddp_port": -1}, "ddp_port", "-1 is not a port number"),
    ({"ddp": True, "ddp_port": True}, "ddp_port", "True is not a port number"),
])
def test_each_rule_at_its_boundary(config: dict[str, Any], key: str, message: str) -> None:
    [(found_key, found_message)] = problems(config)
    assert found_key == key and message in found_message


def test_problems_come_in_the_sdks_order() -> None:
    config = {"ddp_port": "x", "horovod": True, "memory_weight": 2, "default_partition": 3, "partition_file": 1,
              "ddp": "yes", "partitions": 0, "pipeline": "zigzag"}
    assert [key for key, _ in problems(config)] == [
        "pipeline", "partitions", "ddp", "partition_file", "default_partition", "memory_weight", "ddp_port", "ddp"]


def test_without_auto_partition_a_default_partition_is_required() -> None:
    assert problems({"auto_partition": False, "partitions": 2}) == [
        ("default_partition", "is required when auto_partition is false")]
