"""Distribution strategies: which one a spec asks for, whether the instance can run it, and the
hyperparameters the SageMaker Python SDK v2 sends for it.

The encoding mirrors the SDK (`Framework._distribution_configuration`, PyTorch's and HuggingFace's
`_*_distribution_configuration`, TensorFlow's `model_dir`): the parity tests run the real SDK against it.
The checks are the SDK's own (`fw_utils.validate_*`, `validate_mp_config`, with its messages' substance),
plus the platform's: processes per host within the instance's accelerators, modelparallel with its launcher,
multi-node jobs without EFA flagged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from compiler import sdk_rules

if TYPE_CHECKING:
    from compiler.spec import Workload, _Checker

STRATEGIES = (
    "torch_distributed", "smdistributed", "mpi", "pytorchddp", "parameter_server",
    "multi_worker_mirrored_strategy",
)
_FRAMEWORKS_FOR = {
    "torch_distributed": ("pytorch", "huggingface"),
    "pytorchddp": ("pytorch", "huggingface"),
    "parameter_server": ("tensorflow",),
    "multi_worker_mirrored_strategy": ("tensorflow",),
    "smdistributed": ("pytorch", "tensorflow", "huggingface"),
    "mpi": ("pytorch", "tensorflow", "huggingface"),
}
_SUBKEYS = {
    "torch_distributed": {"enabled"},
    "pytorchddp": {"enabled", "custom_mpi_options"},
    "parameter_server": {"enabled", "custom_mpi_options"},
    "multi_worker_mirrored_strategy": {"enabled"},
    "mpi": {"enabled", "processes_per_host", "custom_mpi_options"},
}
_SMDDP_KEYS = {"enabled", "custom_mpi_options"}
_SMP_KEYS = {"enabled", "parameters"}
_INSTANCE_FAMILY = re.compile(r"^ml[._]([a-z\d\-]+)\.?\w*$")


def _enabled(distribution: dict[str, Any], key: str) -> bool:
    value = distribution.get(key)
    return isinstance(value, dict) and value.get("enabled", False) is True


def _smd(distribution: dict[str, Any], key: str) -> bool:
    smd = distribution.get("smdistributed")
    return isinstance(smd, dict) and isinstance(smd.get(key), dict) and smd[key].get("enabled", False) is True


def strategy_name(distribution: dict[str, Any]) -> str:
    """A short name for summaries: the launcher the job will use."""
    if _smd(distribution, "modelparallel"):
        return "smp-v2 (torch_distributed)" if _enabled(distribution, "torch_distributed") else "smp-v1 (mpi)"
    if _smd(distribution, "dataparallel") or _enabled(distribution, "pytorchddp"):
        return "smddp" if not _enabled(distribution, "pytorchddp") else "pytorchddp"
    for key in ("torch_distributed", "mpi", "parameter_server", "multi_worker_mirrored_strategy"):
        if _enabled(distribution, key):
            return key
    return "none"


def _sdk_gpu(instance_type: str) -> bool:
    """The SDK's notion of a GPU instance (`fw_utils._is_gpu_instance`): families starting with p or g."""
    match = _INSTANCE_FAMILY.match(instance_type)
    return bool(match and match[1][:1] in ("p", "g"))


def _sdk_trainium(instance_type: str) -> bool:
    match = _INSTANCE_FAMILY.match(instance_type)
    return bool(match and match[1].startswith("trn"))


def check(c: _Checker, w: Workload) -> None:
    """Every distribution rule, reported against `distribution.*` fields."""
    d = w.distribution
    for key in d:
        if key not in STRATEGIES:
            import difflib

            close = difflib.get_close_matches(str(key), STRATEGIES, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            c.add(f"distribution.{key}", f"unknown strategy; {hint}the SDK knows {', '.join(STRATEGIES)}")
            return
        if not isinstance(d[key], dict):
            c.add(f"distribution.{key}", "must be a mapping such as {enabled: true}")
            return
        if w.framework not in _FRAMEWORKS_FOR[key]:
            c.add(f"distribution.{key}", f"is not available with framework {w.framework} "
                  f"(only {', '.join(_FRAMEWORKS_FOR[key])})")
        if key in _SUBKEYS:
            c.unknown_keys(f"distribution.{key}.", d[key], _SUBKEYS[key])
            enabled = d[key].get("enabled", False)
            if not isinstance(enabled, bool):
                c.add(f"distribution.{key}.enabled", "must be true or false")
    instance = w.instance
    uses_image = w.image.kind != "framework"

    # Trainium runs torch_distributed only (fw_utils.validate_distribution_for_instance_type).
    if _sdk_trainium(w.instance_type) and d and list(d) != ["torch_distributed"]:
        c.add("distribution", f"{w.instance_type} (Trainium) supports only torch_distributed, not "
              f"{', '.join(d)}")

    if "pytorchddp" in d and "smdistributed" in d:
        c.add("distribution", "cannot use both pytorchddp and smdistributed; keep one")

    _check_mpi(c, w)
    _check_smdistributed(c, w, uses_image)
    _check_torch_distributed(c, w, uses_image)

    if _enabled(d, "multi_worker_mirrored_strategy"):
        version = w.framework_version
        if w.framework == "tensorflow" and version and _vtuple(version) < (2, 9):
            c.add("distribution.multi_worker_mirrored_strategy",
                  f"needs TensorFlow 2.9 or newer (framework_version is {version})")
        if "smdistributed" in d or "parameter_server" in d:
            c.add("distribution.multi_worker_mirrored_strategy",
                  "cannot be combined with smdistributed or parameter_server")
    if _enabled(d, "parameter_server") and instance.accelerators > 1 and instance.has_gpu:
        c.warn("distribution.parameter_server",
               f"parameter server runs one worker per host: {instance.accelerators - 1} of the "
               f"{instance.accelerators} GPUs of {w.instance_type} would sit idle; use mpi or a single-GPU type")

    if w.instance_count > 1 and not instance.has_efa:
        c.warn("instance_type", f"{w.instance_count} nodes of {w.instance_type}, which has no EFA: inter-node "
               "traffic goes over TCP; pick an EFA type (e.g. ml.p4d.24xlarge, ml.p5.48xlarge) for multi-node jobs")
    if (instance.has_gpu or instance.is_trainium) and not d and w.instance_count > 1:
        c.warn("distribution", f"{w.instance_count} accelerated nodes but no distribution strategy: each host "
               "runs the entry point alone; set torch_distributed (or another strategy)")


def _vtuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def _check_mpi(c: _Checker, w: Workload) -> None:
    mpi = w.distribution.get("mpi")
    if not isinstance(mpi, dict):
        return
    per_host = mpi.get("processes_per_host")
    if per_host is not None:
        if not isinstance(per_host, int) or isinstance(per_host, bool) or per_host < 1:
            c.add("distribution.mpi.processes_per_host", "must be a positive whole number")
        else:
            limit = w.instance.accelerators or w.instance.vcpus
            what = "GPU" if w.instance.has_gpu else ("Trainium chip" if w.instance.is_trainium else "vCPU")
            what += "s" if limit > 1 else ""
            if per_host > limit:
                c.add("distribution.mpi.processes_per_host",
                      f"{per_host} processes on {w.instance_type}, which has {limit} {what}; use at most {limit}")
    options = mpi.get("custom_mpi_options", "")
    if not isinstance(options, str):
        c.add("distribution.mpi.custom_mpi_options", "must be a string of mpirun options")


def _check_smdistributed(c: _Checker, w: Workload, uses_image: bool) -> None:
    d = w.distribution
    smd = d.get("smdistributed")
    if smd is None:
        return
    if not isinstance(smd, dict) or not smd:
        c.add("distribution.smdistributed", "must hold dataparallel or modelparallel")
        return
    if len(smd) > 1:
        c.add("distribution.smdistributed", "only one smdistributed strategy at a time: dataparallel or modelparallel")
        return
    strategy = next(iter(smd))
    if strategy not in ("dataparallel", "modelparallel"):
        c.add(f"distribution.smdistributed.{strategy}", "unknown smdistributed strategy; use dataparallel or modelparallel")
        return
    body = smd[strategy]
    if not isinstance(body, dict):
        c.add(f"distribution.smdistributed.{strategy}", "must be a mapping such as {enabled: true}")
        return
    c.unknown_keys(f"distribution.smdistributed.{strategy}.", body,
                   _SMDDP_KEYS if strategy == "dataparallel" else _SMP_KEYS)
    torch_distributed = _enabled(d, "torch_distributed")
    if "p5.48xlarge" in w.instance_type and not torch_distributed:
        c.add("distribution.smdistributed",
              f"SageMaker data/model parallel does not run on {w.instance_type} without torch_distributed; "
              "add torch_distributed: {enabled: true} (SMP v2) or use ml.p4d.24xlarge")
    if strategy == "dataparallel" and body.get("enabled", False) is True:
        options = body.get("custom_mpi_options", "")
        if not isinstance(options, str):
            c.add("distribution.smdistributed.dataparallel.custom_mpi_options", "must be a string of mpirun options")
        supported = sdk_rules.constant("SM_DATAPARALLEL_SUPPORTED_INSTANCE_TYPES")
        if w.instance_type not in supported:
            c.add("distribution.smdistributed.dataparallel",
                  f"SMDDP runs on {', '.join(t for t in supported if t.startswith('ml.'))}, not {w.instance_type}; "
                  "for other types use torch_distributed")
        if not uses_image and w.framework in ("pytorch", "tensorflow"):
            versions = sdk_rules.constant("SM_DATAPARALLEL_SUPPORTED_FRAMEWORK_VERSIONS")[w.framework]
            if w.framework_version not in versions:
                c.add("framework_version", f"SMDDP supports {w.framework} {', '.join(versions[-4:])} (and older), "
                      f"not {w.framework_version}")
    if strategy == "modelparallel" and body.get("enabled", False) is True:
        if not (_enabled(d, "mpi") or torch_distributed):
            c.add("distribution.smdistributed.modelparallel",
                  "needs a launcher: mpi: {enabled: true, processes_per_host: N} (SMP v1) "
                  "or torch_distributed: {enabled: true} (SMP v2)")
        params = body.get("parameters", {})
        if not isinstance(params, dict):
            c.add("distribution.smdistributed.modelparallel.parameters", "must be a mapping of SMP parameters")
        else:
            check_mp_parameters(c, params)


def check_mp_parameters(c: _Checker, config: dict[str, Any]) -> None:
    """The SDK's `fw_utils.validate_mp_config`, rule by rule."""
    where = "distribution.smdistributed.modelparallel.parameters."
    choices = {"pipeline": ("simple", "interleaved", "_only_forward"), "placement_strategy": ("spread", "cluster"),
               "optimize": ("speed", "memory")}
    for key, values in choices.items():
        if key in config and config[key] not in values:
            c.add(where + key, f"must be one of {', '.join(v for v in values if not v.startswith('_'))}")
    for key in ("microbatches", "partitions", "active_microbatches"):
        if key in config and (not isinstance(config[key], int) or isinstance(config[key], bool) or config[key] < 1):
            c.add(where + key, "must be a positive whole number")
    for key in ("auto_partition", "contiguous", "load_partition", "horovod", "ddp", "deterministic_server"):
        if key in config and not isinstance(config[key], bool):
            c.add(where + key, "must be true or false")
    if "partition_file" in config and not isinstance(config["partition_file"], str):
        c.add(where + "partition_file", "must be a string")
    if config.get("auto_partition") is False and "default_partition" not in config:
        c.add(where + "default_partition", "is required when auto_partition is false")
    if "default_partition" in config:
        default, partitions = config["default_partition"], config.get("partitions")
        if not isinstance(default, int) or not isinstance(partitions, int) or default >= partitions:
            c.add(where + "default_partition", "must be a whole number below partitions")
    if "memory_weight" in config:
        weight = config["memory_weight"]
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not 0.0 <= weight <= 1.0:
            c.add(where + "memory_weight", "must be between 0.0 and 1.0")
    for key in ("ddp_port", "ddp_dist_backend"):
        if key in config and "ddp" not in config:
            c.add(where + key, "needs ddp to be set as well")
    if "ddp_port" in config and (not isinstance(config["ddp_port"], int) or config["ddp_port"] < 0):
        c.add(where + "ddp_port", f"{config['ddp_port']!r} is not a port number")
    if config.get("horovod", False) and config.get("ddp", False):
        c.add(where + "ddp", "ddp and horovod cannot both be enabled")


def _check_torch_distributed(c: _Checker, w: Workload, uses_image: bool) -> None:
    if not _enabled(w.distribution, "torch_distributed"):
        return
    if not w.entry_point.endswith(".py"):
        c.add("entry_point", "torch_distributed runs Python programs only: the entry point must be a .py file")
    gpu, trainium = _sdk_gpu(w.instance_type), _sdk_trainium(w.instance_type)
    if not (gpu or trainium):
        c.add("distribution.torch_distributed",
              f"runs on GPU or Trainium instances only, not {w.instance_type}")
        return
    if uses_image or w.framework != "pytorch":
        return
    table = "TORCH_DISTRIBUTED_GPU_SUPPORTED_FRAMEWORK_VERSIONS" if gpu else \
        "TRAINIUM_SUPPORTED_TORCH_DISTRIBUTED_FRAMEWORK_VERSIONS"
    versions = sdk_rules.constant(table)
    if w.framework_version not in versions:
        c.add("framework_version", f"torch_distributed on {w.instance_type} supports PyTorch "
              f"{', '.join(versions[-5:])} (and older; full versions such as 2.3.0), not {w.framework_version}")


def distribution_hyperparameters(w: Workload, job_name: str, output_path: str = "") -> dict[str, Any]:
    """The SDK's distribution hyperparameters for this workload, before JSON encoding."""
    d = w.distribution
    if w.framework == "pytorch":
        return _pytorch(w, d)
    if w.framework == "huggingface":
        return _huggingface(w, d)
    config = _generic(w, d)
    # TensorFlow's estimator adds model_dir: the job's S3 model prefix, or /opt/ml/model under MPI.
    if config.get("sagemaker_mpi_enabled", False):
        config["model_dir"] = "/opt/ml/model"
    else:
        config["model_dir"] = s3_join(output_path, job_name, "model")
    return config


def s3_join(*parts: str) -> str:
    """`sagemaker.s3.s3_path_join`: join with single slashes, keeping the s3:// scheme."""
    head = ""
    items = list(parts)
    if items and items[0].startswith("s3://"):
        head, items[0] = "s3://", items[0][5:]
    return head + "/".join(p.strip("/") for p in items if p.strip("/"))


def _generic(w: Workload, d: dict[str, Any]) -> dict[str, Any]:
    """`Framework._distribution_configuration`."""
    config: dict[str, Any] = {}
    if "parameter_server" in d:
        config["sagemaker_parameter_server_enabled"] = d["parameter_server"].get("enabled", False)
    mpi_enabled = False
    if "mpi" in d:
        mpi = d["mpi"]
        mpi_enabled = mpi.get("enabled", False)
        config["sagemaker_mpi_enabled"] = mpi_enabled
        if mpi.get("processes_per_host"):
            config["sagemaker_mpi_num_of_processes_per_host"] = mpi["processes_per_host"]
        config["sagemaker_mpi_custom_mpi_options"] = mpi.get("custom_mpi_options", "")
    if "smdistributed" in d:
        smd = d["smdistributed"]
        mp = smd.get("modelparallel", {})
        if mp.get("enabled", False) is True:
            config["mp_parameters"] = mp.get("parameters", {})
        ddp = smd.get("dataparallel", {})
        ddp_enabled = ddp.get("enabled", False)
        config["sagemaker_distributed_dataparallel_enabled"] = ddp_enabled
        config["sagemaker_instance_type"] = w.instance_type
        if ddp_enabled:
            config["sagemaker_distributed_dataparallel_custom_mpi_options"] = ddp.get("custom_mpi_options", "")
    if "multi_worker_mirrored_strategy" in d:
        config["sagemaker_multi_worker_mirrored_strategy_enabled"] = d["multi_worker_mirrored_strategy"].get(
            "enabled", False
        )
    return config


def _pytorch(w: Workload, d: dict[str, Any]) -> dict[str, Any]:
    """`PyTorch._pytorch_distribution_configuration`, after its rewrite of pytorchddp to smdistributed."""
    if "pytorchddp" in d:
        d = {k: v for k, v in d.items() if k != "pytorchddp"} | {"smdistributed": {"dataparallel": d["pytorchddp"]}}
    if _enabled(d, "torch_distributed"):
        config = _generic(w, d) if "smdistributed" in d else {}
        config["sagemaker_torch_distributed_enabled"] = True
        config["sagemaker_instance_type"] = w.instance_type
        return config
    return _generic(w, d)


def _huggingface(w: Workload, d: dict[str, Any]) -> dict[str, Any]:
    """`HuggingFace._huggingface_distribution_configuration`."""
    if "pytorchddp" in d:
        if d["pytorchddp"].get("enabled", False):
            return {"sagemaker_pytorch_ddp_enabled": True, "sagemaker_instance_type": w.instance_type}
    elif "torch_distributed" in d and d["torch_distributed"].get("enabled", False):
        return {"sagemaker_torch_distributed_enabled": True, "sagemaker_instance_type": w.instance_type}
    return _generic(w, d)
