"""Fixtures for the trainer tests: token shards, a torchrun launcher, and readers of the metric lines.

`gptlm` is imported by name: the editable install maps it to training/gptlm.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.dont_write_bytecode = True  # training/ is tarred into every job: keep __pycache__ out of it
REPO = Path(__file__).resolve().parents[2]
TRAINING_DIR = REPO / "training"

# The shipped workloads that run the GPT trainer (training/train.py); the platform's smoke workloads run
# training/smoke/smoke.py, tested in test_smoke_script.py; the XGBoost and scikit-learn examples their own scripts
# (training/xgboost, training/sklearn), tested in test_tabular_scripts.py.
WORKLOADS = [p for p in sorted((REPO / "workloads").glob("*.yaml"))
             if yaml.safe_load(p.read_text()).get("entry_point") == "train.py"
             and yaml.safe_load(p.read_text()).get("source_dir") == "../training"]
SMOKE_WORKLOADS = [p for p in sorted((REPO / "workloads").glob("*.yaml"))
                   if yaml.safe_load(p.read_text()).get("entry_point") == "smoke.py"]
CORPUS = REPO / "trainctl" / "data" / "corpus.txt"
# Small enough for 2 CPU cores, big enough that the loss visibly falls.
TINY = ["--model", "tiny", "--seq_len", "64", "--micro_batch_size", "4", "--warmup_steps", "2",
        "--learning_rate", "0.003", "--log_every", "3"]


@pytest.fixture(scope="session")
def shards_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped corpus, tokenized into several shards (so windows come from more than one file)."""
    from gptlm.shards import shards_from_text_file

    out = tmp_path_factory.mktemp("shards")
    shards_from_text_file(CORPUS, out, tokens_per_shard=4096)
    return out


@pytest.fixture
def one_thread():
    """In-process training of the tiny model: on a 2-core runner a second intra-op thread only adds contention."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SM_", "OMPI_", "RANK", "WORLD_SIZE"))}
    env.update(OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def torchrun(args: list[str], out: Path, data: Path, nproc: int = 2, extra_env: dict[str, str] | None = None,
             timeout: int = 120) -> subprocess.CompletedProcess:
    """Run training/train.py under torchrun the way SageMaker's torch_distributed launcher does."""
    env = child_env(SM_CHANNEL_TRAIN=str(data), SM_MODEL_DIR=str(out / "model"),
                    SM_CHECKPOINT_DIR=str(out / "checkpoints"), **(extra_env or {}))
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc),
               str(TRAINING_DIR / "train.py"), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=out)


def workload_metric_regexes() -> dict[str, re.Pattern]:
    """Every metric regex the shipped workloads declare (they must agree on each metric's regex)."""
    found: dict[str, str] = {}
    for path in WORKLOADS:
        for metric in yaml.safe_load(path.read_text()).get("metric_definitions") or []:
            assert found.setdefault(metric["Name"], metric["Regex"]) == metric["Regex"], f"{path}: {metric}"
    return {name: re.compile(regex) for name, regex in found.items()}


def step_lines(output: str) -> list[str]:
    """Rank 0's training metric lines."""
    return [line for line in output.splitlines() if re.search(r"\bstep=\d+ train_loss=", line)]


def losses(output: str) -> list[float]:
    return [float(re.search(r"\btrain_loss=([0-9.]+)", line).group(1)) for line in step_lines(output)]


def val_lines(output: str) -> list[str]:
    """Rank 0's validation metric lines."""
    return [line for line in output.splitlines() if re.search(r"\bstep=\d+ val_loss=", line)]


def val_losses(output: str) -> dict[int, float]:
    """{step: validation loss}; NaN/inf parse as such, so a test can tell them from a missing line."""
    found = (re.search(r"\bstep=(\d+) val_loss=(\S+)", line) for line in val_lines(output))
    return {int(m.group(1)): float(m.group(2)) for m in found if m}
