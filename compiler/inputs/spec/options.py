"""How a job runs: limits, spot, checkpoints, retries and relaunches, switches, Debugger/Profiler/TensorBoard.

Every S3 location here is the platform's (under the workload's own output prefix), so the SDK's `s3_output_path`
arguments are refused where they appear; the rest keeps the SDK's meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.inputs.model import MAX_INSTANCE_COUNT, CapacityRetry, Debugging, RunOptions
from compiler.inputs.reader import Reader
from compiler.inputs.spec.compute import check_instance_type
from compiler.sdk.limits import MAX_RUNTIME_SECONDS, allowed, limits

MAX_CAPACITY_RELAUNCHES = 10
MAX_RUN_COST_USD = 10_000_000.0  # a per-run ceiling beyond is a typo, not a budget
# ProfilerConfig.ProfilingIntervalInMilliseconds: the values SageMaker documents (the model states only a long).
PROFILING_INTERVALS = (100, 200, 500, 1000, 5000, 60000)
_CAPACITY_KEYS = {"max_attempts", "wait_seconds", "backoff_rate", "fallback_instance_types", "capacity_window_minutes",
                  "instance_preferences"}
CAPACITY_WINDOW_MINUTES = (1, 1440)  # a day at most: past that the window would not bound the wait for capacity
_OWNED_PATH = ("s3_output_path", "is the platform's: outputs go under s3://<environment output bucket>/<workload>/, "
               "the only place the job's role may write; remove it")


def read_capacity(r: Reader) -> CapacityRetry:
    c = r.child("capacity_retry")
    if c is None:
        return CapacityRetry()
    c.unknown_keys(_CAPACITY_KEYS)
    defaults = CapacityRetry()
    fallbacks = []
    raw = c.raw.get("fallback_instance_types")
    if raw is not None:
        if not isinstance(raw, list) or not raw:
            c.problem("fallback_instance_types", "must be a list of instance types to try in turn on capacity failures")
        else:
            for index, value in enumerate(raw):
                kind = check_instance_type(c, f"fallback_instance_types[{index}]", value)
                if kind is not None:
                    fallbacks.append(kind)
    # A refused value is a problem already recorded; the default stands in so the rest can still be checked.
    low, high = CAPACITY_WINDOW_MINUTES
    return CapacityRetry(
        max_attempts=c.integer("max_attempts", low=0, high=MAX_CAPACITY_RELAUNCHES, default=defaults.max_attempts,
                               unit="relaunches"),
        wait_seconds=c.integer("wait_seconds", low=1, high=86400, default=defaults.wait_seconds, unit="seconds"),
        backoff_rate=c.number("backoff_rate", low=1.0, high=10.0, default=defaults.backoff_rate),
        fallback_instance_types=tuple(fallbacks),
        capacity_window_minutes=c.integer("capacity_window_minutes", low=low, high=high,
                                          default=defaults.capacity_window_minutes, unit="minutes"),
        instance_preferences=c.boolean("instance_preferences", default=False),
    )


def _debugger_hook(r: Reader) -> tuple[Mapping[str, Any] | None, bool]:
    value = r.raw.get("debugger_hook_config")
    if value is None:
        return None, False
    if value is False:
        return None, True
    if value is True:
        return {}, False
    h = r.child("debugger_hook_config")
    if h is None:
        return None, False
    h.unknown_keys({"s3_output_path", "container_local_output_path", "hook_parameters", "collection_configs"})
    if h.has("s3_output_path"):
        h.problem(*_OWNED_PATH)
    config: dict[str, Any] = {}
    local = h.string("container_local_output_path", max_length=4096)
    if local is not None and h.shaped("container_local_output_path", local, "DirectoryPath"):
        config["LocalPath"] = local
    params = h.raw.get("hook_parameters")
    if params is not None:
        if not isinstance(params, Mapping):
            h.problem("hook_parameters", "must be a mapping of names to text values")
        elif h.shaped("hook_parameters", dict(params), "HookParameters"):
            config["HookParameters"] = dict(params)
    collections = _collections(h)
    if collections is not None:
        config["CollectionConfigurations"] = collections
    return config, False


def _collections(h: Reader) -> list[dict[str, Any]] | None:
    """`collection_configs` as the SDK's CollectionConfig dicts; each name once (the SDK keeps them in a set)."""
    collections = h.raw.get("collection_configs")
    if collections is None:
        return None
    items: list[dict[str, Any]] = []
    for index, item in enumerate(collections if isinstance(collections, list) else [None]):
        if not isinstance(item, Mapping) or "name" not in item or set(item) - {"name", "parameters"}:
            h.problem(f"collection_configs[{index}]", "each collection is {name: ..., parameters: {...}}")
            continue
        entry: dict[str, Any] = {"CollectionName": item["name"]}
        if item.get("parameters") is not None:
            entry["CollectionParameters"] = item["parameters"]
        if any(e["CollectionName"] == entry["CollectionName"] for e in items):
            h.problem(f"collection_configs[{index}]", f"collection {item['name']!r} is configured twice; give each "
                      "collection once")
            continue
        items.append(entry)
    return items if h.shaped("collection_configs", items, "CollectionConfigurations") else []


def _profiler(r: Reader) -> Mapping[str, Any] | None:
    disabled = r.boolean("disable_profiler")
    p = r.child("profiler_config")
    if p is None:
        return {"DisableProfiler": True} if disabled else None
    p.unknown_keys({"s3_output_path", "system_monitor_interval_millis", "disable_profiler", "framework_profile_params",
                    "profile_params"})
    if p.has("s3_output_path"):
        p.problem(*_OWNED_PATH)
    if p.has("framework_profile_params"):
        p.problem("framework_profile_params", "framework profiling (SMDebug) is deprecated by the SDK and gone from "
                  "the images from TensorFlow 2.12 and PyTorch 2.0, and the platform does not take it; keep system "
                  "monitoring (system_monitor_interval_millis)")
    if p.has("profile_params"):
        p.problem("profile_params", "the SageMaker Profiler adds a processing job (a profiler rule) that the platform "
                  "does not run, as with rules; keep system monitoring (system_monitor_interval_millis)")
    config: dict[str, Any] = {"DisableProfiler": bool(p.boolean("disable_profiler", default=False))}
    interval = p.integer("system_monitor_interval_millis", low=1)
    if interval is not None and interval not in PROFILING_INTERVALS:
        p.problem("system_monitor_interval_millis", f"SageMaker samples system metrics every "
                  f"{', '.join(map(str, PROFILING_INTERVALS))} milliseconds, not {interval}")
    elif interval is not None:
        config["ProfilingIntervalInMilliseconds"] = interval
    if disabled and not config["DisableProfiler"]:
        r.problem("profiler_config", "disable_profiler is true, so profiler_config.disable_profiler cannot be false "
                  "(the SDK refuses it)")
    return config


def _tensorboard(r: Reader) -> tuple[bool, str | None]:
    value = r.raw.get("tensorboard_output_config")
    if value is None or value is False:
        return False, None
    if value is True:
        return True, None
    t = r.child("tensorboard_output_config")
    if t is None:
        return False, None
    t.unknown_keys({"s3_output_path", "container_local_output_path"})
    if t.has("s3_output_path"):
        t.problem(*_OWNED_PATH)
    local = t.string("container_local_output_path", max_length=4096)
    return True, local if local is None or t.shaped("container_local_output_path", local, "DirectoryPath") else None


def read_debugging(r: Reader) -> Debugging:
    hook, hook_off = _debugger_hook(r)
    tensorboard, tensorboard_path = _tensorboard(r)
    return Debugging(debugger_hook=hook, debugger_hook_disabled=hook_off, profiler=_profiler(r),
                     tensorboard=tensorboard, tensorboard_local_path=tensorboard_path)


def _local_path(r: Reader, key: str) -> str | None:
    if r.get(key) == "":  # as an AWS workshop writes it: the SDK sends no LocalPath for empty text
        r.warn(key, "is empty, which the SDK sends as no path (SageMaker's default, /opt/ml/checkpoints); remove it")
        return None
    path = r.string(key, pattern=r"/[^\x00]*", max_length=4096,
                    explain="must be an absolute path in the container, e.g. /opt/ml/checkpoints")
    return path if path is None or r.shaped(key, path, "DirectoryPath") else None


def _command(r: Reader, key: str, shape: str, low: int, high: int) -> tuple[str, ...] | None:
    """`container_entry_point` / `container_arguments`: sent as written, so checked against SageMaker's shape."""
    value = r.strings(key, min_items=low, max_items=high, item_max_length=256)
    return value if value is None or r.shaped(key, list(value), shape) else None


def read_run(r: Reader) -> RunOptions:
    """The run's limits and switches; a key left out (or refused, a problem already recorded) gets RunOptions' default."""
    lim = limits()
    d = RunOptions()
    access = r.string("training_repository_access_mode", choices=allowed("TrainingRepositoryAccessMode"))
    if access == "Vpc":
        r.problem("training_repository_access_mode", "images come from ECR through the environment's VPC endpoints; a "
                  "private Docker registry in the VPC is not part of the platform (use Platform, or leave it out)")
    return RunOptions(
        max_run=r.integer("max_run", low=1, high=MAX_RUNTIME_SECONDS, default=d.max_run, unit="seconds"),
        max_wait=r.integer("max_wait", low=1, high=MAX_RUNTIME_SECONDS, unit="seconds"),
        use_spot_instances=r.boolean("use_spot_instances", default=d.use_spot_instances),
        checkpoints=r.boolean("checkpoints", default=d.checkpoints),
        checkpoint_local_path=_local_path(r, "checkpoint_local_path"),
        max_retry_attempts=r.integer("max_retry_attempts", low=lim.retry_attempts_min, high=lim.retry_attempts_max),
        encrypt_inter_container_traffic=r.boolean("encrypt_inter_container_traffic"),
        unencrypted_traffic_reason=r.string("unencrypted_traffic_reason", max_length=500),
        enable_network_isolation=r.boolean("enable_network_isolation", default=d.enable_network_isolation),
        network_isolation_off_reason=r.string("network_isolation_off_reason", max_length=500),
        enable_sagemaker_metrics=r.boolean("enable_sagemaker_metrics"),
        enable_infra_check=r.boolean("enable_infra_check"),
        enable_remote_debug=r.boolean("enable_remote_debug"),
        remote_debug_reason=r.string("remote_debug_reason", max_length=500),
        enable_session_tag_chaining=r.boolean("enable_session_tag_chaining"),
        training_repository_access_mode=access,
        container_entry_point=_command(r, "container_entry_point", "ContainerEntrypoint", lim.entrypoint_min,
                                       lim.entrypoint_max),
        container_arguments=_command(r, "container_arguments", "ContainerArguments", lim.arguments_min,
                                     lim.arguments_max),
        disable_output_compression=r.boolean("disable_output_compression", default=d.disable_output_compression),
        output_kms_key=r.string("output_kms_key", max_length=2048),
        input_mode=r.string("input_mode", choices=allowed("TrainingInputMode"), default=d.input_mode),
        max_instance_count=r.integer("max_instance_count", low=1, high=MAX_INSTANCE_COUNT, unit="instances"),
        concurrent_runs=r.boolean("concurrent_runs", default=d.concurrent_runs),
        max_run_cost_usd=r.number("max_run_cost_usd", low=0.01, high=MAX_RUN_COST_USD),
    )
