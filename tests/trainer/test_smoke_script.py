"""training/smoke/smoke.py, the smoke workloads' job, on CPU: what it reads from SageMaker's environment, each check's
pass and fail, the forced relaunch's FailureReason against the state machine's own relaunch rule, the two-rank
rendezvous with gloo on localhost, and its lines against the specs' metric definitions."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import multiprocessing
import os
import re
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.state_machine.asl import json_objects
from tests.trainer.conftest import SMOKE_WORKLOADS, TRAINING_DIR

SCRIPT = TRAINING_DIR / "smoke" / "smoke.py"


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("smoke_job", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["smoke_job"] = module
    spec.loader.exec_module(module)
    return module


smoke = _load()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _job(tmp_path: Path, job_name: str = "platform-smoke-0123456789ab-0", hosts: tuple[str, ...] = ("localhost",),
         **hps: Any) -> Any:
    seed_dir = tmp_path / "smoke"
    seed_dir.mkdir(exist_ok=True)
    (seed_dir / "seed.json").write_text(json.dumps({"nonce": "smoke-20261126-080000-abcd"}))
    return smoke.Job(hosts=list(hosts), host=hosts[0], job_name=job_name,
                     hyperparameters={"backend": "gloo", "settle_seconds": 0, "rendezvous_timeout_seconds": 20,
                                      **hps},
                     channels={"smoke": seed_dir}, checkpoint_dir=tmp_path / "checkpoints",
                     failure_file=tmp_path / "output" / "failure", port=_free_port())


def test_the_job_comes_from_sagemakers_environment(tmp_path):
    job = smoke.Job.from_environ({
        "SM_HOSTS": '["algo-2", "algo-1"]', "SM_CURRENT_HOST": "algo-2", "SM_HPS": '{"backend": "gloo"}',
        "SM_CHANNEL_SMOKE": "/opt/ml/input/data/smoke", "SM_CHANNEL_FSX": "/opt/ml/input/data/fsx",
        "SM_TRAINING_ENV": json.dumps({"job_name": "platform-smoke-0123456789ab-1"}),
        "SM_OUTPUT_DIR": "/opt/ml/output/data", "SM_NETWORK_INTERFACE_NAME": "eth0"})
    assert job.hosts == ["algo-1", "algo-2"] and job.host == "algo-2"
    assert job.attempt == 1 and job.hp("backend", "") == "gloo"
    assert job.channels == {"smoke": Path("/opt/ml/input/data/smoke"), "fsx": Path("/opt/ml/input/data/fsx")}
    assert job.failure_file == Path("/opt/ml/output/failure")
    assert job.checkpoint_dir == Path("/opt/ml/checkpoints") and job.interface == "eth0"
    assert job.launcher == {} and job.local_rank == 0
    under_torchrun = smoke.Job.from_environ({"RANK": "3", "WORLD_SIZE": "4", "MASTER_ADDR": "algo-1",
                                             "MASTER_PORT": "7777", "LOCAL_RANK": "1"})
    assert under_torchrun.launcher["RANK"] == "3" and under_torchrun.local_rank == 1


def test_the_seed_is_read_or_its_absence_named(tmp_path):
    assert smoke.read_seed(None, "fsx") == (False, "no channel fsx (SM_CHANNEL_FSX is not set)")
    ok, detail = smoke.read_seed(tmp_path, "smoke")
    assert not ok and "seed.json is missing" in detail
    (tmp_path / "seed.json").write_text("{not json")
    ok, detail = smoke.read_seed(tmp_path, "smoke")
    assert not ok and "unreadable" in detail
    (tmp_path / "seed.json").write_text('{"other": 1}')
    assert smoke.read_seed(tmp_path, "smoke")[0] is False
    (tmp_path / "seed.json").write_text('{"nonce": "n-1"}')
    ok, detail = smoke.read_seed(tmp_path, "smoke")
    assert ok and detail.startswith("nonce=n-1 ")


def test_attempt_0_writes_the_checkpoint_that_a_relaunch_reads(tmp_path):
    first = _job(tmp_path, "platform-smoke-0123456789ab-0")
    assert smoke.checkpoint(first) == (False, f"written_by=platform-smoke-0123456789ab-0 path="
                                              f"{tmp_path / 'checkpoints' / 'smoke-localhost.json'}")
    relaunch = _job(tmp_path, "platform-smoke-0123456789ab-1")
    resumed, detail = smoke.checkpoint(relaunch)
    assert resumed and detail.startswith("written_by=platform-smoke-0123456789ab-0 ")


def _relaunch_patterns() -> list[str]:
    """The state machine's own rule for a relaunch: its StringMatches patterns on the job's FailureReason."""
    from compiler.pipeline import compile_one
    from tests.project import PROJECT

    definition = json.loads(compile_one(PROJECT, "platform-smoke", "dev").definition)
    found = [node["StringMatches"] for node in json_objects(definition)
             if str(node.get("Variable", "")).endswith("FailureReason") and "StringMatches" in node]
    assert found, "the definition has no rule on FailureReason"
    return found


def test_attempt_0_asks_the_state_machine_for_a_relaunch(tmp_path, capsys):
    job = _job(tmp_path)
    assert smoke.run(job) == 1
    reason = job.failure_file.read_text()
    assert any(fnmatch.fnmatchcase(reason, pattern) for pattern in _relaunch_patterns())
    out = capsys.readouterr().out
    assert "smoke_checkpoint_written=1" in out and "smoke_s3_read=1" in out and "smoke_passed" not in out
    # The toolkit writes the failure file only where none exists: a relaunch request is never overwritten.
    assert (tmp_path / "checkpoints" / "smoke-localhost.json").is_file()


def test_the_relaunch_resumes_and_passes(tmp_path, capsys):
    smoke.run(_job(tmp_path, force_relaunch=False))  # attempt 0 without the relaunch: writes the checkpoint
    capsys.readouterr()
    job = _job(tmp_path, "platform-smoke-0123456789ab-1")
    assert smoke.run(job) == 0
    out = capsys.readouterr().out
    for line in ("smoke_started=1", "smoke_s3_read=1", "smoke_checkpoint_resumed=1", "smoke_rendezvous=1",
                 "smoke_passed=1", "nonce=smoke-20261126-080000-abcd", "written_by=platform-smoke-0123456789ab-0"):
        assert line in out
    assert not job.failure_file.exists()


def test_a_relaunch_without_a_checkpoint_fails_and_never_asks_again(tmp_path, capsys):
    job = _job(tmp_path, "platform-smoke-0123456789ab-1")
    assert smoke.run(job) == 1
    out = capsys.readouterr().out
    assert "smoke_checkpoint_resumed=0" in out and "smoke_passed=0" in out
    reason = job.failure_file.read_text()
    assert reason == "smoke checks failed on localhost: checkpoint_resumed"
    assert not any(fnmatch.fnmatchcase(reason, pattern) for pattern in _relaunch_patterns())


def test_a_missing_channel_and_efa_fail_their_checks(tmp_path, capsys, monkeypatch):
    job = _job(tmp_path, "platform-smoke-0123456789ab-1", expect_efa=True)
    job.channels = {"smoke": tmp_path / "empty", "fsx": tmp_path / "smoke"}
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "smoke-localhost.json").write_text('{"job_name": "platform-smoke-0123456789ab-0"}')
    monkeypatch.setattr(smoke, "efa_devices", lambda: [])
    assert smoke.run(job) == 1
    out = capsys.readouterr().out
    assert "smoke_s3_read=0" in out and "smoke_fsx_read=1" in out and "smoke_efa=0" in out
    assert job.failure_file.read_text() == "smoke checks failed on localhost: s3_read, efa"


def test_efa_devices_are_read_from_sysfs(tmp_path):
    assert smoke.efa_devices(tmp_path / "absent") == []
    (tmp_path / "rdmap0s6").mkdir()
    assert smoke.efa_devices(tmp_path) == ["rdmap0s6"]


def _rank(rank: int, port: int, queue: Any) -> None:
    module = _load()
    hosts = ["127.0.0.1", "localhost"]
    job = module.Job(hosts=hosts, host=hosts[rank], job_name="platform-smoke-0123456789ab-0",
                     hyperparameters={"backend": "gloo", "rendezvous_timeout_seconds": 60}, channels={},
                     checkpoint_dir=Path("/nonexistent"), failure_file=Path("/nonexistent/failure"), port=port)
    queue.put((rank, *module.rendezvous(job)))  # rank 0 is the master, at 127.0.0.1


def test_two_ranks_meet_with_gloo_on_localhost():
    port = _free_port()
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    ranks = [context.Process(target=_rank, args=(n, port, queue)) for n in (0, 1)]
    for process in ranks:
        process.start()
    results = sorted(queue.get(timeout=120) for _ in ranks)
    for process in ranks:
        process.join(timeout=60)
    assert [r[1] for r in results] == [True, True], results
    assert "sum=3 expected=3" in results[0][2] and "world=2" in results[0][2]


def test_under_torchrun_the_rendezvous_joins_its_process_group(tmp_path, monkeypatch):
    """The GPU variant's launch: torchrun's RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (here one rank, gloo)."""
    port = str(_free_port())
    environ = {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, "LOCAL_RANK": "0",
               "SM_HOSTS": '["algo-1", "algo-2"]', "SM_CURRENT_HOST": "algo-1",
               "SM_HPS": '{"backend": "gloo", "rendezvous_timeout_seconds": 20}'}
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    ok, detail = smoke.rendezvous(smoke.Job.from_environ(environ))
    assert ok, detail
    assert detail == f"backend=gloo world=1 rank=0 master=127.0.0.1:{port} sum=1 expected=1"


def test_the_script_under_torchrun_with_two_processes_passes(tmp_path):
    """The GPU variant's launch shape on CPU: torchrun starts two processes; local rank 0 checks and reports, the
    other only joins the rendezvous; the relaunch (attempt 1) resumes from attempt 0's checkpoint."""
    import subprocess

    (tmp_path / "smoke").mkdir()
    (tmp_path / "smoke" / "seed.json").write_text('{"nonce": "n-2"}')
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "smoke-algo-1.json").write_text('{"job_name": "platform-smoke-0123456789ab-0"}')
    env = {"PATH": os.environ["PATH"], "SM_HOSTS": '["algo-1"]', "SM_CURRENT_HOST": "algo-1",
           "SM_HPS": json.dumps({"backend": "gloo", "force_relaunch": True, "rendezvous_timeout_seconds": 60}),
           "SM_CHANNEL_SMOKE": str(tmp_path / "smoke"), "SMOKE_CHECKPOINT_DIR": str(tmp_path / "checkpoints"),
           "SM_OUTPUT_DIR": str(tmp_path / "output" / "data"), "TRAINING_JOB_NAME": "platform-smoke-0123456789ab-1",
           "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                           str(SCRIPT)], env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("smoke_rendezvous=1") == 1 and "world=2 rank=0" in done.stdout
    assert "smoke_checkpoint_resumed=1 written_by=platform-smoke-0123456789ab-0" in done.stdout
    assert "smoke_passed=1" in done.stdout and not (tmp_path / "output" / "failure").exists()


def test_a_missing_peer_fails_the_rendezvous_within_its_timeout(tmp_path):
    job = _job(tmp_path, hosts=("127.0.0.1", "localhost"), rendezvous_timeout_seconds=2)
    ok, detail = smoke.rendezvous(job)  # rank 0 of two waits for a peer that never comes
    assert not ok and "world=2" in detail and "error=" in detail


@pytest.mark.parametrize("workload", SMOKE_WORKLOADS, ids=lambda p: p.stem)
def test_every_line_the_script_prints_feeds_a_metric_of_the_spec(workload, tmp_path, capsys):
    spec = yaml.safe_load(workload.read_text())
    regexes = {d["Name"]: re.compile(d["Regex"]) for d in spec["metric_definitions"]}
    smoke.run(_job(tmp_path, force_relaunch=False))
    smoke.run(_job(tmp_path, "platform-smoke-0123456789ab-1", expect_efa=True))
    names = set(re.findall(r"\bsmoke_([a-z0-9_]+)=", capsys.readouterr().out))
    assert names >= {"started", "s3_read", "checkpoint_written", "checkpoint_resumed", "rendezvous",
                     "rendezvous_ms", "efa", "passed"}
    for name in names:
        assert f"smoke:{name}" in regexes, f"{workload.name}: no metric definition for smoke_{name}"
        assert regexes[f"smoke:{name}"].search(f"smoke_{name}=1"), name
    assert set(spec["hyperparameters"]) == {"backend", "force_relaunch", "settle_seconds",
                                            "rendezvous_timeout_seconds", "expect_efa"}
