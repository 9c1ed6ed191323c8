"""What `train.py` runs: parse the hyperparameters, find the launcher, pick the backend, run the loop.

Only the chosen backend's module is imported: SMP v1 containers ship PyTorch 2.0, which lacks the
distributed-checkpoint APIs the native and SMP v2 backends use.
"""

from __future__ import annotations

import sys

from gptlm import distenv, hparams, loop, shutdown
from gptlm.backends.base import Backend
from gptlm.errors import UserError

NATIVE, SMP_V1, SMP_V2 = "native", "smp_v1", "smp_v2"


def backend_name(config: hparams.TrainConfig) -> str:
    """`native`, or SageMaker model parallel: `smp_v2` (torch.sagemaker) or `smp_v1` (smdistributed.modelparallel).

    SMP is on only when the job passes `mp_parameters` (the SDK adds them from the workload's modelparallel
    distribution): `tsm.init()` and `smp.init()` both read their configuration from there.
    """
    if not config.mp_parameters:
        return NATIVE
    if distenv.module_available("torch.sagemaker"):
        return SMP_V2
    if distenv.module_available("smdistributed.modelparallel"):
        return SMP_V1
    raise distenv.LaunchError(
        "mp_parameters is set (the workload enables SageMaker model parallel) but this container has neither "
        "torch.sagemaker (SMP v2) nor smdistributed.modelparallel (SMP v1); use a SageMaker PyTorch DLC that "
        "ships SMP, or remove modelparallel from the workload's distribution"
    )


def make_backend(name: str, config: hparams.TrainConfig, env: distenv.DistEnv) -> Backend:
    """The backend called `name`, importing its module (and what that needs) only now."""
    if name == SMP_V1:
        from gptlm.backends.smp_v1 import SmpV1Backend

        return SmpV1Backend(config, env)
    if name == SMP_V2:
        from gptlm.backends.smp_v2 import SmpV2Backend

        return SmpV2Backend(config, env)
    from gptlm.backends.native import NativeBackend

    return NativeBackend(config, env)


def main(argv: list[str] | None = None) -> int:
    """Train and return this rank's exit code: 0, 143 (stopped by SIGTERM after a checkpoint), 2 (a user error).

    After a run that every rank ended the same way (finished, or agreed to stop), the process groups are torn down
    in order (gptlm.shutdown) before returning. A user error or an exception skips that: peers may be waiting in a
    collective, and the entry point leaves without finalizing the interpreter anyway (`shutdown.exit_process`).
    """
    argv = sys.argv[1:] if argv is None else argv
    try:
        config, ignored = hparams.parse(argv)
        env = distenv.detect()
        backend = make_backend(backend_name(config), config, env)
        if ignored and env.is_main:
            print(f"ignoring arguments this trainer does not use: {' '.join(ignored)}", flush=True)
        code = loop.run(config, backend)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    return shutdown.orderly(backend.close, code)
