"""Teardown stress: launch short multi-rank CPU (gloo) runs of the real entry point many times and count every rank
that did not exit with the code its path must give.

A finished run must exit 0 on every rank, every time; a run stopped by SIGTERM must exit 143 on every rank after
a complete checkpoint, and its resume 0. An abort at interpreter exit ("terminate called without an active
exception", SIGABRT) was seen in about 1 of 15 two-rank launches before the orderly shutdown (gptlm.shutdown).

    python bench/teardown_stress.py                        # 200 launches over every scenario, 2 at a time
    python bench/teardown_stress.py --runs 400 --ranks 4 --scenario mpi-sigterm

Scenarios (each launch is a fresh output folder; each run trains the tiny model for a few steps, saves a
checkpoint and exports the model, which is where the teardown used to abort):
- torchrun-ddp / torchrun-fsdp: `torch.distributed.run --standalone`, its agent hosts the rendezvous store;
  the launcher's own exit code is 0 only when every rank exited 0;
- mpi: one process per rank started the way mpirun starts them (OMPI_COMM_WORLD_*), rank 0 hosts the store;
- smddp: the MPI launch with SageMaker data parallel on (SM_FRAMEWORK_PARAMS), against a stand-in for SMDDP's
  process-group backend (`smddp`, gloo underneath; the real one exists only in SageMaker's GPU containers): the
  trainer then also makes its gloo control group, as on GPUs, and must tear both groups down;
- *-sigterm: rank 0 gets SIGTERM after step 1; every rank must exit 143, then a resume 0.

Prints one line per scenario (launches, failures, seconds per launch) and each failure's last output; exits 1 on any
failure. The test suite runs a few dozen launches through `stress()`; hundreds are for this script.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENTRY = REPO / "training" / "train.py"
CORPUS = REPO / "trainctl" / "data" / "corpus.txt"
TIMEOUT_S = 180
EXIT_INTERRUPTED = 143
SCENARIOS = ("torchrun-ddp", "torchrun-fsdp", "mpi", "torchrun-sigterm", "mpi-sigterm", "smddp", "smddp-sigterm")
# The tiny model, three steps, a checkpoint at the last step and the export: every teardown-relevant object exists.
ARGS = ["--model", "tiny", "--seq_len", "64", "--micro_batch_size", "2", "--warmup_steps", "1", "--log_every", "1",
        "--max_steps", "3", "--checkpoint_every", "3"]
FAULT = {"GPTLM_FAULT_SIGTERM_AFTER_STEP": "1", "GPTLM_FAULT_SIGTERM_TARGET": "self"}
SMDDP_PARAMS = '{"sagemaker_distributed_dataparallel_enabled": true}'
# Stand-in for smdistributed.dataparallel.torch.torch_smddp: importing it registers the `smddp` backend; SMDDP reads
# rank and size from its MPI launch, the stand-in from the same Open MPI variables.
SMDDP_STAND_IN = '''"""Stand-in for SMDDP's process-group backend (bench/teardown_stress.py): gloo under the name smddp."""
import os

import torch.distributed as dist

os.environ.setdefault("RANK", os.environ["OMPI_COMM_WORLD_RANK"])
os.environ.setdefault("WORLD_SIZE", os.environ["OMPI_COMM_WORLD_SIZE"])
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")


def _create(store, rank, size, timeout):
    return dist.ProcessGroupGloo(store, rank, size, timeout)


dist.Backend.register_backend("smddp", _create, devices=["cpu"])
'''
_IN_USE = re.compile(r"address already in use|EADDRINUSE", re.IGNORECASE)
# One entry of the agent's failure report: "rank      : 1 (local_rank: 1)" then "exitcode  : -6 (pid: ...)".
_TORCHRUN_FAILURE = re.compile(r"^\s*rank\s*:\s*(\d+).*\n\s*exitcode\s*:\s*(-?\d+)", re.MULTILINE)


@dataclass
class Launch:
    """One launch: each rank's exit code (in rank order) and everything the ranks printed."""

    codes: list[int]
    output: str


@dataclass
class Outcome:
    scenario: str
    launches: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


def _env(data: Path, out: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SM_", "OMPI_", "RANK", "WORLD_SIZE", "LOCAL_", "MASTER_", "GPTLM_"))}
    env.update(OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", SM_CHANNEL_TRAIN=str(data),
               SM_MODEL_DIR=str(out / "model"), SM_CHECKPOINT_DIR=str(out / "checkpoints"))
    env.update(extra)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(data: Path, out: Path, ranks: int, args: list[str], extra: dict[str, str], entry: Path = ENTRY) -> Launch:
    """The launch SageMaker's torch_distributed uses. Per-rank codes come from the agent's failure report; a
    launch whose agent exits 0 had every rank exit 0."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(ranks),
               str(entry), *args]
    done = subprocess.run(command, env=_env(data, out, extra), capture_output=True, text=True, timeout=TIMEOUT_S,
                          cwd=out)
    output = done.stdout + done.stderr
    if done.returncode == 0:
        return Launch([0] * ranks, output)
    reported = {int(rank): int(code) for rank, code in _TORCHRUN_FAILURE.findall(output)}
    if not reported:  # the agent failed without a report: count it as rank 0's failure
        reported = {0: done.returncode}
    return Launch([reported.get(rank, 0) for rank in range(ranks)], output)  # ranks absent from the report exited 0


def mpi(data: Path, out: Path, ranks: int, args: list[str], extra: dict[str, str], entry: Path = ENTRY) -> Launch:
    """One process per rank with only Open MPI's variables and SM_HOSTS, as mpirun starts them: rank 0 hosts the
    rendezvous store, so it must be the last to leave."""
    port = str(_free_port())
    procs = []
    for rank in range(ranks):
        env = _env(data, out, {**extra, "OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(ranks),
                               "OMPI_COMM_WORLD_LOCAL_RANK": str(rank), "OMPI_COMM_WORLD_LOCAL_SIZE": str(ranks),
                               "SM_HOSTS": '["localhost"]', "SM_CURRENT_HOST": "localhost", "MASTER_PORT": port})
        procs.append(subprocess.Popen([sys.executable, str(entry), *args], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, cwd=out))
    deadline = time.monotonic() + TIMEOUT_S
    outputs = []
    for proc in procs:
        try:
            outputs.append(proc.communicate(timeout=max(deadline - time.monotonic(), 1))[0])
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            outputs.append(f"rank timed out after {TIMEOUT_S} s\n" + (proc.communicate()[0] or ""))
    text = "".join(f"--- rank {rank}\n{output}" for rank, output in enumerate(outputs))
    return Launch([proc.returncode for proc in procs], text)


def smddp_stand_in(root: Path) -> Path:
    """Write the SMDDP stand-in package under `root` and return `root`, for PYTHONPATH."""
    package = root / "smdistributed" / "dataparallel" / "torch"
    package.mkdir(parents=True, exist_ok=True)
    for folder in (root / "smdistributed", root / "smdistributed" / "dataparallel", package):
        (folder / "__init__.py").touch()
    (package / "torch_smddp.py").write_text(SMDDP_STAND_IN)
    return root


def check(scenario: str, data: Path, ranks: int, entry: Path = ENTRY) -> str | None:
    """Run one launch of `scenario` (two for the SIGTERM ones); None when every rank exited as it must."""
    launcher, _, kind = scenario.partition("-")
    run = torchrun if launcher == "torchrun" else mpi  # smddp runs under MPI, as smddprun launches it
    with tempfile.TemporaryDirectory(prefix="teardown-") as tmp:
        return _check(run, launcher, kind, data, Path(tmp), ranks, entry)


def _check(run: Callable[..., Launch], launcher: str, kind: str, data: Path, out: Path, ranks: int, entry: Path
           ) -> str | None:
    base: dict[str, str] = {}
    if launcher == "smddp":
        base = {"SM_FRAMEWORK_PARAMS": SMDDP_PARAMS, "PYTHONPATH": str(smddp_stand_in(out / "stand-in"))}

    def launch(extra: dict[str, str]) -> Launch:
        done = run(data, out, ranks, args, {**base, **extra}, entry)
        if any(done.codes) and _IN_USE.search(done.output):  # the port was taken in between: not a teardown
            done = run(data, out, ranks, args, {**base, **extra}, entry)
        return done

    args = [*ARGS, "--parallelism", "fsdp" if kind == "fsdp" else "ddp"]
    if kind != "sigterm":
        first = launch({})
        if first.codes != [0] * ranks:
            return f"exit codes {first.codes}, expected all 0\n{first.output[-4000:]}"
        if not (out / "model" / "model.pt").is_file():
            return f"every rank exited 0 but no model was written\n{first.output[-4000:]}"
        return None
    stopped = launch(FAULT)
    if stopped.codes != [EXIT_INTERRUPTED] * ranks:
        return f"SIGTERM: exit codes {stopped.codes}, expected all {EXIT_INTERRUPTED}\n{stopped.output[-4000:]}"
    if not any(out.joinpath("checkpoints").glob("step_000000001")):
        return f"SIGTERM: no checkpoint of step 1\n{stopped.output[-4000:]}"
    resumed = launch({})
    if resumed.codes != [0] * ranks or "resumed from checkpoint step=1" not in resumed.output:
        return f"resume: exit codes {resumed.codes}, expected all 0 after a resume\n{resumed.output[-4000:]}"
    return None


def make_shards(target: Path) -> Path:
    sys.path.insert(0, str(REPO / "training"))
    from gptlm.shards import shards_from_text_file

    shards_from_text_file(CORPUS, target, tokens_per_shard=4096)
    return target


def _plan(scenarios: list[str], runs: int) -> Iterator[str]:
    """`runs` launches, the scenarios interleaved so a slow machine still covers each."""
    return itertools.islice(itertools.cycle(scenarios), runs)


def stress(data: Path, scenarios: list[str], runs: int, ranks: int, jobs: int, entry: Path = ENTRY
           ) -> dict[str, Outcome]:
    outcomes = {name: Outcome(name) for name in scenarios}

    def one(name: str) -> tuple[str, str | None, float]:
        started = time.perf_counter()
        problem = check(name, data, ranks, entry)
        return name, problem, time.perf_counter() - started

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for name, problem, seconds in pool.map(one, _plan(scenarios, runs)):
            outcome = outcomes[name]
            outcome.launches += 1
            outcome.seconds += seconds
            if problem is not None:
                outcome.failures.append(problem)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="launches in all, spread over the scenarios")
    parser.add_argument("--ranks", type=int, default=2, help="processes per launch (2-4 on a 2-core machine)")
    parser.add_argument("--jobs", type=int, default=2, help="launches at once")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS, help="repeatable; default: all")
    parser.add_argument("--entry", type=Path, default=ENTRY,
                        help="the entry point to launch (default training/train.py); e.g. an older trainer's, to compare")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="teardown-shards-") as tmp:
        outcomes = stress(make_shards(Path(tmp)), options.scenario or list(SCENARIOS), options.runs, options.ranks,
                          options.jobs, options.entry)
    failed = 0
    for outcome in outcomes.values():
        per_launch = outcome.seconds / max(outcome.launches, 1)
        print(f"{outcome.scenario:18} launches={outcome.launches:4} failed={len(outcome.failures):3} "
              f"ranks={options.ranks} seconds_per_launch={per_launch:.1f}")
        for problem in outcome.failures:
            print(f"  FAILED {outcome.scenario}: {problem}")
        failed += len(outcome.failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
