"""What `train.py` runs: parse the hyperparameters, find the launcher, pick the training path.

The SMP v1 path is imported only when chosen: SMP v1 containers ship PyTorch 2.0, which lacks the
distributed-checkpoint APIs the main trainer imports.
"""

from __future__ import annotations

import sys

from gptlm import distenv, hparams
from gptlm.errors import UserError


def smp_mode(config: hparams.TrainConfig) -> str:
    """"" (no SageMaker model parallel), "v2" (torch.sagemaker) or "v1" (smdistributed.modelparallel).

    SMP is on only when the job passes `mp_parameters` (the SDK adds them from the workload's modelparallel
    distribution): `tsm.init()` and `smp.init()` both read their configuration from there.
    """
    if not config.mp_parameters:
        return ""
    if distenv.module_available("torch.sagemaker"):
        return "v2"
    if distenv.module_available("smdistributed.modelparallel"):
        return "v1"
    raise distenv.LaunchError(
        "mp_parameters is set (the workload enables SageMaker model parallel) but this container has neither "
        "torch.sagemaker (SMP v2) nor smdistributed.modelparallel (SMP v1); use a SageMaker PyTorch DLC that "
        "ships SMP, or remove modelparallel from the workload's distribution"
    )


def main(argv: list[str] | None = None) -> int:
    import torch.distributed as dist

    argv = sys.argv[1:] if argv is None else argv
    try:
        config, ignored = hparams.parse(argv)
        env = distenv.detect()
        mode = smp_mode(config)
        if ignored and env.is_main:
            print(f"ignoring arguments this trainer does not use: {' '.join(ignored)}", flush=True)
        if mode == "v1":
            from gptlm import smp_v1

            return smp_v1.run(config)
        from gptlm.trainer import Trainer

        code = Trainer(config, env, smp_v2=(mode == "v2")).run()
        if dist.is_available() and dist.is_initialized():
            # Every rank reaches here before any tears its groups down: a rank that destroys its gloo pairs while
            # a peer is still finishing the export's collectives can abort that peer ("terminate called without
            # an active exception", seen once on CPU in CI-like runs).
            dist.barrier()
        return code
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    finally:
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
