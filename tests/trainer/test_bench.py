"""The throughput benchmark maps GPUs to the catalog's peaks, computes MFU right, and runs without a GPU."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from compiler.facts.catalog import dense_bf16_tflops
from tests.trainer.conftest import REPO, child_env

BENCH = REPO / "bench" / "train_throughput.py"


def _load_bench():
    """bench/ is a folder of scripts, not a package: load the script as a module from its file."""
    spec = importlib.util.spec_from_file_location("train_throughput", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


train_throughput = _load_bench()


@pytest.mark.parametrize("name, key", [
    ("NVIDIA H100 80GB HBM3", "H100"),
    ("NVIDIA H200", "H200"),
    ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
    ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
    ("NVIDIA A10G", "A10G"),
    ("NVIDIA L40S", "L40S"),
    ("Tesla V100-SXM2-16GB", "V100-16GB"),
    ("Tesla V100-SXM2-32GB", "V100-32GB"),
    ("Tesla T4", "T4"),
    ("NVIDIA GeForce RTX 4090", None),
])
def test_gpu_names_map_to_catalog_peaks(name, key):
    assert train_throughput.catalog_gpu(name) == key
    assert key is None or key in dense_bf16_tflops()


def test_mfu():
    # 163,000 tokens/s at 2.427 GFLOP/token = 395.6 TFLOP/s, 40% of 989.
    assert train_throughput.mfu(163_000, 2.427e9, 989.0) == pytest.approx(0.40, abs=0.001)


@pytest.mark.slow
def test_without_a_gpu_it_says_so_and_exits_cleanly():
    result = subprocess.run([sys.executable, str(BENCH), "--cpu-smoke-steps", "1"],
                            env=child_env(CUDA_VISIBLE_DEVICES=""), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "No CUDA GPU found" in result.stdout
    assert "ddp" in result.stdout and "fsdp" in result.stdout and "MFU n/a" in result.stdout
    # Two checkpoints per mode: seconds the first and the next blocked training, seconds the next's background
    # write took, all measured.
    header, *rows = [line for line in result.stdout.splitlines() if line.startswith(("mode ", "ddp ", "fsdp "))]
    assert header.split()[-3:] == ["ckpt_first_s", "ckpt_block_s", "ckpt_write_s"]
    assert len(rows) == 2 and all(float(value) >= 0 for row in rows for value in row.split()[-3:])
