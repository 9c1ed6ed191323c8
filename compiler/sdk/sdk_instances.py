"""The SageMaker Python SDK's own notions of an instance type, reproduced so the compiler never imports the SDK.

The SDK decides several rules from the instance type's name alone: which types are "GPU" and "Trainium" for its
distribution checks (`fw_utils._is_gpu_instance`, `_is_trainium_instance`), and which accept an EBS volume size and
a volume KMS key (`utils.volume_size_supported`, `instance_supports_kms`). Matching its answers matters more than
matching the hardware (ml.g4dn is "GPU", ml.p5.4xlarge is "GPU"), so these follow its code line by line; a test
compares them with the SDK for every training instance type.
"""

from __future__ import annotations

import re

_FAMILY = re.compile(r"^ml[._]([a-z\d\-]+)\.?\w*$")
_NO_EBS_FAMILIES = ("g5", "g6", "p5", "trn1")


def family(instance_type: str) -> str:
    """`utils.get_instance_type_family`: 'p4d' for ml.p4d.24xlarge, '' when the name does not parse."""
    match = _FAMILY.match(instance_type)
    return match[1] if match else ""


def is_gpu(instance_type: str) -> bool:
    """`fw_utils._is_gpu_instance`: families starting with p or g (and local_gpu)."""
    return instance_type == "local_gpu" or family(instance_type)[:1] in ("p", "g")


def is_trainium(instance_type: str) -> bool:
    """`fw_utils._is_trainium_instance`: families starting with trn."""
    return family(instance_type).startswith("trn")


def supports_volume(instance_type: str) -> bool:
    """`utils.volume_size_supported` (= `instance_supports_kms`): no EBS volume on local-NVMe families."""
    parts = instance_type.split(".")
    if len(parts) == 3 and parts[0] == "ml":
        parts = parts[1:]
    if len(parts) != 2:
        return False
    name = parts[0]
    return "d" not in name and not any(name.startswith(prefix) for prefix in _NO_EBS_FAMILIES)
