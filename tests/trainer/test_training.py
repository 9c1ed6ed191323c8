"""Two-process CPU (gloo) training through the real entry point: DDP and FSDP2 learn, agree, log training and
validation metric lines, and a run interrupted by SIGTERM resumes to exactly the weights of an uninterrupted run."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from gptlm.checkpoint import is_complete
from gptlm.sampling import HELD_OUT_FRACTION

from tests.trainer.conftest import (
    TINY,
    TRAINING_DIR,
    child_env,
    losses,
    step_lines,
    torchrun,
    val_lines,
    val_losses,
    workload_metric_regexes,
)

pytestmark = pytest.mark.slow

STEPS = 12
EVAL_EVERY = 4
RUN = [*TINY, "--max_steps", str(STEPS), "--checkpoint_every", "4", "--keep_checkpoints", "2",
       "--grad_accum_steps", "2", "--eval_every", str(EVAL_EVERY), "--eval_batches", "4"]


@pytest.fixture(scope="module")
def uninterrupted(shards_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """One uninterrupted run per mode: {mode: (output folder, rank-0 output)}."""
    runs = {}
    for mode in ("ddp", "fsdp"):
        out = tmp_path_factory.mktemp(f"full-{mode}")
        result = torchrun([*RUN, "--parallelism", mode], out, shards_dir)
        assert result.returncode == 0, result.stdout + result.stderr
        runs[mode] = (out, result.stdout)
    return runs


def _weights(out: Path) -> dict[str, torch.Tensor]:
    return torch.load(out / "model" / "model.pt")


@pytest.mark.parametrize("mode", ["ddp", "fsdp"])
def test_loss_falls(uninterrupted, mode):
    values = losses(uninterrupted[mode][1])
    assert len(values) == STEPS // 3
    assert values[-1] < values[0] - 0.5, values


@pytest.mark.parametrize("mode", ["ddp", "fsdp"])
def test_validation_loss_every_eval_every_steps_is_finite_and_falls(uninterrupted, mode):
    output = uninterrupted[mode][1]
    total, train, held = map(int, re.search(r"windows=(\d+) train_windows=(\d+) eval_windows=(\d+)", output).groups())
    assert train + held == total and held == math.ceil(total * HELD_OUT_FRACTION)
    values = val_losses(output)
    assert list(values) == list(range(EVAL_EVERY, STEPS + 1, EVAL_EVERY)), output  # rank 0 only, once each
    assert all(math.isfinite(v) for v in values.values()), values
    assert values[STEPS] < values[EVAL_EVERY] - 0.3, values


@pytest.mark.parametrize("mode", ["ddp", "fsdp"])
def test_every_metric_line_is_read_by_the_workload_regexes(uninterrupted, mode):
    """Each regex captures a number from its own kind of line only: train:loss must not read val_loss=."""
    regexes = workload_metric_regexes()
    for lines, names in ((step_lines(uninterrupted[mode][1]), {n for n in regexes if n.startswith("train:")}),
                         (val_lines(uninterrupted[mode][1]), {"validation:loss"})):
        assert lines
        for line in lines:
            for name, regex in regexes.items():
                match = regex.search(line)
                if name in names:
                    assert match is not None and float(match.group(1)) >= 0, (name, line)
                else:
                    assert match is None, (name, line)


def test_ddp_and_fsdp_reach_the_same_weights(uninterrupted):
    """Same seed, data and schedule: sharding must not change the maths (up to float reduction order)."""
    ddp, fsdp = _weights(uninterrupted["ddp"][0]), _weights(uninterrupted["fsdp"][0])
    assert ddp.keys() == fsdp.keys()
    for key in ddp:
        torch.testing.assert_close(ddp[key], fsdp[key], atol=1e-4, rtol=1e-4)


def test_periodic_checkpoints_are_pruned_and_the_model_is_exported(uninterrupted):
    out = uninterrupted["fsdp"][0]
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["step_000000008", "step_000000012"]
    marker = json.loads((out / "checkpoints" / "step_000000012" / "done.rank1.json").read_text())
    assert marker["world_size"] == 2 and marker["step"] == 12
    config = json.loads((out / "model" / "config.json").read_text())
    assert config["model_config"]["n_layer"] == 2 and config["train_config"]["parallelism"] == "fsdp"


@pytest.mark.parametrize("mode, target", [("fsdp", "self"), ("ddp", "parent")])
def test_resume_after_sigterm_matches_an_uninterrupted_run(uninterrupted, shards_dir, tmp_path, mode, target):
    """"self": rank 0 gets SIGTERM after step 3 (stops exactly there). "parent": torchrun gets it and forwards
    it to both workers, as on a spot interruption; they agree on a step (3 or a little later) and stop there."""
    args = [*RUN, "--parallelism", mode]
    fault = {"GPTLM_FAULT_SIGTERM_AFTER_STEP": "3", "GPTLM_FAULT_SIGTERM_TARGET": target}
    stopped = torchrun(args, tmp_path, shards_dir, extra_env=fault)
    assert stopped.returncode != 0  # the job did not finish; SageMaker relaunches it
    match = re.search(r"SIGTERM received: stopped at step=(\d+)", stopped.stdout)
    assert match, stopped.stdout + stopped.stderr
    k = int(match.group(1))
    assert k == 3 if target == "self" else 3 <= k < STEPS  # 9 steps of margin for the forwarding
    assert not (tmp_path / "model" / "model.pt").exists()
    assert f"step_{k:09d}" in {p.name for p in (tmp_path / "checkpoints").iterdir()}

    resumed = torchrun(args, tmp_path, shards_dir)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"resumed from checkpoint step={k}" in resumed.stdout
    assert re.search(rf"^first step done step={k + 1} seconds_since_start=\d+\.\d$", resumed.stdout, re.MULTILINE)
    expected, actual = _weights(uninterrupted[mode][0]), _weights(tmp_path)
    for key in expected:
        assert torch.equal(expected[key], actual[key]), key
    # Same weights and the same held-out windows after the resume: the same validation loss, to the digit.
    assert val_lines(resumed.stdout)[-1] == val_lines(uninterrupted[mode][1])[-1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_mpi_launch_trains(shards_dir, tmp_path):
    """Two processes started the way mpirun starts them: only OMPI_COMM_WORLD_* and SM_HOSTS to go on."""
    port = str(_free_port())
    procs = []
    for rank in range(2):
        env = child_env(OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE="2",
                        OMPI_COMM_WORLD_LOCAL_RANK=str(rank), OMPI_COMM_WORLD_LOCAL_SIZE="2",
                        SM_HOSTS='["localhost"]', SM_CURRENT_HOST="localhost", MASTER_PORT=port,
                        SM_CHANNEL_TRAIN=str(shards_dir), SM_MODEL_DIR=str(tmp_path / "model"),
                        SM_CHECKPOINT_DIR=str(tmp_path / "checkpoints"))
        env.pop("MASTER_ADDR", None)
        procs.append(subprocess.Popen([sys.executable, str(TRAINING_DIR / "train.py"), *TINY, "--max_steps", "6"],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      cwd=tmp_path))
    deadline = time.monotonic() + 120
    outputs = [p.communicate(timeout=max(deadline - time.monotonic(), 1))[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert "launcher=mpi backend=gloo world_size=2" in outputs[0]
    assert len(losses(outputs[0])) == 2 and losses(outputs[1]) == []  # rank 0 logs, rank 1 stays quiet
    assert (tmp_path / "model" / "model.pt").is_file()
    assert os.listdir(tmp_path / "checkpoints") == ["step_000000006"]


def test_sigterm_during_a_background_write_exits_143_with_complete_checkpoints(uninterrupted, shards_dir, tmp_path):
    """Step 4's write is still running (slowed by 3 s) when rank 0 gets SIGTERM after step 5: the stop waits for
    it, saves step 5, and both ranks exit 143; the resume then matches an uninterrupted run bitwise."""
    args = [*RUN, "--parallelism", "ddp"]
    fault = {"GPTLM_FAULT_SLOW_WRITE": "4:3", "GPTLM_FAULT_SIGTERM_AFTER_STEP": "5"}
    stopped = torchrun(args, tmp_path, shards_dir, extra_env=fault)
    assert re.findall(r"exitcode\s*:\s*(-?\d+)", stopped.stderr.split("Failures:")[-1]) == ["143", "143"], (
        stopped.stdout + stopped.stderr)
    saved = {int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"checkpoint saved step=(\d+) .* background_seconds=([0-9.]+)", stopped.stdout)}
    assert list(saved) == [4, 5], stopped.stdout
    assert saved[4] >= 3  # it was written in the background while steps 5 ran
    for step in (4, 5):
        assert is_complete(tmp_path / "checkpoints" / f"step_{step:09d}") is not None
    resumed = torchrun(args, tmp_path, shards_dir)
    assert resumed.returncode == 0 and "resumed from checkpoint step=5" in resumed.stdout, resumed.stderr
    expected, actual = _weights(uninterrupted["ddp"][0]), _weights(tmp_path)
    assert all(torch.equal(expected[key], actual[key]) for key in expected)


def test_a_kill_during_a_background_write_leaves_the_previous_checkpoint_to_resume(uninterrupted, shards_dir,
                                                                                   tmp_path):
    """SIGKILL (no handler runs) while step 8's write is in flight: step 8 is never marked complete, the resume
    starts from step 4, and the run still ends with the uninterrupted run's weights."""
    env = child_env(SM_CHANNEL_TRAIN=str(shards_dir), SM_MODEL_DIR=str(tmp_path / "model"),
                    SM_CHECKPOINT_DIR=str(tmp_path / "checkpoints"), GPTLM_FAULT_SLOW_WRITE="8:120")
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               str(TRAINING_DIR / "train.py"), *RUN, "--parallelism", "fsdp"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=tmp_path, start_new_session=True)
    seen = []
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:  # "checkpoint saved step=4" is logged once step 8's write has begun
            seen.append(line)
            if line.startswith("checkpoint saved step=4 ") or time.monotonic() > deadline:
                break
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert seen[-1].startswith("checkpoint saved step=4 "), "".join(seen)
    assert (tmp_path / "checkpoints" / "step_000000008").is_dir()
    assert is_complete(tmp_path / "checkpoints" / "step_000000008") is None

    resumed = torchrun([*RUN, "--parallelism", "fsdp"], tmp_path, shards_dir)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resumed from checkpoint step=4" in resumed.stdout
    expected, actual = _weights(uninterrupted["fsdp"][0]), _weights(tmp_path)
    assert all(torch.equal(expected[key], actual[key]) for key in expected)
