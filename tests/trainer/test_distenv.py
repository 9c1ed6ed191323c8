"""Each SageMaker launcher is recognised from the variables it sets, and picks the right backend."""

from __future__ import annotations

import pytest
import torch
from gptlm import distenv, launch
from gptlm.backends.base import Backend
from gptlm.distenv import LaunchError
from gptlm.hparams import ConfigError, TrainConfig


def test_torchrun():
    env = distenv.detect({"RANK": "3", "WORLD_SIZE": "16", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "8",
                          "MASTER_ADDR": "algo-1", "MASTER_PORT": "7777"})
    assert (env.launcher, env.rank, env.world_size, env.local_rank, env.master_addr, env.master_port) == \
        ("torchrun", 3, 16, 3, "algo-1", 7777)
    assert env.backend(cuda=True) == "nccl" and env.backend(cuda=False) == "gloo"
    assert not env.is_main


def test_mpi_takes_rank_from_open_mpi_and_master_from_the_first_host():
    env = distenv.detect({"OMPI_COMM_WORLD_RANK": "9", "OMPI_COMM_WORLD_SIZE": "16",
                          "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "8",
                          "SM_HOSTS": '["algo-2", "algo-1"]', "SM_CURRENT_HOST": "algo-2"})
    assert (env.launcher, env.rank, env.world_size, env.local_rank, env.local_world_size) == ("mpi", 9, 16, 1, 8)
    assert env.master_addr == "algo-1"
    assert env.backend(cuda=True) == "nccl"


def test_smddp_backend_when_the_toolkit_enables_it():
    env = distenv.detect({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "8",
                          "SM_FRAMEWORK_PARAMS": '{"sagemaker_distributed_dataparallel_enabled": true}'})
    assert env.smddp and env.backend(cuda=True) == "smddp"
    off = distenv.detect({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "8",
                          "SM_FRAMEWORK_PARAMS": '{"sagemaker_distributed_dataparallel_enabled": false}'})
    assert not off.smddp and off.backend(cuda=True) == "nccl"


def test_smddp_without_an_mpi_launch_is_an_error():
    with pytest.raises(LaunchError, match=r"smdistributed\.dataparallel"):
        distenv.detect({"SM_FRAMEWORK_PARAMS": '{"sagemaker_distributed_dataparallel_enabled": true}'})


def test_plain_process():
    env = distenv.detect({})
    assert env.launcher == "single" and env.world_size == 1 and env.is_main and not env.distributed


def test_bad_rank_variable_is_named():
    with pytest.raises(LaunchError, match="RANK"):
        distenv.detect({"RANK": "zero", "WORLD_SIZE": "2"})


def test_backend_follows_mp_parameters_and_what_the_container_has(monkeypatch):
    available: set[str] = set()
    monkeypatch.setattr(distenv, "module_available", lambda name: name in available)
    smp = TrainConfig(mp_parameters={"partitions": 2})
    assert launch.backend_name(TrainConfig()) == "native"
    with pytest.raises(LaunchError, match=r"neither torch\.sagemaker"):
        launch.backend_name(smp)
    available.add("smdistributed.modelparallel")
    assert launch.backend_name(smp) == "smp_v1"
    available.add("torch.sagemaker")
    assert launch.backend_name(smp) == "smp_v2"  # an SMP v2 container wins
    assert launch.backend_name(TrainConfig()) == "native"  # no mp_parameters: no SMP even where it is installed


@pytest.mark.parametrize("name, cls", [("native", "NativeBackend"), ("smp_v1", "SmpV1Backend"),
                                       ("smp_v2", "SmpV2Backend")])
def test_each_backend_is_built_without_side_effects(name, cls):
    """Construction touches no process group and imports no SMP: launch can build any of them anywhere."""
    env = distenv.detect({})
    backend = launch.make_backend(name, TrainConfig(mp_parameters={"microbatches": 2}), env)
    assert type(backend).__name__ == cls and backend.name == name
    assert isinstance(backend, Backend)
    assert (backend.dp_rank, backend.dp_size, backend.is_main) == (0, 1, True)


@pytest.mark.skipif(torch.cuda.is_available(), reason="bf16 is allowed where there is a GPU")
def test_bf16_needs_a_gpu():
    with pytest.raises(ConfigError, match="bf16 needs a GPU"):
        launch.make_backend("native", TrainConfig(precision="bf16"), distenv.detect({}))
