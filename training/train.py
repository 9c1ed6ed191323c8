"""Entry point of the example workloads: SageMaker runs `python train.py --key value ...` from /opt/ml/code,
directly, under torchrun, or under mpirun, depending on the workload's `distribution`.

The workload's `secrets:` are read into the environment first (platform_secrets), before any library that reads a
token at import time is imported. Everything else lives in the `gptlm` package beside this file.
"""

import sys

import platform_secrets

if __name__ == "__main__":
    try:
        platform_secrets.resolve()
    except platform_secrets.SecretsError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
    from gptlm.launch import main
    from gptlm.shutdown import exit_process

    exit_process(main, sys.argv[1:])  # os._exit with main's code: no C++ destructor runs after the run ended
