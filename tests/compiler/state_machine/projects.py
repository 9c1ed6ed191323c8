"""Workloads the shipped specs do not exercise, written as YAML into a throwaway project and loaded like synth does.

Each spec stands for one behaviour of the state machine: fallback instance types after a capacity failure, the
generic Estimator's `str()` encoding, a heterogeneous cluster, a spec with every kind of hyperparameter (and
names that need bracket notation) for hostile execution inputs, the stall watchdog, a wait for instances that
SageMaker bounds (MaxPendingTimeInSeconds), and managed spot.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.project import Project
from compiler.spec import load_workloads
from tests.project import ROOT

PYTORCH = {"framework": "pytorch", "framework_version": "2.8.0", "py_version": "py312", "entry_point": "train.py",
           "source_dir": ".."}

# Primary p5, then p4de and p4d: attempt n runs on variants[n % 3]. max_instance_count lets runs grow the cluster.
FALLBACK = {
    "name": "sm-fallback", **PYTORCH, "instance_type": "ml.p5.48xlarge", "instance_count": 2, "max_instance_count": 3,
    "distribution": {"torch_distributed": {"enabled": True}}, "checkpoints": True,
    "hyperparameters": {"learning_rate": 0.0003, "max_steps": 100, "model": "gpt-125m"},
    "capacity_retry": {"max_attempts": 4, "wait_seconds": 60, "backoff_rate": 1.5,
                       "fallback_instance_types": ["ml.p4de.24xlarge", "ml.p4d.24xlarge"]},
}
# Types whose EFA variables differ: g5.48xlarge needs none (no Environment sent), g5.12xlarge and g6.48xlarge need
# FI_PROVIDER; g6.48xlarge has no verified price in the catalog (the output's cost is null).
FALLBACK_EFA = {
    "name": "sm-fallback-efa", **PYTORCH, "instance_type": "ml.g5.48xlarge", "instance_count": 2,
    "distribution": {"torch_distributed": {"enabled": True}},
    "hyperparameters": {"max_steps": 100},
    "capacity_retry": {"max_attempts": 2, "wait_seconds": 30,
                       "fallback_instance_types": ["ml.g5.12xlarge", "ml.g6.48xlarge"]},
}
# The generic Estimator without source_dir sends str() of each value. `nothing` (null) may become any scalar.
GENERIC = {
    "name": "sm-generic", "image_uri": "123456789012.dkr.ecr.us-east-1.amazonaws.com/trainer@sha256:" + "ab12" * 16,
    "instance_type": "ml.m5.xlarge", "max_run": 7200, "environments": {"dev": {}},
    "hyperparameters": {"mode": "fast", "epochs": 3, "verbose": True, "lr": 0.5, "nothing": None,
                        "layers": [64, 32]},
}
HETERO = {
    "name": "sm-hetero", **PYTORCH,
    "instance_groups": [{"instance_group_name": "gpu", "instance_type": "ml.p4d.24xlarge", "instance_count": 1},
                        {"instance_group_name": "cpu", "instance_type": "ml.c5.18xlarge", "instance_count": 2}],
    "distribution": {"torch_distributed": {"enabled": True}, "instance_groups": ["gpu"]},
    "hyperparameters": {"epochs": 2},
}
# Every JSON type, names that need bracket notation, a count ceiling above the count.
HOSTILE = {
    "name": "sm-hostile", **PYTORCH, "instance_type": "ml.g5.2xlarge", "instance_count": 1, "max_instance_count": 4,
    "max_run": 7200,
    "hyperparameters": {"epochs": 3, "lr": 0.001, "name": "run", "flag": False, "layers": [1, 2],
                        "opts": {"a": 1}, "extra": None, "warmup-steps": 10, "opt.beta": 0.9, "0th": "x",
                        "data/path": "s3://b/k", "big": 5000000000},
}
# The stall watchdog: train:loss must show progress every 5 minutes; one stall relaunch; one capacity fallback.
WATCHED = {
    "name": "sm-watched", **PYTORCH, "instance_type": "ml.g5.2xlarge", "instance_count": 1, "checkpoints": True,
    "max_run": 3600,  # short enough for one look a minute while training (see test_run_watch.py)
    "hyperparameters": {"max_steps": 100},
    "metric_definitions": [{"Name": "train:loss", "Regex": "loss=([0-9\\.]+)"}],
    "stall_watchdog": {"metric": "train:loss", "minutes": 5, "max_relaunches": 1},
    "capacity_retry": {"max_attempts": 1, "wait_seconds": 60, "fallback_instance_types": ["ml.g5.4xlarge"]},
}
# Fallback types that compile alike (the generic Estimator: one image, no Environment, no per-type hyperparameters),
# asked for as one request with ResourceConfig.InstancePreferences. ml.c5.2xlarge has no price in the catalog.
PREFERENCES = {**GENERIC, "name": "sm-preferences",
               "capacity_retry": {"max_attempts": 2, "wait_seconds": 60, "instance_preferences": True,
                                  "fallback_instance_types": ["ml.m5.2xlarge", "ml.c5.2xlarge"]}}
# Accelerated types only and a window of 45 minutes (at least SageMaker's 30): SageMaker bounds the wait with
# StoppingCondition.MaxPendingTimeInSeconds; one capacity relaunch, onto the fallback.
PENDING = {
    "name": "sm-pending", **PYTORCH, "instance_type": "ml.g5.12xlarge", "instance_count": 1, "checkpoints": True,
    "max_run": 3600, "hyperparameters": {"max_steps": 100},
    "capacity_retry": {"max_attempts": 1, "wait_seconds": 60, "capacity_window_minutes": 45,
                       "fallback_instance_types": ["ml.g5.24xlarge"]},
}
# Managed spot: SageMaker bounds the wait for spot capacity with max_wait (2 hours here), never the run's window.
SPOT = {
    "name": "sm-spot", **PYTORCH, "instance_type": "ml.g5.2xlarge", "instance_count": 1, "checkpoints": True,
    "max_run": 3600, "use_spot_instances": True, "max_wait": 7200, "hyperparameters": {"max_steps": 100},
    "capacity_retry": {"max_attempts": 1, "wait_seconds": 60, "fallback_instance_types": ["ml.g5.4xlarge"]},
}
SPECS = {spec["name"]: spec for spec in (FALLBACK, FALLBACK_EFA, GENERIC, HETERO, HOSTILE, WATCHED, PREFERENCES,
                                         PENDING, SPOT)}


def write_project(root: Path, specs: dict[str, dict[str, Any]]) -> Project:
    """A project folder: the repository's cdk.json and cdk.context.json, a train.py, and the specs in workloads/."""
    (root / "workloads").mkdir(parents=True, exist_ok=True)
    for name in ("cdk.json", "cdk.context.json"):
        shutil.copy(ROOT / name, root / name)
    (root / "train.py").write_text("print('training')\n")
    for name, raw in specs.items():
        (root / "workloads" / f"{name}.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    return Project(root)


def load_test_workloads(root: Path, env_name: str = "dev") -> tuple[dict[str, Workload], Environment]:
    """The test specs as they deploy to one environment."""
    project = write_project(root, SPECS)
    envs = project.environments()
    loaded = load_workloads(project, envs)
    return {w.name: w for w in loaded.workloads(env_name)}, envs[env_name]
