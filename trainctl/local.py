"""`run-local` and `prep-data`: try a workload's entry point on this machine before paying for instances.

`run-local WORKLOAD` gives the entry point the contract SageMaker's training container gives it: the
code bundle's files copied to a `code/` folder it runs from (like /opt/ml/code), the hyperparameters as the
toolkit passes them (`--key value`, booleans as `True`/`False`, dicts as `k=v,k=v`), the `SM_*` variables
(model, output and channel folders, SM_HPS, SM_HOSTS, ...), and the workload's environment. It launches the
processes with torchrun (gloo on CPU, NCCL on a local GPU): one for a workload without a distribution, as
SageMaker starts one per host; else one per local GPU, or two on CPU. Launchers that only exist on SageMaker
(mpirun, smddprun) are replaced by torchrun, which the trainer treats the same way; SageMaker model parallel exists
only in SageMaker's containers, so such a workload runs only with `--without-model-parallel`, as data parallel.
`--smoke` shrinks a run of the shipped GPT trainer (training/train.py) only: its arguments would make any other
script exit. The model, checkpoints, output data and log go to build/local-runs/<workload>-<time> (or `--output`,
where a second run resumes from the checkpoints).

`prep-data` writes the token shards the trainer reads, from the corpus that ships with trainctl
(trainctl/data/corpus.txt) or from any text file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from compiler.compilation import strategies
from compiler.errors import SpecError
from compiler.inputs import sourcedir
from compiler.inputs.model import Workload
from compiler.inputs.project import Project
from compiler.spec import load_spec_workload
from trainctl.common import project_of

SHIPPED_CORPUS = Path(__file__).resolve().parent / "data" / "corpus.txt"  # package data of trainctl
DATA_DIR = Path("build") / "data" / "corpus"  # relative to the project
RUNS_DIR = Path("build") / "local-runs"
HOST = "algo-1"  # SageMaker's name for the first (here: only) host
DEFAULT_TOKENS_PER_SHARD = 1 << 20
# The trainer this project ships: --smoke's arguments are its own, so only its runs get them.
GPT_TRAINER = Path("training") / "train.py"
# --smoke: a minute-long run of the workload's code path on a laptop CPU (explicit -p overrides still win).
SMOKE = {"model": "tiny", "max_steps": 20, "seq_len": 128, "micro_batch_size": 4, "warmup_steps": 2,
         "log_every": 5, "checkpoint_every": 10}


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run-local", help="run a workload's entry point here, under the SageMaker container's contract",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("workload", help="workload name (workloads/NAME.yaml) or path to a YAML spec")
    run.add_argument("--nproc", type=int, default=None,
                     help="processes to launch (default: 1 without a distribution, as SageMaker starts; else the "
                          "local GPU count, or 2 on CPU)")
    run.add_argument("--channel", action="append", default=[], metavar="NAME=PATH",
                     help="local folder for an input channel (default for the data channel: the prepped shipped "
                          "corpus, prepared on first use)")
    run.add_argument("--hyperparameter", "-p", action="append", default=[], metavar="KEY=VALUE",
                     help="override a hyperparameter; VALUE is read as YAML (e.g. max_steps=5, model=tiny)")
    run.add_argument("--output", type=Path, default=None,
                     help="folder for model, checkpoints, output data and log (default: build/local-runs/NAME-TIME); "
                          "re-using one resumes from its checkpoints")
    run.add_argument("--smoke", action="store_true",
                     help="shrink a run of the shipped GPT trainer to seconds: "
                          + " ".join(f"{k}={v}" for k, v in SMOKE.items()))
    run.add_argument("--without-model-parallel", action="store_true",
                     help="run a SageMaker model parallel (SMP) workload as plain data parallel; SMP itself only "
                          "exists in SageMaker's containers")
    run.set_defaults(func=run_local)

    prep = subparsers.add_parser("prep-data", help="write token shards for the trainer from a text file",
                                 description="Tokenize a UTF-8 text file (byte-level, vocabulary 256) into shards "
                                             "the trainer memory-maps. Upload the folder to S3 or FSx for jobs.")
    prep.add_argument("--input", type=Path, default=SHIPPED_CORPUS,
                      help="text file (default: the shipped public-domain corpus)")
    prep.add_argument("--output", type=Path, default=None,
                      help=f"folder for the shards (default: {DATA_DIR} in the project)")
    prep.add_argument("--tokens-per-shard", type=int, default=DEFAULT_TOKENS_PER_SHARD,
                      help="tokens in each shard file (default: %(default)s)")
    prep.set_defaults(func=prep_data)


# -- prep-data --------------------------------------------------------------------------------------------------


def prep_data(args: argparse.Namespace) -> int:
    from gptlm import shards  # numpy: imported by the commands that need it, not by every trainctl command

    output = args.output or project_of(args).root / DATA_DIR
    try:
        paths = shards.shards_from_text_file(args.input, output, args.tokens_per_shard)
    except shards.DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    tokens = sum((p.stat().st_size - shards.HEADER_BYTES) // shards.TOKEN_DTYPE.itemsize for p in paths)
    print(f"wrote {len(paths)} shard(s), {tokens} tokens, to {output}")
    return 0


def ensure_default_data(project: Project) -> Path:
    """The shipped corpus as shards in the project's build folder, written on first use."""
    from gptlm import shards

    folder = project.root / DATA_DIR
    if not list(folder.glob("*.bin")):
        shards.shards_from_text_file(SHIPPED_CORPUS, folder, DEFAULT_TOKENS_PER_SHARD)
    return folder


# -- the container contract -------------------------------------------------------------------------------------


class LocalRunError(ValueError):
    """Something about the local run's options; the message names the option to change."""


def parse_pairs(items: list[str], option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise LocalRunError(f"{option} {item!r}: expected KEY=VALUE")
        pairs[key.strip()] = value
    return pairs


def toolkit_value(value: Any) -> str:
    """How the SageMaker toolkit writes one hyperparameter on the command line (mapping.to_cmd_args)."""
    if isinstance(value, Mapping):
        return ",".join(f"{k}={v}" for k, v in sorted(value.items()))
    return str(value)


def toolkit_args(hyperparameters: Mapping[str, Any]) -> list[str]:
    """The SDK json-encodes each value and the toolkit decodes it, so the values arrive as YAML wrote them."""
    decoded = {k: json.loads(json.dumps(v)) for k, v in hyperparameters.items()}
    args: list[str] = []
    for key in sorted(decoded):
        args += [f"--{key}" if len(key) > 1 else f"-{key}", toolkit_value(decoded[key])]
    return args


def sm_environment(workload: Workload, hyperparameters: Mapping[str, Any], channels: Mapping[str, Path], out: Path,
                   args: list[str], num_gpus: int) -> dict[str, str]:
    """The SM_* variables the training toolkit sets (sagemaker_training.environment.to_env_vars)."""
    env = {
        "SM_MODEL_DIR": str(out / "model"),
        "SM_OUTPUT_DIR": str(out / "output"),
        "SM_OUTPUT_DATA_DIR": str(out / "output" / "data"),
        "SM_INPUT_DIR": str(out / "input"),
        "SM_CHECKPOINT_DIR": str(out / "checkpoints"),  # the trainer's override of /opt/ml/checkpoints
        "SM_MODULE_DIR": str(out / "code"),
        "SM_USER_ENTRY_POINT": workload.code.program if workload.code else "",
        "SM_CHANNELS": json.dumps(sorted(channels)),
        "SM_HPS": json.dumps(dict(hyperparameters), sort_keys=True),
        "SM_HOSTS": json.dumps([HOST]),
        "SM_CURRENT_HOST": HOST,
        "SM_CURRENT_INSTANCE_TYPE": "local",
        "SM_NUM_GPUS": str(num_gpus),
        "SM_NUM_CPUS": str(os.cpu_count() or 1),
        "SM_USER_ARGS": json.dumps(args),
        "SM_FRAMEWORK_PARAMS": "{}",  # no smddp flag: locally the trainer uses gloo / NCCL
        "SM_LOG_LEVEL": "20",
    }
    for name, path in channels.items():
        env[f"SM_CHANNEL_{name.upper()}"] = str(path)
    for key, value in hyperparameters.items():
        env[f"SM_HP_{key.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env


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


def _copy_code(workload: Workload, project: Project, target: Path) -> None:
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


def prepare(args: argparse.Namespace) -> tuple[list[str], dict[str, str], Path, list[str]]:
    """Command, environment, output folder and notes for a local run (no process started)."""
    project = project_of(args, args.workload)
    workload = load_spec_workload(project, args.workload)
    overrides = {k: yaml.safe_load(v) if v.strip() else "" for k, v in
                 parse_pairs(args.hyperparameter, "--hyperparameter").items()}
    gpt = is_gpt_trainer(workload, project)
    hyperparameters = {**workload.hyperparameters, **(SMOKE if args.smoke and gpt else {}), **overrides}
    notes = _launch_notes(workload, args.without_model_parallel)
    if args.smoke and not gpt:
        notes.append(f"--smoke shrinks only the shipped GPT trainer ({GPT_TRAINER.as_posix()}); this entry point "
                     "gets its own hyperparameters (shrink them with -p KEY=VALUE)")
    gpus = _local_gpus()
    single = strategies.launch_plan(workload).name == "none"  # SageMaker starts one process per host
    nproc = args.nproc or (1 if single else gpus or 2)
    if nproc < 1:
        raise LocalRunError("--nproc must be at least 1")
    if gpus and nproc > gpus:
        raise LocalRunError(f"--nproc {nproc}: this machine has {gpus} GPU(s); use at most that many")
    if gpt and not gpus and hyperparameters.get("model", "tiny") != "tiny":
        notes.append(f"model {hyperparameters.get('model')} on CPU is slow: add --smoke (or -p model=tiny "
                     "-p max_steps=20) to check the code path in seconds")
    if single and nproc > 1:
        notes.append(f"SageMaker starts one process per host for this workload (no distribution); running {nproc}")
    channels = _resolve_channels(workload, parse_pairs(args.channel, "--channel"),
                                 str(hyperparameters.get("data_channel", "train")), project)
    out = (args.output or project.root / RUNS_DIR / f"{workload.name}-{time.strftime('%Y%m%d-%H%M%S')}").resolve()
    for sub in ("model", "output/data", "checkpoints", "input"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    _copy_code(workload, project, out / "code")
    cli_args = toolkit_args(hyperparameters)
    env = {**os.environ, **{k: str(v) for k, v in (workload.environment or {}).items()},
           **sm_environment(workload, hyperparameters, channels, out, cli_args, gpus)}
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    assert workload.code is not None
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc),
               workload.code.program, *cli_args]
    return command, env, out, notes


def run_local(args: argparse.Namespace) -> int:
    try:
        command, env, out, notes = prepare(args)
    except (SpecError, LocalRunError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    log_path = out / "output" / "train.log"
    print(f"running in {out / 'code'}: {' '.join(command[2:])}", file=sys.stderr, flush=True)
    with open(log_path, "w") as log, subprocess.Popen(command, cwd=out / "code", env=env, stdout=subprocess.PIPE,
                                                       stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            log.write(line)
        code = proc.wait()
    print(f"\nrun-local finished with exit code {code}\n"
          f"  model:       {out / 'model'}\n"
          f"  checkpoints: {out / 'checkpoints'}\n"
          f"  output data: {out / 'output' / 'data'}\n"
          f"  log:         {log_path}", flush=True)
    return code
