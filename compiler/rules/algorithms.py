"""A built-in algorithm (`image: {algorithm, version}`) is held to what its page in the SageMaker Developer Guide says
it takes: its channels, input modes and content types, how many instances and which processors
(`compiler/facts/algorithms.py`, each fact with its source); and its image must be published in the environment's
region (the SDK's catalog, `image_uris.retrieve`).
"""

from __future__ import annotations

from compiler.facts.algorithms import ALGORITHMS, Algorithm, MultiInstanceMode
from compiler.inputs.model import AlgorithmImage, S3Channel, Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import workload_rule


def algorithm_of(w: Workload) -> Algorithm | None:
    return ALGORITHMS.get(w.image.algorithm) if isinstance(w.image, AlgorithmImage) else None


def _compute_field(w: Workload) -> str:
    return "instance_groups" if w.compute.instance_groups else "instance_type"


@workload_rule
def algorithms_run_their_own_code(w: Workload, f: Findings) -> None:
    a = algorithm_of(w)
    if a is None or w.code is None:
        return
    f.problem("entry_point", f"the built-in algorithm {a.name} runs its own code from its image and reads only "
              "hyperparameters and channels: remove entry_point (and source_dir, dependencies); for a script of your "
              "own, name its framework (xgboost, sklearn, pytorch, ...) instead of image: {algorithm}")


def _multi_instance_allowed(w: Workload, a: Algorithm) -> bool:
    if isinstance(a.multi_instance, MultiInstanceMode):
        mode = a.multi_instance
        on_processor = all((g.instance.has_gpu and mode.processor == "gpu") or
                           (not g.instance.has_gpu and mode.processor == "cpu") for g in w.compute.groups)
        return str(w.hyperparameters.get(mode.hyperparameter)) == mode.value and on_processor
    return a.multi_instance


@workload_rule
def algorithm_instance_count(w: Workload, f: Findings) -> None:
    """Algorithms the guide marks not parallelizable train on one instance (a run may not ask for more either)."""
    a = algorithm_of(w)
    if a is None or w.instance_count_ceiling <= 1 or _multi_instance_allowed(w, a):
        return
    field = "instance_count" if w.instance_count > 1 else "max_instance_count"
    if w.compute.instance_groups:
        field = "instance_groups"
    condition = ""
    if isinstance(a.multi_instance, MultiInstanceMode):
        m = a.multi_instance
        condition = f" (several only with hyperparameters.{m.hyperparameter}: {m.value}, on {m.processor.upper()} types)"
    f.problem(field, f"{a.title} trains on a single instance{condition} ({a.source}), not "
              f"{w.instance_count_ceiling}; use one instance")


@workload_rule
def algorithm_processors(w: Workload, f: Findings) -> None:
    """GPU-only and CPU-only algorithms, and the instance types whose GPUs an algorithm leaves idle."""
    a = algorithm_of(w)
    if a is None:
        return
    for group in w.compute.groups:
        kind = group.instance_type
        if group.instance.has_gpu and "gpu" not in a.processors:
            f.problem(_compute_field(w), f"{a.title} trains on CPU instances only ({a.source}); {kind} has GPUs: pick "
                      "a CPU type such as ml.m5.xlarge")
        elif not group.instance.has_gpu and "cpu" not in a.processors:
            f.problem(_compute_field(w), f"{a.title} trains on GPU instances only ({a.source}); {kind} has none: "
                      "pick a GPU type such as ml.g5.2xlarge")
        elif group.instance.has_gpu and a.gpu_unused:
            f.warn(_compute_field(w), f"{a.title} does not use GPUs ({a.source}); {kind} costs more for nothing: "
                   "pick a CPU type")
        elif group.instance.has_gpu and a.one_gpu_per_instance and group.instance.accelerators > 1:
            f.warn(_compute_field(w), f"{a.title} uses one GPU per instance ({a.source}); {kind} has "
                   f"{group.instance.accelerators}: pick a single-GPU type")


@workload_rule
def algorithm_input_modes(w: Workload, f: Findings) -> None:
    """The guide lists File, or File and Pipe, for each algorithm; FastFile for none."""
    a = algorithm_of(w)
    if a is None:
        return
    modes = " or ".join(a.input_modes)
    if w.input_mode not in a.input_modes:
        f.problem("input_mode", f"{a.title} reads its channels in {modes} mode ({a.source}), not {w.input_mode}")
    for channel in w.inputs:
        if isinstance(channel, S3Channel) and channel.input_mode is not None and channel.input_mode not in a.input_modes:
            f.problem(f"inputs.{channel.name}.input_mode", f"{a.title} reads its channels in {modes} mode "
                      f"({a.source}), not {channel.input_mode}")


@workload_rule
def algorithm_channels(w: Workload, f: Findings) -> None:
    """Only the channels the algorithm reads, and every one it needs (the model channel of model_uri counts)."""
    a = algorithm_of(w)
    if a is None:
        return
    names = [c.name for c in w.inputs]
    for name in names:
        if name not in a.channels:
            f.problem(f"inputs.{name}", f"{a.title} reads the channels {', '.join(a.channels)} ({a.source}), not "
                      f"{name!r}: rename the channel")
    if w.model_uri is not None and w.model_channel_name not in a.channels:
        f.problem("model_uri", f"model_uri adds a channel named {w.model_channel_name!r}, which {a.title} does not read "
                  f"(its channels: {', '.join(a.channels)}; {a.source}): remove model_uri")
    missing = [c for c in a.required_channels if c not in names]
    if missing:
        f.problem("inputs", f"{a.title} needs the channel{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                  f"({a.source}); add {'them' if len(missing) > 1 else 'it'} to inputs")


@workload_rule
def algorithm_content_types(w: Workload, f: Findings) -> None:
    """A channel's content_type (its MIME type, before any `;label_size=...`) must be one the algorithm trains on."""
    a = algorithm_of(w)
    if a is None:
        return
    for channel in w.inputs:
        if channel.content_type is None:
            continue
        mime = channel.content_type.split(";", 1)[0].strip().lower()
        allowed = a.content_types_of(channel.name)
        mode = channel.input_mode if isinstance(channel, S3Channel) and channel.input_mode else w.input_mode
        where = f"inputs.{channel.name}.content_type"
        if allowed is not None and mime not in allowed:
            f.problem(where, f"{a.title} trains on {' or '.join(allowed)} in channel {channel.name} ({a.source}), not "
                      f"{channel.content_type!r}")
        elif mime in a.file_mode_only and mode != "File":
            f.problem(where, f"{a.title} reads {mime} in File mode only ({a.source}); read this channel in File mode, "
                      "or write it as application/x-recordio-protobuf for Pipe mode")


@workload_rule
def algorithm_data_distribution(w: Workload, f: Findings) -> None:
    """How each channel's S3 objects spread over the instances, where the guide names the one it takes."""
    a = algorithm_of(w)
    if a is None:
        return
    for channel in w.inputs:
        if not isinstance(channel, S3Channel):
            continue
        where = f"inputs.{channel.name}.distribution"
        only = a.only_distribution.get(channel.name)
        if only is not None and channel.distribution != only:
            f.problem(where, f"{a.title}'s {channel.name} channel takes S3DataDistributionType {only} only "
                      f"({a.source}); set distribution: {only}")
        recommended = a.recommended_distribution.get(channel.name)
        if recommended is not None and channel.distribution != recommended:
            f.warn(where, f"{a.title} asks for {recommended} in its {channel.name} channel ({a.source})")

