"""How the trainer compiles (GPU only; compilation itself is lazy, so the choice is visible on CPU): the whole model
under DDP, each block under FSDP and SMP v2, parameter names unchanged, the compile caches beside the checkpoints."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gptlm import distenv, parallel
from gptlm.backends.native import NativeBackend
from gptlm.backends.smp_v2 import SmpV2Backend
from gptlm.checkpoint import prune
from gptlm.hparams import TrainConfig
from gptlm.model import GPT, build_config


def _model() -> GPT:
    return GPT(build_config("tiny", 16))


def _compiled(module) -> bool:
    return getattr(module, "_compiled_call_impl", None) is not None


def test_ddp_compiles_the_whole_model_and_keeps_the_parameter_names():
    model = _model()
    names = list(model.state_dict())
    parallel.compile_model(model, "ddp")
    assert _compiled(model)
    assert not any(_compiled(block) for block in model.blocks)
    assert list(model.state_dict()) == names  # checkpoints written before still load


def test_fsdp_compiles_each_block():
    model = _model()
    names = list(model.state_dict())
    parallel.compile_model(model, "fsdp")
    assert not _compiled(model)
    assert all(_compiled(block) for block in model.blocks)
    assert list(model.state_dict()) == names


@pytest.mark.parametrize("backend, parallelism, whole", [(NativeBackend, "ddp", True), (NativeBackend, "fsdp", False),
                                                          (SmpV2Backend, "ddp", False)])
def test_backends_compile_for_their_wrapping_with_the_cache_beside_the_checkpoints(backend, parallelism, whole,
                                                                                   tmp_path, monkeypatch):
    """SMP v2 wraps each block in FSDP1 whatever `parallelism` says; the cache folder survives pruning."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "")  # so that the teardown restores the variable as it was
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    config = TrainConfig(compile=True, parallelism=parallelism, checkpoint_dir=str(tmp_path))
    chosen = backend(config, distenv.detect({}))
    chosen.cuda = True  # what a GPU container has; nothing is compiled until the model runs
    model = _model()
    chosen._maybe_compile(model)
    assert _compiled(model) is whole and all(_compiled(b) is not whole for b in model.blocks)
    cache = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
    assert cache == tmp_path / "compile_cache" / "rank0"
    cache.mkdir(parents=True, exist_ok=True)
    assert prune(tmp_path, keep=1) == [] and cache.is_dir()
