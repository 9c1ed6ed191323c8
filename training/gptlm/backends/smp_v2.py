"""SageMaker model parallel v2 (`torch.sagemaker`): the native backend plus `tsm.init()` and FSDP1.

Used when the job passes `mp_parameters` and the container has torch.sagemaker (SMP v2 DLCs, torchrun).
SMP v2 extends PyTorch FSDP1 (its hybrid sharding) rather than FSDP2, so the model goes through
`tsm.transform()` and then `FullyShardedDataParallel`; process group, collectives, DCP checkpoints and
export are the native backend's. Runs only in an SMP v2 container: no test here can start it.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision
from torch.distributed.fsdp.wrap import ModuleWrapPolicy

from gptlm.backends.native import NativeBackend
from gptlm.model import GPT, Block


class SmpV2Backend(NativeBackend):
    name = "smp_v2"

    def setup(self) -> None:
        super().setup()
        import torch.sagemaker as tsm  # only in SMP v2 containers; reads mp_parameters

        tsm.init()

    def _parallelism(self) -> str:
        return "smp_v2-fsdp"

    def _compile_mode(self) -> str:
        return "fsdp"  # FSDP1 wraps each block: compile per block whatever `parallelism` says

    def _clip(self, module: nn.Module, max_norm: float) -> torch.Tensor:
        """FSDP1 shards flat parameters: only its own clip_grad_norm_ sums the shards' norms across ranks
        (torch.nn.utils' would clip each rank's shard by its local norm)."""
        fsdp: Any = module
        return fsdp.clip_grad_norm_(max_norm)

    def wrap(self, model: GPT) -> nn.Module:
        import torch.sagemaker as tsm

        self._maybe_compile(model)
        transformed = tsm.transform(model)
        precision = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if self.bf16 else None
        return FullyShardedDataParallel(
            transformed, auto_wrap_policy=ModuleWrapPolicy({Block}), mixed_precision=precision,
            device_id=self.device, use_orig_params=True,
        )
