"""The contract SageMaker's training container gives an entry point, given here: the hyperparameters as the toolkit
passes them on the command line, and the `SM_*` variables it sets."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler.inputs.model import Workload

HOST = "algo-1"  # SageMaker's name for the first (here: only) host


class LocalRunError(ValueError):
    """Something about the local run's options; the message names the option to change."""


def parse_pairs(items: list[str], option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise LocalRunError(f"{option} {item!r}: expected KEY=VALUE")
        pairs[key.strip()] = value
    return pairs


def toolkit_value(value: Any) -> str:
    """How the SageMaker toolkit writes one hyperparameter on the command line (mapping.to_cmd_args)."""
    if isinstance(value, Mapping):
        return ",".join(f"{k}={v}" for k, v in sorted(value.items()))
    return str(value)


def toolkit_args(hyperparameters: Mapping[str, Any]) -> list[str]:
    """The SDK json-encodes each value and the toolkit decodes it, so the values arrive as YAML wrote them."""
    decoded = {k: json.loads(json.dumps(v)) for k, v in hyperparameters.items()}
    args: list[str] = []
    for key in sorted(decoded):
        args += [f"--{key}" if len(key) > 1 else f"-{key}", toolkit_value(decoded[key])]
    return args


def sm_environment(workload: Workload, hyperparameters: Mapping[str, Any], channels: Mapping[str, Path], out: Path,
                   args: list[str], num_gpus: int) -> dict[str, str]:
    """The SM_* variables the training toolkit sets (sagemaker_training.environment.to_env_vars)."""
    env = {
        "SM_MODEL_DIR": str(out / "model"),
        "SM_OUTPUT_DIR": str(out / "output"),
        "SM_OUTPUT_DATA_DIR": str(out / "output" / "data"),
        "SM_INPUT_DIR": str(out / "input"),
        "SM_CHECKPOINT_DIR": str(out / "checkpoints"),  # the trainer's override of /opt/ml/checkpoints
        "SM_MODULE_DIR": str(out / "code"),
        "SM_USER_ENTRY_POINT": workload.code.program if workload.code else "",
        "SM_CHANNELS": json.dumps(sorted(channels)),
        "SM_HPS": json.dumps(dict(hyperparameters), sort_keys=True),
        "SM_HOSTS": json.dumps([HOST]),
        "SM_CURRENT_HOST": HOST,
        "SM_CURRENT_INSTANCE_TYPE": "local",
        "SM_NUM_GPUS": str(num_gpus),
        "SM_NUM_CPUS": str(os.cpu_count() or 1),
        "SM_USER_ARGS": json.dumps(args),
        "SM_FRAMEWORK_PARAMS": "{}",  # no smddp flag: locally the trainer uses gloo / NCCL
        "SM_LOG_LEVEL": "20",
    }
    for name, path in channels.items():
        env[f"SM_CHANNEL_{name.upper()}"] = str(path)
    for key, value in hyperparameters.items():
        env[f"SM_HP_{key.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env
