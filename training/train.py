"""Entry point of the example workloads: SageMaker runs `python train.py --key value ...` from /opt/ml/code,
directly, under torchrun, or under mpirun, depending on the workload's `distribution`.

Everything else lives in the `gptlm` package beside this file, the only code shipped with the job.
"""

import sys

from gptlm.launch import main
from gptlm.shutdown import exit_process

if __name__ == "__main__":
    exit_process(main, sys.argv[1:])  # os._exit with main's code: no C++ destructor runs after the run ended
