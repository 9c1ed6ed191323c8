"""Entry point of the example workloads: SageMaker runs `python train.py --key value ...` from /opt/ml/code,
directly, under torchrun, or under mpirun, depending on the workload's `distribution`.

Everything else lives in the `gptlm` package beside this file, the only code shipped with the job.
"""

import sys

from gptlm.launch import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
