"""The EFA variables in a job's `Environment` (issue 33): which instance types get them, and the spec's own values.

The in-container training toolkit sets them itself on two lists of types, and nowhere else; the platform adds, in
the request's `Environment`, what the toolkit leaves out on a type with EFA. The parity tests take the expected
variables from the instance catalog (the code under test); here every expected value is a literal from its source:

- sagemaker-training 5.1.4 (`pip download --no-deps sagemaker-training==5.1.4`), `src/sagemaker_training/__init__.py`:
  `SM_EFA_NCCL_INSTANCES` (the toolkit sets FI_PROVIDER=efa) = ml.g4dn.8xlarge, ml.g4dn.12xlarge, ml.g5.48xlarge,
  ml.p3dn.24xlarge, ml.p4d.24xlarge, ml.p4de.24xlarge, ml.p5.48xlarge, ml.p5e.48xlarge, ml.trn1.32xlarge,
  ml.p6e-gb200.36xlarge; `SM_EFA_RDMA_INSTANCES` (also FI_EFA_USE_DEVICE_RDMA=1 and RDMAV_FORK_SAFE=1) =
  ml.p4d.24xlarge, ml.p4de.24xlarge, ml.p5.48xlarge, ml.p5e.48xlarge, ml.trn1.32xlarge, ml.p6e-gb200.36xlarge.
  `torch_distributed.py` `TorchDistributedRunner._setup` writes them into `os.environ` on those lists only.
- ../shared/FACTS.md section 2: "p5en, trn1n, trn2, g6e are on neither list: set those variables through
  `Environment` yourself"; CreateTrainingJob has no EFA switch.
- Amazon EC2 User Guide, "Elastic Fabric Adapter", supported instance types: g4dn.8xlarge and up have EFA,
  g4dn.4xlarge has none; g5.8xlarge and up have EFA; p5en, trn1n and trn2 support EFA with GPUDirect RDMA (RDMA read
  and write), the A10G g5 types do not.
"""

from __future__ import annotations

import pytest

from compiler.compilation.request import compile_request
from compiler.errors import SpecError

# A torchrun job on every type, from one ECR image (a framework image would tie the type to a framework version).
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker"
ALL_THREE = {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "RDMAV_FORK_SAFE": "1"}


def request_environment(make, envs, instance_type: str, environment: dict[str, str] | None = None):
    changes = {"framework_version": ..., "py_version": ..., "image_uri": IMAGE, "instance_type": instance_type}
    if environment is not None:
        changes["environment"] = environment
    return compile_request(make(**changes), envs["dev"]).get("Environment")


@pytest.mark.parametrize(("instance_type", "expected"), [
    # no EFA on the type: nothing to set (EC2 EFA docs: g4dn.8xlarge is the smallest g4dn with EFA)
    ("ml.g4dn.4xlarge", None),
    # on SM_EFA_NCCL_INSTANCES only, and no GPUDirect RDMA: the toolkit sets FI_PROVIDER itself
    ("ml.g4dn.8xlarge", None), ("ml.g4dn.12xlarge", None), ("ml.g5.48xlarge", None), ("ml.p3dn.24xlarge", None),
    # on both toolkit lists: the toolkit sets all three itself
    ("ml.p4d.24xlarge", None), ("ml.p4de.24xlarge", None), ("ml.p5.48xlarge", None), ("ml.p5e.48xlarge", None),
    ("ml.trn1.32xlarge", None), ("ml.p6e-gb200.36xlarge", None),
    # EFA without GPUDirect RDMA, on neither list: FI_PROVIDER only
    ("ml.g5.12xlarge", {"FI_PROVIDER": "efa"}), ("ml.g5.24xlarge", {"FI_PROVIDER": "efa"}),
    # EFA with GPUDirect RDMA, on neither list (FACTS.md section 2): all three
    ("ml.p5en.48xlarge", ALL_THREE), ("ml.trn1n.32xlarge", ALL_THREE), ("ml.trn2.48xlarge", ALL_THREE),
])
def test_efa_variables_are_sent_where_the_toolkit_does_not_set_them(make, envs, instance_type, expected):
    assert request_environment(make, envs, instance_type) == expected


def test_the_specs_own_variables_sit_beside_the_efa_ones(make, envs):
    assert request_environment(make, envs, "ml.p5en.48xlarge", {"NCCL_DEBUG": "INFO"}) == {
        "FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "RDMAV_FORK_SAFE": "1", "NCCL_DEBUG": "INFO"}
    # on a type the toolkit covers, the spec's variables are the whole Environment
    assert request_environment(make, envs, "ml.p4d.24xlarge", {"NCCL_DEBUG": "INFO"}) == {"NCCL_DEBUG": "INFO"}


@pytest.mark.parametrize(("instance_type", "environment", "expected"), [
    ("ml.p5en.48xlarge", {"FI_PROVIDER": "tcp"},
     {"FI_PROVIDER": "tcp", "FI_EFA_USE_DEVICE_RDMA": "1", "RDMAV_FORK_SAFE": "1"}),
    ("ml.p5en.48xlarge", {"FI_EFA_USE_DEVICE_RDMA": "0", "RDMAV_FORK_SAFE": "0"},
     {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "0", "RDMAV_FORK_SAFE": "0"}),
    ("ml.g5.12xlarge", {"FI_PROVIDER": "sockets"}, {"FI_PROVIDER": "sockets"}),
    ("ml.p4d.24xlarge", {"FI_PROVIDER": "tcp"}, {"FI_PROVIDER": "tcp"}),
])
def test_a_variable_the_spec_sets_itself_is_sent_with_the_specs_value(make, envs, instance_type, environment,
                                                                       expected):
    assert request_environment(make, envs, instance_type, environment) == expected


def test_a_spec_value_the_toolkit_overwrites_is_pointed_out(make):
    try:
        workload = make(instance_type="ml.p4d.24xlarge", environment={"FI_PROVIDER": "tcp"})
    except SpecError as error:
        said = [str(p) for p in error.problems]
    else:
        said = list(workload.warnings)
    assert any("FI_PROVIDER" in text for text in said), said


def _warnings(make, environment):
    return [text for text in make(instance_type="ml.p4d.24xlarge", distribution={"torch_distributed": {"enabled": True}},
                                  instance_count=2, environment=environment).warnings if "FI_PROVIDER" in text]


def test_a_spec_that_sets_the_toolkits_own_provider_is_not_warned(make):
    # aws/amazon-sagemaker-examples model_trainer_overview.ipynb sets FI_PROVIDER=efa beside torchrun on p4d: the
    # toolkit's `FI_PROVIDER=efa` replaces it with the same value
    assert _warnings(make, {"FI_PROVIDER": "efa"}) == []
    [warning] = _warnings(make, {"FI_PROVIDER": "tcp"})
    assert "sets FI_PROVIDER=efa itself on ml.p4d.24xlarge under torch_distributed, replacing 'tcp'" in warning
