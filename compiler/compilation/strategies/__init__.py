"""Distribution strategies: one class per strategy of the SDK's `distribution` dict, and what reads all of them.

- `check(workload, report, warn)`: every rule of the SDK's `validate_distribution` and the platform's, reported
  against `distribution.*` fields (called by the spec rules);
- `hyperparameters(workload)`: what the SDK's estimators add for the distribution (`compiler.compilation.strategies.encoding`);
- `launch_plan(workload)`: which strategy launches the processes, for summaries and `trainctl run-local`.

A new strategy is one module with one `Strategy` subclass, added to `STRATEGIES` below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compiler.compilation.strategies.base import Job, Report, Strategy, enabled
from compiler.compilation.strategies.encoding import distribution_hyperparameters
from compiler.compilation.strategies.mpi import Mpi
from compiler.compilation.strategies.mwms import MultiWorkerMirrored
from compiler.compilation.strategies.parameter_server import ParameterServer
from compiler.compilation.strategies.pytorchddp import PyTorchDDP
from compiler.compilation.strategies.pytorchxla import PyTorchXLA
from compiler.compilation.strategies.smddp import SMDataParallel
from compiler.compilation.strategies.smp import SMModelParallel
from compiler.compilation.strategies.torch_distributed import TorchDistributed
from compiler.inputs.model import DISTRIBUTED_FRAMEWORKS, AlgorithmImage, UriImage, Workload
from compiler.inputs.reader import suggest

# Launch precedence: the first enabled strategy in this order starts the processes.
STRATEGIES: tuple[type[Strategy], ...] = (
    SMModelParallel, SMDataParallel, PyTorchDDP, TorchDistributed, Mpi, ParameterServer, MultiWorkerMirrored,
    PyTorchXLA,
)
KEYS = ("torch_distributed", "smdistributed", "mpi", "pytorchddp", "parameter_server",
        "multi_worker_mirrored_strategy", "pytorchxla")
INSTANCE_GROUPS_KEY = "instance_groups"
_SMD_STRATEGIES = ("dataparallel", "modelparallel")


@dataclass(frozen=True)
class LaunchPlan:
    """How the job's processes start: the strategy's summary name, SageMaker's launcher, run-local's stand-in."""

    name: str
    launcher: str
    local_launcher: str | None


NO_DISTRIBUTION = LaunchPlan("none", "single", "torchrun")


def effective_distribution(workload: Workload) -> dict[str, Any]:
    """The distribution as the SDK's estimator holds it after `__init__`.

    PyTorch rewrites `pytorchddp` to `smdistributed.dataparallel`; `validate_distribution` turns the distribution's
    instance groups into names, filling in the only group of a one-group cluster.
    """
    d = dict(workload.distribution)
    if workload.framework == "pytorch" and "pytorchddp" in d and "smdistributed" not in d:
        d["smdistributed"] = {"dataparallel": d.pop("pytorchddp")}
    groups = workload.compute.instance_groups
    if d and groups:
        named = list(d.get(INSTANCE_GROUPS_KEY) or [])
        if len(groups) == 1 and not named:
            named = [groups[0].name]
        if named:
            d[INSTANCE_GROUPS_KEY] = named
    return d


def job_of(workload: Workload, distribution: Mapping[str, Any] | None = None) -> Job:
    d = effective_distribution(workload) if distribution is None else distribution
    compute = workload.compute
    names = d.get(INSTANCE_GROUPS_KEY) if compute.instance_groups else None
    if names:
        types = tuple(g.instance_type for g in compute.instance_groups if g.name in names)
    else:
        types = tuple(g.instance_type for g in compute.groups)
    code = workload.code
    e = workload.estimator
    base, base_version = workload.framework, e.framework_version
    if workload.framework == "huggingface":  # HuggingFace validates the distribution against its base framework
        base, base_version = ("tensorflow", e.tensorflow_version) if e.tensorflow_version else ("pytorch",
                                                                                              e.pytorch_version)
    return Job(
        framework=workload.framework, framework_version=e.framework_version, py_version=e.py_version,
        base_framework=base, base_version=base_version,
        image_uri=workload.image.uri if isinstance(workload.image, UriImage) else None,
        uses_own_image=workload.image.kind != "framework",
        entry_point=code.entry_point if code is not None else None,
        instance_type=compute.instance_type, train_instance_types=types, distribution=d,
        cluster_instance_types=tuple(g.instance_type for g in compute.groups),
    )


def present_strategies(distribution: Mapping[str, Any]) -> list[Strategy]:
    return [cls(cls.config_of(distribution)) for cls in STRATEGIES if cls.present(distribution)]


def launch_plan(workload: Workload) -> LaunchPlan:
    if workload.framework not in DISTRIBUTED_FRAMEWORKS:
        return NO_DISTRIBUTION  # the generic, XGBoost and SKLearn estimators ignore distribution
    d = effective_distribution(workload)
    for strategy in present_strategies(d):
        if not strategy.is_enabled:
            continue
        if isinstance(strategy, SMModelParallel):
            version = strategy.version(d)
            launcher = "torchrun" if version == 2 else "mpirun"
            return LaunchPlan(f"smp-v{version} ({'torch_distributed' if version == 2 else 'mpi'})", launcher, None)
        return LaunchPlan(strategy.name, strategy.launcher, strategy.local_launcher)
    return NO_DISTRIBUTION


# ------------------------------------------------------------------------------------------------------ checks


def _check_keys(workload: Workload, report: Report) -> bool:
    """Known keys, mappings, strategies the framework's containers launch; False stops further checks."""
    ok = True
    for key, value in workload.distribution.items():
        if key == INSTANCE_GROUPS_KEY:
            continue
        if key not in KEYS:
            close = suggest(str(key), KEYS)
            hint = f"did you mean '{close}'? " if close else ""
            report(f"distribution.{key}", f"unknown strategy; {hint}the SDK knows {', '.join(KEYS)} (it would ignore "
                   "this key silently)")
            ok = False
        elif not isinstance(value, Mapping):
            report(f"distribution.{key}", "must be a mapping such as {enabled: true}")
            ok = False
    if not ok:
        return False
    smd = workload.distribution.get("smdistributed")
    if smd is not None:
        if not smd:
            report("distribution.smdistributed", "must hold dataparallel or modelparallel")
            return False
        unknown = [k for k in smd if k not in _SMD_STRATEGIES]
        for key in unknown:
            report(f"distribution.smdistributed.{key}", "unknown smdistributed strategy; use dataparallel or modelparallel")
        if len(smd) > 1 and not unknown:
            report("distribution.smdistributed", "only one smdistributed strategy at a time: dataparallel or "
                   "modelparallel")
        if unknown or len(smd) > 1:
            return False
        if not all(isinstance(v, Mapping) for v in smd.values()):
            report(f"distribution.smdistributed.{next(iter(smd))}", "must be a mapping such as {enabled: true}")
            return False
    return ok


def _check_frameworks(workload: Workload, strategies: list[Strategy], report: Report) -> None:
    for strategy in strategies:
        if not strategy.is_enabled:
            continue  # a strategy switched off starts nothing, wherever it is written
        if workload.framework not in strategy.frameworks and not isinstance(strategy, PyTorchXLA):
            report(strategy.where.rsplit(".", 1)[0] if strategy.key == "smdistributed" else strategy.where,
                   f"is not launched by the {workload.framework} estimator's containers (only "
                   f"{', '.join(strategy.frameworks)}): nothing in them would start it")


def _check_instance_groups(workload: Workload, report: Report) -> None:
    """`fw_utils.validate_distribution`'s rules for `distribution.instance_groups`."""
    if not workload.distribution:
        return  # the SDK validates only a distribution it is given: without one, every group runs the entry point
    named = workload.distribution.get(INSTANCE_GROUPS_KEY)
    groups = workload.compute.instance_groups
    where = f"distribution.{INSTANCE_GROUPS_KEY}"
    if named is None:
        if len(groups) > 1:
            report(where, "name the one instance group that runs training, e.g. instance_groups: "
                   f"[{groups[0].name}] (the SDK supports one training group)")
        return
    if not isinstance(named, list) or not all(isinstance(n, str) for n in named):
        report(where, "must be a list of instance group names")
        return
    if not groups and named:
        report(where, "names instance groups, but the spec has none: set instance_groups (or remove this key)")
    elif len(named) > len(groups):
        report(where, "names more groups than the spec's instance_groups")
    elif len(groups) > 1 and len(named) != 1:
        report(where, "must name exactly one instance group (the SDK supports one training group)")
    known = {g.name for g in groups}
    for name in named:
        if groups and name not in known:
            report(where, f"{name!r} is not one of the spec's instance groups ({', '.join(sorted(known))})")


def _check_trainium(job: Job, written: Mapping[str, Any], report: Report) -> None:
    """`fw_utils.validate_distribution_for_instance_type`: Trainium runs torch_distributed only. It counts the keys
    of the distribution as written, so a written `instance_groups` is a second strategy to it."""
    keys = list(written)
    for instance_type in job.train_instance_types:
        if not instance_type.split(".")[1].startswith("trn") or not keys or keys == ["torch_distributed"]:
            continue
        if sorted(keys) == sorted(["torch_distributed", INSTANCE_GROUPS_KEY]):
            report(f"distribution.{INSTANCE_GROUPS_KEY}", f"{instance_type} (Trainium) takes torch_distributed alone, "
                   "and the SDK counts distribution.instance_groups as another strategy: use one group of Trainium "
                   "instances without it (its group is named for you), or instance_type")
        else:
            others = [k for k in keys if k != INSTANCE_GROUPS_KEY] or keys
            report("distribution", f"{instance_type} (Trainium) supports only torch_distributed, not {', '.join(others)}")


# The strategies each estimator launches on the training instance groups (the rest refuse them, as above).
_TORCH_GROUP_LAUNCHERS = "torch_distributed, pytorchddp, mpi or smdistributed dataparallel"
_GROUP_LAUNCHERS = {"pytorch": _TORCH_GROUP_LAUNCHERS, "huggingface": _TORCH_GROUP_LAUNCHERS,
                    "tensorflow": "mpi or smdistributed dataparallel"}


def _check_groups_need_strategy(workload: Workload, job: Job, report: Report) -> None:
    """`_distribution_configuration`: instance groups need mpi or SMDDP on the generic path."""
    if not job.distribution.get(INSTANCE_GROUPS_KEY):
        return
    d = job.distribution
    direct = (workload.framework == "pytorch" and enabled(d.get("torch_distributed")) and "smdistributed" not in d) or (
        workload.framework == "huggingface" and (enabled(d.get("pytorchddp")) or enabled(d.get("torch_distributed"))))
    if direct:
        return
    smddp = enabled((d.get("smdistributed") or {}).get("dataparallel"))
    if not (enabled(d.get("mpi")) or smddp):
        launchers = _GROUP_LAUNCHERS.get(workload.framework or "", "mpi or smdistributed dataparallel")
        report(f"distribution.{INSTANCE_GROUPS_KEY}", "training instance groups need an enabled strategy that uses "
               f"them, as the SDK requires: enable {launchers} for them")


def _check_ignored_mpi(workload: Workload, report: Report) -> None:
    """PyTorch's `_pytorch_distribution_configuration`: with torch_distributed enabled and no smdistributed, it sends
    torch_distributed's settings alone, so an enabled mpi (its processes_per_host, custom_mpi_options) is dropped."""
    d = workload.distribution
    if (workload.framework == "pytorch" and enabled(d.get("torch_distributed")) and enabled(d.get("mpi"))
            and "smdistributed" not in d and "pytorchddp" not in d):
        report("distribution.mpi", "the PyTorch estimator ignores mpi when torch_distributed is enabled (torchrun "
               "launches the processes and none of mpi's settings is sent); remove mpi, or torch_distributed to "
               "launch with MPI")


# Why an estimator that takes no distribution has none: its containers start the processes themselves.
_NO_DISTRIBUTION = {
    "xgboost": "the XGBoost estimator drops distribution without a word: its container runs the entry point on every "
               "instance, and the script trains across them itself (sagemaker_xgboost_container.distributed.rabit_run, "
               "with the train channel ShardedByS3Key); remove distribution",
    "sklearn": "the SKLearn estimator drops distribution without a word, and scikit-learn trains on one instance only; "
               "remove distribution",
}


def _ignored_distribution(workload: Workload, report: Report, warn: Report) -> None:
    """The estimators without strategies: a distribution they would drop is refused, or (generic) warned about."""
    if not workload.distribution:
        return
    if isinstance(workload.image, AlgorithmImage):
        report("distribution", f"the built-in algorithm {workload.image.algorithm} distributes its work itself on the "
               "instances it is given (the generic Estimator sends no distribution); remove distribution")
    elif workload.framework in _NO_DISTRIBUTION:
        report("distribution", _NO_DISTRIBUTION[workload.framework])
    else:
        warn("distribution", "the generic Estimator (image_uri without a framework) ignores distribution: no "
             "launcher is set up and no sagemaker_* hyperparameters are sent, so the image must start its own "
             "processes on every host; remove distribution, or name the framework whose launcher you want")


def check(workload: Workload, report: Report, warn: Report) -> None:
    """Every distribution rule of the SDK and the platform; problems name `distribution.*` (or the field to fix)."""
    if workload.framework not in DISTRIBUTED_FRAMEWORKS:
        _ignored_distribution(workload, report, warn)
        return
    if not _check_keys(workload, report):
        return
    _check_ignored_mpi(workload, report)
    _check_instance_groups(workload, report)
    raw_strategies = present_strategies(workload.distribution)
    _check_frameworks(workload, raw_strategies, report)
    if not all(s.check_shape(report) for s in raw_strategies):
        return
    job = job_of(workload)
    if not job.train_instance_types:
        return
    _check_trainium(job, workload.distribution, report)
    _check_groups_need_strategy(workload, job, report)
    for strategy in present_strategies(job.distribution):
        if workload.framework in strategy.frameworks or isinstance(strategy, PyTorchXLA):
            strategy.check(job, report, warn)


def hyperparameters(workload: Workload) -> dict[str, Any]:
    """The SDK's distribution hyperparameters for the workload, before JSON encoding (TensorFlow's model_dir apart)."""
    return distribution_hyperparameters(workload.framework, job_of(workload))
