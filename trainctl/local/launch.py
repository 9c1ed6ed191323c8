"""What a local run is made of, worked out before any process starts (`prepare`): the hyperparameters (with
`--smoke`'s for the shipped trainer), how many processes, the input channels' folders, the output folder with the
code bundle copied in, the environment and the torchrun command; and the notes on what differs from SageMaker."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler.compilation import strategies
from compiler.compilation.overrides import expected_type
from compiler.inputs import sourcedir
from compiler.inputs.model import Workload
from compiler.inputs.paths import unusable
from compiler.inputs.project import Project
from compiler.spec import load_spec_workload
from trainctl.common.lookup import project_of
from trainctl.common.overrides import parse_hyperparameters
from trainctl.local import script_mode
from trainctl.local.contract import LocalRunError, parse_pairs, sm_environment, toolkit_args
from trainctl.local.data import ensure_default_data
from trainctl.local.differences import check_own_dependencies, environment_notes

RUNS_DIR = Path("build") / "local-runs"
# The trainer this project ships: --smoke's arguments are its own, so only its runs get them.
GPT_TRAINER = Path("training") / "train.py"
# --smoke: a minute-long run of the workload's code path on a laptop CPU (explicit -p overrides still win).
SMOKE = {"model": "tiny", "max_steps": 20, "seq_len": 128, "micro_batch_size": 4, "warmup_steps": 2,
         "log_every": 5, "checkpoint_every": 10}


def _local_gpus() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _resolve_channels(workload: Workload, given: dict[str, str], data_channel: str, project: Project) -> dict[str, Path]:
    declared = {c.name for c in workload.inputs}
    unknown = sorted(set(given) - declared)
    if unknown:
        raise LocalRunError(f"--channel {unknown[0]}: the workload has no input channel {unknown[0]!r}; its channels "
                            f"are {sorted(declared) or 'none'}")
    channels: dict[str, Path] = {}
    for name in sorted(declared):
        if name in given:
            if (refusal := unusable(given[name])) is not None:
                raise LocalRunError(f"--channel {name}=PATH: {refusal}")
            path = Path(given[name]).expanduser().resolve()
            if not path.is_dir():
                raise LocalRunError(f"--channel {name}={given[name]}: folder does not exist")
            channels[name] = path
        elif name == data_channel:
            channels[name] = ensure_default_data(project)
        else:
            raise LocalRunError(f"input channel {name!r} has no local folder: pass --channel {name}=PATH")
    return channels


def _launch_notes(workload: Workload, without_model_parallel: bool) -> list[str]:
    """What differs from SageMaker in this local run; refuses what cannot run here."""
    plan = strategies.launch_plan(workload)
    if plan.name.startswith("smp"):
        if not without_model_parallel:
            raise LocalRunError("this workload uses SageMaker model parallel (SMP), which exists only in SageMaker's "
                                "containers; pass --without-model-parallel to run its entry point as plain data "
                                "parallel here")
        return ["SMP model parallelism is off locally: the entry point runs as data parallel"]
    if plan.local_launcher is None:
        raise LocalRunError(f"the {plan.name} launcher exists only in SageMaker's containers; run-local starts PyTorch "
                            "entry points with torchrun")
    notes = {"smddp": "SMDDP collectives are replaced by gloo/NCCL locally (same DDP code path)",
             "pytorchddp": "SMDDP collectives are replaced by gloo/NCCL locally (same DDP code path)",
             "mpi": "mpirun is replaced by torchrun locally (the trainer reads either launcher's variables)"}
    return [notes[plan.name]] if plan.name in notes else []


def is_gpt_trainer(workload: Workload, project: Project) -> bool:
    """Whether the workload runs the shipped GPT trainer (training/train.py), whose arguments --smoke sets."""
    code = workload.code
    return code is not None and code.entry_point_path.resolve() == (project.root / GPT_TRAINER).resolve()


def _copy_code(workload: Workload, project: Project, target: Path) -> sourcedir.Scan:
    """The files the job's code bundle would hold, copied where the entry point runs from (like /opt/ml/code)."""
    code = workload.code
    if code is None:
        raise LocalRunError("this workload ships no code (an image-only estimator): nothing to run here")
    scan = sourcedir.scan(code.source_dir, code.entry_point_path, code.dependencies, project.root)
    if scan.problems:
        raise LocalRunError("; ".join(scan.problems))
    for entry in scan.entries:
        destination = target / entry.arcname
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(entry.path, destination)
    return scan


def prepare(args: argparse.Namespace) -> tuple[list[str], dict[str, str], Path, list[str]]:
    """Command, environment, output folder and notes for a local run (no process started)."""
    project = project_of(args, args.workload)
    workload = load_spec_workload(project, args.workload)
    script_mode.refuse_algorithm(workload)
    script = script_mode.runs_as_script(workload)
    if not script:
        check_own_dependencies(project)
    else:  # one plain Python process on the channels given: torchrun and the default data are not needed
        script_mode.check_installed(workload)
        if args.nproc not in (None, 1):
            raise LocalRunError(f"--nproc {args.nproc}: {workload.framework} script mode starts one process per "
                                "instance, and run-local stands in for one instance")
    expected = {name: expected_type(value, False) for name, value in workload.hyperparameters.items()}
    overrides = parse_hyperparameters(args.hyperparameter or [], expected, "--hyperparameter", "KEY=VALUE")
    gpt = is_gpt_trainer(workload, project)
    hyperparameters = {**workload.hyperparameters, **(SMOKE if args.smoke and gpt else {}), **overrides}
    notes = _launch_notes(workload, args.without_model_parallel) + _smoke_notes(args.smoke, gpt)
    gpus = _local_gpus()
    single = strategies.launch_plan(workload).name == "none"  # SageMaker starts one process per host
    nproc = _process_count(args.nproc, single, gpus)
    notes += _process_notes(gpt, gpus, hyperparameters, single, nproc)
    # the shipped token corpus stands in for the GPT trainer's data channel only; a script-mode job names each folder
    data_channel = "" if script else str(hyperparameters.get("data_channel", "train"))
    channels = _resolve_channels(workload, parse_pairs(args.channel, "--channel"), data_channel, project)
    out = _output_folder(args.output, project, workload)
    notes += environment_notes(workload, project, _copy_code(workload, project, out / "code"))
    cli_args = toolkit_args(hyperparameters)
    env = _process_environment(workload, sm_environment(workload, hyperparameters, channels, out, cli_args, gpus))
    assert workload.code is not None
    if script:
        return script_mode.python_command(workload.code.program, cli_args), env, out, notes
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc),
               workload.code.program, *cli_args]
    return command, env, out, notes


def _smoke_notes(smoke: bool, gpt: bool) -> list[str]:
    """--smoke given for an entry point that is not the shipped trainer: its arguments would make the script exit."""
    if not smoke or gpt:
        return []
    return [f"--smoke shrinks only the shipped GPT trainer ({GPT_TRAINER.as_posix()}); this entry point gets its own "
            "hyperparameters (shrink them with -p KEY=VALUE)"]


def _process_count(nproc: int | None, single: bool, gpus: int) -> int:
    """`--nproc`, else one for a workload without a distribution, else one per GPU (two on CPU)."""
    count = nproc or (1 if single else gpus or 2)
    if count < 1:
        raise LocalRunError("--nproc must be at least 1")
    if gpus and count > gpus:
        raise LocalRunError(f"--nproc {count}: this machine has {gpus} GPU(s); use at most that many")
    return count


def _process_notes(gpt: bool, gpus: int, hyperparameters: Mapping[str, Any], single: bool, nproc: int) -> list[str]:
    """A slow model on CPU, and more processes than SageMaker would start."""
    notes = []
    if gpt and not gpus and hyperparameters.get("model", "tiny") != "tiny":
        notes.append(f"model {hyperparameters.get('model')} on CPU is slow: add --smoke (or -p model=tiny "
                     "-p max_steps=20) to check the code path in seconds")
    if single and nproc > 1:
        notes.append(f"SageMaker starts one process per host for this workload (no distribution); running {nproc}")
    return notes


def _output_folder(given: Path | None, project: Project, workload: Workload) -> Path:
    """`--output`, else build/local-runs/<workload>-<time>, with the folders SageMaker's container has."""
    out = (given or project.root / RUNS_DIR / f"{workload.name}-{time.strftime('%Y%m%d-%H%M%S')}").resolve()
    for sub in ("model", "output/data", "checkpoints", "input"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    return out


def _process_environment(workload: Workload, sm_variables: Mapping[str, str]) -> dict[str, str]:
    """This shell's environment, the workload's, the SM_* variables, and unbuffered output without bytecode files."""
    env = {**os.environ, **{k: str(v) for k, v in (workload.environment or {}).items()}, **sm_variables}
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
