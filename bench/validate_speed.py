"""How long `python -m trainctl validate` takes for the shipped workloads, and whether it imports the SDK.

Target: well under a second beyond interpreter start. Prints the figures; asserts nothing.
Usage: .venv/bin/python bench/validate_speed.py [repeats]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    baseline = [timed([sys.executable, "-c", "pass"]) for _ in range(repeats)]
    validate = [timed([sys.executable, "-m", "trainctl", "validate"]) for _ in range(repeats)]
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, trainctl.cli as c; c.main(['validate']); "
         "print('sagemaker' in sys.modules, 'aws_cdk' in sys.modules, file=sys.stderr)"],
        cwd=ROOT, capture_output=True, text=True,
    )
    sdk_loaded, cdk_loaded = probe.stderr.split()[-2:]
    from compiler.inputs.project import Project
    from compiler.spec import workload_files

    print(f"workloads: {len(workload_files(Project(ROOT).workloads_dir))}, repeats: {repeats}")
    print(f"interpreter start:          median {statistics.median(baseline) * 1000:7.1f} ms")
    print(f"python -m trainctl validate: median {statistics.median(validate) * 1000:7.1f} ms")
    print(f"validate beyond start:       median {(statistics.median(validate) - statistics.median(baseline)) * 1000:7.1f} ms")
    print(f"SageMaker SDK imported: {sdk_loaded}; CDK imported: {cdk_loaded}")


if __name__ == "__main__":
    main()
