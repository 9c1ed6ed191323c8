"""How a training process ends (gptlm.shutdown): every rank of a finished run exits 0, every rank of a run stopped by
SIGTERM exits 143 after a complete checkpoint, a failing rank never leaves its peers hanging, and nothing can abort
after the exit code is decided. The stress launches are bench/teardown_stress.py's, a few dozen here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
import time

import pytest
import torch.distributed as dist
from gptlm import shutdown

from tests.trainer.conftest import REPO, TINY, TRAINING_DIR, child_env

BENCH = REPO / "bench" / "teardown_stress.py"


def _load_bench():
    spec = importlib.util.spec_from_file_location("teardown_stress", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


teardown_stress = _load_bench()


def _python(code: str, timeout: int = 60) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter with the trainer importable, output to pipes (block-buffered)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=child_env(PYTHONUNBUFFERED=""),
                          capture_output=True, text=True, timeout=timeout, cwd=TRAINING_DIR)


# -- the exit itself ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("body, code, printed", [
    ("print('done'); return 0", 0, "done"),
    ("print('stopped'); return 143", 143, "stopped"),
    ("raise RuntimeError('boom')", 1, "RuntimeError: boom"),
    ("raise SystemExit(3)", 3, ""),
    ("raise KeyboardInterrupt", 130, "KeyboardInterrupt"),
    # Python's own meanings: sys.exit("why") prints why and fails, sys.exit() succeeds...
    ("sys.exit('data shards missing under /opt/ml/input/data/train')", 1, "data shards missing under"),
    ("sys.exit()", 0, ""),
    ("raise SystemExit(None)", 0, ""),
    ("raise SystemExit(True)", 1, ""),
    # ...except a status whose low byte is 0, which the kernel would report as success: a failed run never exits 0
    ("raise SystemExit(256)", 1, ""),
    ("return 512", 1, ""),
    ("raise SystemExit(-1)", 255, ""),
])
def test_exit_process_leaves_with_mains_code_and_flushed_output(body, code, printed):
    """os._exit skips Python's own flush at exit: what main printed into a pipe must still arrive."""
    done = _python(f"""
        import sys
        from gptlm.shutdown import exit_process
        def main(argv):
            {body}
        exit_process(main, [])
        print("not reached")
    """)
    assert done.returncode == code, done.stderr
    assert printed in done.stdout + done.stderr
    assert "not reached" not in done.stdout


def test_exit_process_runs_no_finalizer_after_the_code_is_decided():
    """A destructor that would abort at interpreter exit (what gloo objects did) never runs."""
    done = _python("""
        import os, weakref
        from gptlm.shutdown import exit_process
        class Holder:
            pass
        keep = Holder()
        weakref.finalize(keep, os.abort)  # runs at normal interpreter exit: SIGABRT, as the gloo teardown did
        exit_process(lambda argv: 0, [])
    """)
    assert done.returncode == 0, done.stderr


def test_a_hanging_teardown_still_exits_with_the_runs_code():
    """A peer that died after the last agreement leaves this rank in a barrier; the watchdog ends it."""
    started = time.monotonic()
    done = _python("""
        import time
        from gptlm.shutdown import orderly
        orderly(lambda: time.sleep(60), 143, seconds=1)
    """)
    assert done.returncode == 143
    assert time.monotonic() - started < 30
    assert "teardown did not finish within 1 s" in done.stderr


@pytest.mark.parametrize("code", [0, 143])
def test_sigterm_during_the_teardown_leaves_with_the_runs_code(code):
    """torchrun's agent sends SIGTERM to the ranks still running once one rank exited 143: a rank still tearing
    down must leave with the run's code, not die of the signal (-15)."""
    done = _python(f"""
        import os, signal, time
        from gptlm.shutdown import orderly
        def close():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)
        orderly(close, {code})
    """)
    assert done.returncode == code


# -- leaving in store order ---------------------------------------------------------------------------------------


class _Store:
    """The two calls of torch.distributed.Store that the teardown uses."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, key: str, amount: int) -> int:
        self.counts[key] = self.counts.get(key, 0) + amount
        return self.counts[key]


def test_peers_count_themselves_out_and_rank_0_waits_for_all_of_them():
    store = _Store()
    deadline = time.monotonic() + 10
    for rank in (1, 2):
        assert shutdown.wait_for_peers(store, rank, 4, deadline)
    assert not shutdown.wait_for_peers(store, 0, 4, time.monotonic() + 0.2)  # rank 3 has not left: gives up at 0.2 s
    assert shutdown.wait_for_peers(store, 3, 4, deadline)
    assert shutdown.wait_for_peers(store, 0, 4, time.monotonic())  # all three left: returns at once


def test_close_groups_meets_and_destroys_every_group(monkeypatch):
    """One gloo process with an extra group, as the native backend has on GPUs (its control group)."""
    store = dist.HashStore()
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    extra = dist.new_group(backend="gloo")
    met = []
    real_barrier = dist.barrier
    monkeypatch.setattr(dist, "barrier", lambda group=None: met.append(group) or real_barrier(group=group))
    shutdown.close_groups([extra], store, rank=0, world_size=1)
    assert met == [extra, None]  # the extra group first, then the default one
    assert not dist.is_initialized()


def test_close_groups_without_a_process_group_does_nothing():
    assert not dist.is_initialized()
    shutdown.close_groups([], None, rank=0, world_size=1)


# -- real launches ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_rank_exits_as_its_path_requires_over_many_launches(shards_dir):
    """A few dozen two-rank launches over every scenario: finished runs exit 0 on every rank, SIGTERM-stopped runs
    143 on every rank and then resume to 0; torchrun's agent store and the MPI launch's rank-0 store alike."""
    outcomes = teardown_stress.stress(shards_dir, list(teardown_stress.SCENARIOS), runs=20, ranks=2, jobs=2)
    assert sum(o.launches for o in outcomes.values()) == 20
    problems = [f"{o.scenario}: {problem}" for o in outcomes.values() for problem in o.failures]
    assert not problems, "\n\n".join(problems)


@pytest.mark.slow
def test_the_stress_check_sees_an_abort_at_exit(shards_dir, tmp_path):
    """The stress check must fail a run that trains, saves and exports, then aborts at interpreter exit."""
    entry = tmp_path / "train.py"
    entry.write_text(textwrap.dedent(f"""\
        import os, sys, weakref
        sys.path.insert(0, {str(TRAINING_DIR)!r})
        from gptlm.launch import main
        class Holder:
            pass
        keep = Holder()
        weakref.finalize(keep, os.abort)  # at interpreter exit: SIGABRT, as the gloo teardown did
        sys.exit(main(sys.argv[1:]))
    """))
    problem = teardown_stress.check("mpi", shards_dir, 2, entry)
    assert problem is not None and "exit codes [-6, -6], expected all 0" in problem


@pytest.mark.slow
def test_a_rank_that_fails_does_not_leave_its_peer_hanging(shards_dir, tmp_path):
    """Rank 1 finds no data after joining the group (a user error: exit 2); rank 0 is then waiting in a collective
    and must fail promptly too, not sit out the group's 30-minute timeout."""
    empty = tmp_path / "empty"
    empty.mkdir()
    port = str(teardown_stress._free_port())
    procs = []
    for rank in range(2):
        env = child_env(OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE="2", OMPI_COMM_WORLD_LOCAL_RANK=str(rank),
                        OMPI_COMM_WORLD_LOCAL_SIZE="2", SM_HOSTS='["localhost"]', MASTER_PORT=port,
                        SM_CHANNEL_TRAIN=str(empty if rank == 1 else shards_dir), SM_MODEL_DIR=str(tmp_path / "model"),
                        SM_CHECKPOINT_DIR=str(tmp_path / "checkpoints"))
        procs.append(subprocess.Popen([sys.executable, str(TRAINING_DIR / "train.py"), *TINY, "--max_steps", "3"],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      cwd=tmp_path))
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert procs[1].returncode == 2, outputs[1]
    assert "error: " in outputs[1] and str(empty) in outputs[1]
    assert procs[0].returncode not in (0, None), outputs[0]
    assert not (tmp_path / "model" / "model.pt").exists()


def test_the_torchrun_failure_report_is_read_per_rank():
    """The agent's report (torch.distributed.elastic's ChildFailedError) lists each failed rank with its code."""
    report = textwrap.dedent("""\
        E1126 05:23:43.596000 7048 api.py:1002] failed (exitcode: 143) local_rank: 0 (pid: 7055) of binary: python
        Failures:
        [1]:
          time      : 2026-11-26_05:17:56
          host      : localhost
          rank      : 1 (local_rank: 1)
          exitcode  : -6 (pid: 4068)  (SIGABRT)
        Root Cause (first observed failure):
        [0]:
          rank      : 0 (local_rank: 0)
          exitcode  : 143 (pid: 4067)
    """)
    assert {int(r): int(c) for r, c in teardown_stress._TORCHRUN_FAILURE.findall(report)} == {1: -6, 0: 143}

