"""The platform smoke test's job (`workloads/platform-smoke*.yaml`, run by `trainctl smoke --env ENV`).

Every host checks one part of the path a real training job takes and prints one line per check, matched by the
spec's metric definitions (`smoke_<check>=1` passed, `=0` failed), so the result reaches CloudWatch as metrics and
`trainctl logs` as log lines:

- `started`: the image was pulled and the code downloaded (this script runs at all);
- `s3_read`: the input channel `smoke`, which SageMaker downloads from the data bucket through the VPC's S3
  endpoint, holds the seed `trainctl smoke` wrote for this run (its nonce is printed, and compared there);
- `fsx_read`: the channel `fsx`, the environment's FSx for Lustre file system mounted by SageMaker, shows the same
  seed through the file system's link to the data bucket (only where the spec gives that channel);
- `rendezvous`: every host joins one `torch.distributed` process group (gloo on CPU, NCCL on GPU) at the first
  host, through the job's security group, and an all_reduce of each rank's number adds up;
- `efa` (with `expect_efa`): the instance has an EFA device;
- `checkpoint_written` / `checkpoint_resumed`: attempt 0 writes a checkpoint to the checkpoint folder, which
  SageMaker copies to the run's checkpoint prefix; a relaunch (attempt 1 or later) finds it there.

The forced relaunch uses what the state machine really does: it relaunches a job whose FailureReason contains
`CapacityError`. With `force_relaunch`, attempt 0 waits `settle_seconds` (SageMaker uploads the checkpoint folder
while the job runs), writes `CapacityError (simulated ...)` to `/opt/ml/output/failure` (SageMaker returns that
file's text as the FailureReason; the training toolkit leaves an existing file alone) and exits 1. The relaunch
runs under attempt 1 with the same checkpoint prefix; it never asks for another. The last line, `smoke_passed`,
is 1 when every check of the host passed; a failed check fails the job (exit 1) after every check has run.

Only the standard library, and torch for the rendezvous (the framework image has it): nothing of the project.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

SEED_FILE = "seed.json"
RELAUNCH_REASON = ("CapacityError (simulated by the platform smoke test: attempt 0 asks the state machine for a "
                   "relaunch, to prove the checkpoint resume; no capacity was missing)")
_TORCHRUN = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
_ATTEMPT = re.compile(r"-(\d+)$")  # job names are <base_job_name>-<run id>-<attempt>


@dataclass
class Job:
    """What SageMaker tells the script: hosts, channels, hyperparameters, folders (`from_environ`)."""

    hosts: list[str]
    host: str
    job_name: str
    hyperparameters: dict[str, Any]
    channels: dict[str, Path]
    checkpoint_dir: Path
    failure_file: Path
    interface: str | None = None
    launcher: dict[str, str] = field(default_factory=dict)  # torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    local_rank: int = 0
    port: int = 29500  # the rendezvous port on the first host (the job security group admits every port)

    @classmethod
    def from_environ(cls, environ: dict[str, str]) -> Job:
        training = json.loads(environ.get("SM_TRAINING_ENV") or "{}")
        hosts = json.loads(environ.get("SM_HOSTS") or '["algo-1"]')
        channels = {name[len("SM_CHANNEL_"):].lower(): Path(path) for name, path in environ.items()
                    if name.startswith("SM_CHANNEL_")}
        output = Path(environ.get("SM_OUTPUT_DIR", "/opt/ml/output/data"))
        return cls(
            hosts=sorted(hosts), host=environ.get("SM_CURRENT_HOST", hosts[0]),
            job_name=environ.get("TRAINING_JOB_NAME") or training.get("job_name") or "local-0",
            hyperparameters=json.loads(environ.get("SM_HPS") or "{}"), channels=channels,
            checkpoint_dir=Path(environ.get("SMOKE_CHECKPOINT_DIR", "/opt/ml/checkpoints")),
            failure_file=output.parent / "failure", interface=environ.get("SM_NETWORK_INTERFACE_NAME"),
            launcher={k: environ[k] for k in _TORCHRUN if k in environ} if all(k in environ for k in _TORCHRUN) else {},
            local_rank=int(environ.get("LOCAL_RANK", "0")),
        )

    @property
    def attempt(self) -> int:
        match = _ATTEMPT.search(self.job_name)
        return int(match[1]) if match else 0

    def hp(self, name: str, default: Any) -> Any:
        return self.hyperparameters.get(name, default)


@dataclass
class Report:
    """The lines printed so far, and whether every check passed."""

    results: dict[str, bool] = field(default_factory=dict)

    def check(self, name: str, ok: bool, detail: str) -> None:
        self.results[name] = ok
        print(f"smoke {name}: {'ok' if ok else 'FAILED'} smoke_{name}={int(ok)} {detail}", flush=True)

    @property
    def passed(self) -> bool:
        return all(self.results.values())


def read_seed(folder: Path | None, channel: str) -> tuple[bool, str]:
    """The seed `trainctl smoke` wrote, as the channel shows it: (found and readable, what was seen)."""
    if folder is None:
        return False, f"no channel {channel} (SM_CHANNEL_{channel.upper()} is not set)"
    seed = folder / SEED_FILE
    try:
        data = json.loads(seed.read_text())
    except FileNotFoundError:
        found = sorted(p.name for p in folder.iterdir())[:5] if folder.is_dir() else []
        return False, f"{seed} is missing (the folder holds {found or 'nothing'})"
    except (OSError, ValueError) as error:
        return False, f"{seed} is unreadable: {type(error).__name__}: {error}"
    if not isinstance(data, dict) or not data.get("nonce"):
        return False, f"{seed} holds no nonce"
    return True, f"nonce={data['nonce']} path={seed}"


def checkpoint(job: Job) -> tuple[bool, str]:
    """Attempt 0 writes this host's checkpoint; a relaunch reads it. (resumed, what happened)."""
    path = job.checkpoint_dir / f"smoke-{job.host}.json"
    if path.is_file():
        try:
            written_by = json.loads(path.read_text()).get("job_name", "?")
        except (OSError, ValueError) as error:
            return False, f"{path} is unreadable: {error}"
        return True, f"written_by={written_by} path={path}"
    job.checkpoint_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"job_name": job.job_name, "host": job.host, "time": time.time()}))
    return False, f"written_by={job.job_name} path={path}"


def rendezvous(job: Job) -> tuple[bool, str]:
    """Join one process group across the hosts at the first host and add each rank's number with all_reduce."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError as error:
        return False, f"torch is not importable: {error}"
    backend = str(job.hp("backend", "gloo"))
    if job.interface:  # the interface SageMaker names, so gloo/NCCL do not pick a local one
        os.environ.setdefault("GLOO_SOCKET_IFNAME", job.interface)
        os.environ.setdefault("NCCL_SOCKET_IFNAME", job.interface)
    if job.launcher:  # torchrun (the GPU variant's torch_distributed) set the rank, the size and the master
        rank, world, init = int(job.launcher["RANK"]), int(job.launcher["WORLD_SIZE"]), "env://"
        master = f"{job.launcher['MASTER_ADDR']}:{job.launcher['MASTER_PORT']}"
    else:  # the toolkit ran the script once per host: the first host is the master
        rank, world, master = job.hosts.index(job.host), len(job.hosts), f"{job.hosts[0]}:{job.port}"
        init = f"tcp://{master}"
    timeout = timedelta(seconds=int(job.hp("rendezvous_timeout_seconds", 300)))
    started = time.monotonic()
    try:
        dist.init_process_group(backend, init_method=init, rank=rank, world_size=world, timeout=timeout)
        device = torch.device("cuda", job.local_rank) if backend == "nccl" else torch.device("cpu")
        value = torch.tensor([float(rank + 1)], device=device)
        dist.all_reduce(value)
        total, expected = float(value.item()), world * (world + 1) / 2
        dist.destroy_process_group()
    except Exception as error:  # a timeout, a refused connection, NCCL: the check's answer, not a crash
        return False, f"backend={backend} world={world} error={type(error).__name__}: {str(error)[:300]}"
    elapsed_ms = (time.monotonic() - started) * 1000
    ok = total == expected
    print(f"smoke_rendezvous_ms={elapsed_ms:.1f}", flush=True)
    return ok, f"backend={backend} world={world} rank={rank} master={master} sum={total:g} expected={expected:g}"


def efa_devices(root: Path = Path("/sys/class/infiniband")) -> list[str]:
    """The EFA devices the instance shows (rdmap*/efa*), as libfabric's EFA provider finds them."""
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


def relaunch(job: Job) -> int:
    """Ask the state machine for a relaunch: the FailureReason it reads, then exit 1."""
    settle = int(job.hp("settle_seconds", 90))
    print(f"smoke: attempt {job.attempt} waits {settle} s for the checkpoint upload, then asks for a relaunch",
          flush=True)
    time.sleep(settle)
    job.failure_file.parent.mkdir(parents=True, exist_ok=True)
    if not job.failure_file.exists():
        job.failure_file.write_text(RELAUNCH_REASON)
    print(f"smoke: {RELAUNCH_REASON}", flush=True)
    return 1


def run(job: Job) -> int:
    """Every check in order; 0 when all passed, 1 otherwise or to ask for the relaunch."""
    if job.local_rank != 0:  # another process of a host under torchrun: it only joins the rendezvous
        return 0 if rendezvous(job)[0] else 1
    report = Report()
    print(f"smoke: host={job.host} hosts={','.join(job.hosts)} job={job.job_name} attempt={job.attempt}", flush=True)
    report.check("started", True, f"python={sys.version.split()[0]}")
    report.check("s3_read", *read_seed(job.channels.get("smoke"), "smoke"))
    if "fsx" in job.channels:
        report.check("fsx_read", *read_seed(job.channels["fsx"], "fsx"))
    resumed, detail = checkpoint(job)
    if resumed:
        report.check("checkpoint_resumed", True, detail)
    elif job.attempt == 0:
        report.check("checkpoint_written", True, detail)
    else:  # a relaunch that finds nothing: the checkpoint never reached the prefix (never ask again)
        report.check("checkpoint_resumed", False, f"attempt {job.attempt} found no checkpoint; {detail}")
    report.check("rendezvous", *rendezvous(job))
    if job.hp("expect_efa", False):
        devices = efa_devices()
        report.check("efa", bool(devices), f"devices={','.join(devices) or 'none'} "
                     f"FI_PROVIDER={os.environ.get('FI_PROVIDER', '')}")
    if not resumed and job.attempt == 0 and job.hp("force_relaunch", True):
        return relaunch(job)
    print(f"smoke_passed={int(report.passed)}", flush=True)
    if not report.passed:
        failed = ", ".join(name for name, ok in report.results.items() if not ok)
        job.failure_file.parent.mkdir(parents=True, exist_ok=True)
        job.failure_file.write_text(f"smoke checks failed on {job.host}: {failed}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(run(Job.from_environ(dict(os.environ))))
