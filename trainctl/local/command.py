"""`run-local` and `prep-data`: try a workload's entry point on this machine before paying for instances.

`run-local WORKLOAD` gives the entry point the contract SageMaker's training container gives it: the
code bundle's files copied to a `code/` folder it runs from (like /opt/ml/code), the hyperparameters as the
toolkit passes them (`--key value`, booleans as `True`/`False`, dicts as `k=v,k=v`), the `SM_*` variables
(model, output and channel folders, SM_HPS, SM_HOSTS, ...), and the workload's environment. It launches the
processes with torchrun (gloo on CPU, NCCL on a local GPU): one for a workload without a distribution, as
SageMaker starts one per host; else one per local GPU, or two on CPU. Launchers that only exist on SageMaker
(mpirun, smddprun) are replaced by torchrun, which the trainer treats the same way; SageMaker model parallel exists
only in SageMaker's containers, so such a workload runs only with `--without-model-parallel`, as data parallel.
XGBoost and scikit-learn scripts run as one plain Python process (one instance), with the framework of this Python
(the message names the pip command when it is missing); a built-in algorithm has no code to run here.
`--smoke` shrinks a run of the shipped GPT trainer (training/train.py) only: its arguments would make any other
script exit. The model, checkpoints, output data and log go to build/local-runs/<workload>-<time> (or `--output`,
where a second run resumes from the checkpoints).

`prep-data` writes the token shards the trainer reads, from the corpus that ships with trainctl
(trainctl/data/corpus.txt) or from any text file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from compiler.errors import SpecError
from trainctl.common.arguments import path_arg
from trainctl.local.contract import LocalRunError
from trainctl.local.data import DATA_DIR, DEFAULT_TOKENS_PER_SHARD, SHIPPED_CORPUS, prep_data
from trainctl.local.launch import SMOKE, prepare


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
                     help="override a hyperparameter; VALUE is read as `trainctl start` reads it: text where the "
                          "spec's value is a string, else JSON (e.g. max_steps=5, model=tiny)")
    run.add_argument("--output", type=path_arg, default=None,
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
    prep.add_argument("--input", type=path_arg, default=SHIPPED_CORPUS,
                      help="text file (default: the shipped public-domain corpus)")
    prep.add_argument("--output", type=path_arg, default=None,
                      help=f"folder for the shards (default: {DATA_DIR} in the project)")
    prep.add_argument("--tokens-per-shard", type=int, default=DEFAULT_TOKENS_PER_SHARD,
                      help="tokens in each shard file (default: %(default)s)")
    prep.set_defaults(func=prep_data)


def run_local(args: argparse.Namespace) -> int:
    try:
        command, env, out, notes = prepare(args)
    except (SpecError, LocalRunError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    log_path = out / "output" / "train.log"
    shown = command[2:] if command[1:2] == ["-m"] else command[1:]  # the launcher module, or the script itself
    print(f"running in {out / 'code'}: {' '.join(shown)}", file=sys.stderr, flush=True)
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
