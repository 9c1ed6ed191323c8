"""Fixtures for the trainer tests: `training/gpt` on sys.path, token shards, and a torchrun launcher."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.dont_write_bytecode = True  # training/gpt is tarred into every job: keep __pycache__ out of it
REPO = Path(__file__).resolve().parents[2]
GPT_DIR = REPO / "training"
if str(GPT_DIR) not in sys.path:
    sys.path.insert(0, str(GPT_DIR))

WORKLOADS = sorted((REPO / "workloads").glob("*.yaml"))
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


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SM_", "OMPI_", "RANK", "WORLD_SIZE"))}
    env.update(OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def torchrun(args: list[str], out: Path, data: Path, nproc: int = 2, extra_env: dict[str, str] | None = None,
             timeout: int = 120) -> subprocess.CompletedProcess:
    """Run training/gpt/train.py under torchrun the way SageMaker's torch_distributed launcher does."""
    env = child_env(SM_CHANNEL_TRAIN=str(data), SM_MODEL_DIR=str(out / "model"),
                    SM_CHECKPOINT_DIR=str(out / "checkpoints"), **(extra_env or {}))
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc),
               str(GPT_DIR / "train.py"), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=out)


def workload_metric_regexes() -> dict[str, re.Pattern]:
    """Every metric regex the shipped workloads declare (they must agree on each metric's regex)."""
    found: dict[str, str] = {}
    for path in WORKLOADS:
        for metric in yaml.safe_load(path.read_text()).get("metric_definitions") or []:
            assert found.setdefault(metric["Name"], metric["Regex"]) == metric["Regex"], f"{path}: {metric}"
    return {name: re.compile(regex) for name, regex in found.items()}


def step_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if re.search(r"\bstep=\d+ loss=", line)]


def losses(output: str) -> list[float]:
    return [float(re.search(r"\bloss=([0-9.]+)", line).group(1)) for line in step_lines(output)]
