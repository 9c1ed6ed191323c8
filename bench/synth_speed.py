"""How long `cdk synth`'s app takes for the shipped environments, against the floor of an empty CDK app.

Each repeat runs, interleaved so machine noise hits both alike: (1) an empty CDK app (import aws_cdk, one empty
stack, synth) and (2) this project's `app.py` (every environment, every workload, cdk-nag, guards), each in a fresh
process writing to a temporary cloud assembly. Prints the medians and their ratio (goal: at most 1.5x). It also says
whether the app imported the SageMaker SDK (it should not). Asserts nothing.

Usage: .venv/bin/python bench/synth_speed.py [repeats]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EMPTY_APP = ("import aws_cdk as cdk\napp = cdk.App()\ncdk.Stack(app, 'Empty', env=cdk.Environment("
             "account='111111111111', region='us-east-1'))\napp.synth()\n")
PROBE = "import runpy, sys\nrunpy.run_path('app.py', run_name='__main__')\n"


def timed(args: list[str]) -> float:
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "CDK_OUTDIR": out, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
        start = time.perf_counter()
        subprocess.run(args, cwd=ROOT, env=env, check=True, capture_output=True)
        return time.perf_counter() - start


def sdk_imported() -> bool:
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "CDK_OUTDIR": out, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
        code = "import sys, runpy\ntry:\n    runpy.run_path('app.py', run_name='__main__')\nexcept SystemExit:\n    pass\n" \
               "print('sagemaker' in sys.modules)"
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        return done.stdout.strip().endswith("True")


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    empty, app = [], []
    for _ in range(repeats):
        empty.append(timed([sys.executable, "-c", EMPTY_APP]))
        app.append(timed([sys.executable, "app.py"]))
    floor, ours = statistics.median(empty), statistics.median(app)
    print(f"repeats: {repeats} (interleaved), CPUs: {os.cpu_count()}")
    print(f"empty CDK app:     median {floor:6.2f} s  (all: {', '.join(f'{t:.2f}' for t in empty)})")
    print(f"app.py (synth):    median {ours:6.2f} s  (all: {', '.join(f'{t:.2f}' for t in app)})")
    print(f"ratio:             {ours / floor:6.2f}x the empty app (goal: at most 1.5x)")
    print(f"SageMaker SDK imported during synth: {sdk_imported()}")


if __name__ == "__main__":
    main()
