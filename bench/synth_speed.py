"""How long `cdk synth`'s app takes for the shipped environments, against the floor of an empty CDK app.

Each repeat runs four programs, interleaved so machine noise hits them alike, each in a fresh process writing to a
temporary cloud assembly:
  1. an empty CDK app (import aws_cdk, one empty stack, synth): the floor;
  2. this project's `app.py` (every environment, every workload, cdk-nag, guards): what `cdk synth` runs;
  3. the same app with the CDK's built-in CloudFormation validation turned off (what the tests and `trainctl review`
     synthesize; cfn-lint and checkov lint every template there);
  4. the empty app with the built-in validation turned off.
It prints the median wall time and the median CPU time of each program with all its child processes (the jsii
runtime is a Node.js process), the ratio of (2) to (1) (goal: at most 1.5x), and whether the app imported the
SageMaker SDK (it should not). CPU time over wall time shows how much of a program runs in parallel: on a 2-core
machine a program can go no faster than half its CPU time. Asserts nothing.

Usage: .venv/bin/python bench/synth_speed.py [repeats]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EMPTY_APP = ("import aws_cdk as cdk\napp = cdk.App(builtin_cloud_formation_validation={validation})\n"
             "cdk.Stack(app, 'Empty', env=cdk.Environment(account='111111111111', region='us-east-1'))\napp.synth()\n")
APP_WITHOUT_VALIDATION = ("from pathlib import Path\nfrom compiler.inputs.project import Project\n"
                          "from stacks.app import build_app\n"
                          "build_app(Project(Path('.').resolve()), builtin_validation=False).synth()\n")
PROGRAMS = {
    "empty CDK app": [sys.executable, "-c", EMPTY_APP.format(validation=True)],
    "app.py (cdk synth)": [sys.executable, "app.py"],
    "app, no built-in validation": [sys.executable, "-c", APP_WITHOUT_VALIDATION],
    "empty app, no built-in valid.": [sys.executable, "-c", EMPTY_APP.format(validation=False)],
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and every child it waited for)."""
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "CDK_OUTDIR": out, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
        cpu, start = children_cpu(), time.perf_counter()
        subprocess.run(args, cwd=ROOT, env=env, check=True, capture_output=True)
        return time.perf_counter() - start, children_cpu() - cpu


def sdk_imported() -> bool:
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "CDK_OUTDIR": out, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
        code = "import sys, runpy\ntry:\n    runpy.run_path('app.py', run_name='__main__')\nexcept SystemExit:\n    pass\n" \
               "print('sagemaker' in sys.modules)"
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        return done.stdout.strip().endswith("True")


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in PROGRAMS}
    for _ in range(repeats):
        for name, args in PROGRAMS.items():
            runs[name].append(timed(args))
    print(f"repeats: {repeats} (interleaved), CPUs: {os.cpu_count()}")
    walls = {name: statistics.median(wall for wall, _ in times) for name, times in runs.items()}
    for name, times in runs.items():
        cpu = statistics.median(c for _, c in times)
        print(f"{name:30s} wall median {walls[name]:6.2f} s (all: {', '.join(f'{w:.2f}' for w, _ in times)}), "
              f"CPU median {cpu:6.2f} s")
    floor, ours = walls["empty CDK app"], walls["app.py (cdk synth)"]
    print(f"ratio:  {ours / floor:6.2f}x the empty app (goal: at most 1.5x)")
    print(f"SageMaker SDK imported during synth: {sdk_imported()}")


if __name__ == "__main__":
    main()
