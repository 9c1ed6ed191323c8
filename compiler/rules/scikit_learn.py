"""The SKLearn estimator's refusals that read the compute: scikit-learn trains on one instance, never on GPUs.

`SKLearn.__init__` (sagemaker/sklearn/estimator.py) refuses an instance_count other than 1 ("Scikit-Learn does not
support distributed training"), then passes instance_count=1 on, which the SDK refuses beside instance_groups; and
`_validate_not_gpu_instance_type` refuses its own list of GPU types even with an image of your own (without one, the
scikit-learn images in the SDK's catalog are CPU-only, which the image rule reports).
"""

from __future__ import annotations

from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import workload_rule
from compiler.sdk import sdk_rules

_SDK_GPU_TYPES = ("sklearn/estimator.py", "_validate_not_gpu_instance_type", "gpu_instance_types")


@workload_rule
def scikit_learn_trains_on_one_instance(w: Workload, f: Findings) -> None:
    if w.framework != "sklearn":
        return
    if w.compute.instance_groups:
        f.problem("instance_groups", "scikit-learn trains on one instance: the SKLearn estimator sets instance_count to "
                  "1 itself, which the SDK refuses beside instance_groups; use instance_type (and instance_count: 1)")
    elif w.instance_count != 1:
        f.problem("instance_count", f"scikit-learn trains on one instance, and the SKLearn estimator refuses "
                  f"instance_count {w.instance_count} (\"Scikit-Learn does not support distributed training\"); set "
                  "instance_count: 1, or use framework: xgboost or a built-in algorithm to train on several")
    if w.max_instance_count is not None and w.max_instance_count > 1:
        f.problem("max_instance_count", "scikit-learn trains on one instance: a run may not ask for more; remove "
                  "max_instance_count")


@workload_rule
def scikit_learn_runs_on_cpu(w: Workload, f: Findings) -> None:
    if w.framework != "sklearn" or w.compute.instance_type is None:
        return
    if w.compute.instance_type in sdk_rules.function_constant(*_SDK_GPU_TYPES):
        f.problem("instance_type", f"the SKLearn estimator refuses {w.compute.instance_type}: scikit-learn does not "
                  "train on GPUs; pick a CPU type such as ml.m5.xlarge")
