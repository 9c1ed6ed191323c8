"""GPT language-model training that runs inside SageMaker jobs (shipped as /opt/ml/code/gptlm)."""

import time as _time

STARTED = _time.monotonic()  # when the trainer's first module loaded (before PyTorch): time to the first step
