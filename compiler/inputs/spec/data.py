"""The channels a job reads: what fit(inputs) and `model_uri` would give the SDK, in the platform's places.

A channel is written as the SDK's `TrainingInput` (key `s3_data` and its arguments) or `FileSystemInput` (key
`directory_path`), or as a plain string. `inputs` itself written as one TrainingInput or FileSystemInput (what
`fit(TrainingInput(...))` takes) is the one channel `training`, as fit() names it. An S3 location is either a key
prefix in the environment's data bucket (no scheme) or an `s3://` URI in a bucket the environment allows
(`external_data_buckets`); FSx paths are inside the environment's file system, whose mount name the compiler adds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from compiler.inputs.model import Channel, FsxChannel, S3Channel
from compiler.inputs.reader import Reader, describe
from compiler.sdk.limits import allowed, limits

S3_URI = re.compile(r"s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[^\r\n]*)?")
_KEY_PREFIX = re.compile(r"[^/\s][^\r\n]*")
_S3_KEYS = {"s3_data", "distribution", "compression", "content_type", "record_wrapping", "s3_data_type",
            "instance_groups", "input_mode", "attribute_names", "target_attribute_name", "shuffle_config",
            "model_access_config", "hub_access_config"}
_FS_KEYS = {"directory_path", "file_system_type", "file_system_access_mode", "content_type", "file_system_id"}
MODEL_CONTENT_TYPE = "application/x-sagemaker-model"


def s3_location(r: Reader, key: str, value: Any) -> str | None:
    """An `s3://bucket/key` URI or a key prefix in the environment's data bucket."""
    if not isinstance(value, str) or not value.strip():
        r.problem(key, f"must be an s3:// URI or a key prefix in the environment's data bucket, not {describe(value)}")
        return None
    if value.startswith("file://"):
        r.problem(key, "file:// inputs work in the SDK's local mode only; upload the data to the environment's data "
                  "bucket and give its key prefix (or use `trainctl run-local --channel`)")
        return None
    if value.startswith("s3://"):
        if not S3_URI.fullmatch(value) or len(value) > 1024:
            r.problem(key, f"{value!r} is not an s3://bucket/prefix URI")
            return None
        return value
    if "://" in value or not _KEY_PREFIX.fullmatch(value) or ".." in value.split("/") or len(value) > 900:
        r.problem(key, f"{value!r} is not a key prefix: write it without a leading '/', without '..' (e.g. "
                  "datasets/tokens/), or give an s3:// URI")
        return None
    return value


def _s3_channel(c: Reader, name: str, raw: Mapping[str, Any]) -> S3Channel | None:
    c.unknown_keys(_S3_KEYS)
    s3_data = s3_location(c, "s3_data", raw.get("s3_data"))
    if c.has("target_attribute_name"):
        c.problem("target_attribute_name", "CreateTrainingJob channels have no TargetAttributeName (it belongs to "
                  "AutoML jobs): the SDK's TrainingInput would send it and SageMaker would refuse the request; "
                  "remove it")
    shuffle = None
    if c.has("shuffle_config"):
        shuffle_reader = c.child("shuffle_config")
        if shuffle_reader is not None:
            shuffle_reader.unknown_keys({"seed"})
            shuffle = shuffle_reader.integer("seed", low=0, required=True)
    groups = c.strings("instance_groups")
    if groups is not None and not c.shaped("instance_groups", list(groups), "InstanceGroupNames"):
        groups = None
    attributes = c.strings("attribute_names", max_items=16)
    if attributes is not None and not c.shaped("attribute_names", list(attributes), "AttributeNames"):
        attributes = None
    # JumpStart's gated models: TrainingInput puts these mappings into the S3 source as written (the API's names).
    access = {key: _access_config(c, key, shape) for key, shape in _ACCESS_CONFIGS.items()}
    distribution = c.string("distribution", choices=allowed("S3DataDistribution"))
    if distribution is None and not c.has("distribution"):
        distribution = "FullyReplicated"  # as TrainingInput does without a distribution (or a target attribute)
    if s3_data is None:
        return None
    return S3Channel(
        name=name, s3_data=s3_data, distribution=distribution,
        compression=c.string("compression", choices=allowed("CompressionType")),
        content_type=_content_type(c),
        record_wrapping=c.string("record_wrapping", choices=allowed("RecordWrapper")),
        s3_data_type=c.string("s3_data_type", choices=allowed("S3DataType"), default="S3Prefix") or "S3Prefix",
        instance_groups=groups, input_mode=c.string("input_mode", choices=allowed("TrainingInputMode")),
        attribute_names=attributes, shuffle_seed=shuffle, model_access_config=access["model_access_config"],
        hub_access_config=access["hub_access_config"],
    )


_ACCESS_CONFIGS = {"model_access_config": "ModelAccessConfig", "hub_access_config": "HubAccessConfig"}


def _access_config(c: Reader, key: str, shape: str) -> Mapping[str, Any] | None:
    value = c.raw.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        c.problem(key, f"must be a mapping in the API's names, e.g. {{AcceptEula: true}} or {{HubContentArn: ...}}, "
                  f"not {describe(value)}")
        return None
    return dict(value) if c.shaped(key, dict(value), shape) else None


def _fsx_channel(c: Reader, name: str, raw: Mapping[str, Any]) -> FsxChannel | None:
    c.unknown_keys(_FS_KEYS, hint="; an FSx channel takes FileSystemInput's arguments (directory_path, "
                   "file_system_access_mode, content_type) and is read in File mode; input_mode and the other "
                   "TrainingInput arguments are for S3 channels")
    if c.has("file_system_id"):
        c.problem("file_system_id", "the platform fills in the environment's file system; remove file_system_id")
    kind = c.string("file_system_type", default="FSxLustre")
    if kind == "EFS":
        c.problem("file_system_type", "the environments have FSx for Lustre, not EFS; read the data from FSx "
                  "(file_system_type: FSxLustre) or S3")
        return None
    if kind != "FSxLustre":
        c.problem("file_system_type", f"must be FSxLustre, not {kind!r}")
        return None
    path = c.string("directory_path", required=True, max_length=4000)
    if path is not None and (not path.startswith("/") or ".." in path.split("/")):
        c.problem("directory_path", "must be an absolute path inside the file system, e.g. /datasets/tokens (the "
                  "mount name is added for you)")
        return None
    mode = c.string("file_system_access_mode", choices=allowed("FileSystemAccessMode"), default="ro") or "ro"
    if path is None:
        return None
    if not c.shaped("directory_path", path, "DirectoryPath"):
        return None
    return FsxChannel(name=name, directory_path=path, file_system_access_mode=mode, content_type=_content_type(c))


def _content_type(c: Reader) -> str | None:
    value = c.string("content_type", max_length=256)
    return value if value is None or c.shaped("content_type", value, "ContentType") else None


# fit(TrainingInput(...)) and fit(FileSystemInput(...)) name their one channel "training" (sagemaker/job.py,
# _Job._format_inputs_to_input_config); `inputs:` written as one of them, key by key, means the same.
SINGLE_INPUT_CHANNEL = "training"
_ARGUMENTS = (_S3_KEYS | _FS_KEYS) - {"s3_data", "directory_path"}


def _single_input(inputs: Reader) -> tuple[Channel, ...] | None:
    """`inputs` written as one TrainingInput / FileSystemInput (its `s3_data` or `directory_path` is not a mapping):
    the one channel `training`, as fit() makes it; None when `inputs` maps channel names."""
    raw = inputs.raw
    kind = next((k for k in ("s3_data", "directory_path") if k in raw and not isinstance(raw[k], Mapping)), None)
    if kind is None:
        return None
    known, reader = (_S3_KEYS, _s3_channel) if kind == "s3_data" else (_FS_KEYS, _fsx_channel)
    others = sorted(str(k) for k in raw if k not in known)
    if others:
        owner = "TrainingInput" if kind == "s3_data" else "FileSystemInput"
        inputs.problem(kind, f"is an argument of {owner}, which fit() makes one channel named "
                       f"'{SINGLE_INPUT_CHANNEL}', but {', '.join(others)} are not: write each channel under its "
                       f"name, e.g. {{{SINGLE_INPUT_CHANNEL}: {{{kind}: ...}}, {others[0]}: ...}}")
        return ()
    channel = reader(inputs, SINGLE_INPUT_CHANNEL, raw)
    return (channel,) if channel is not None else ()


def read_inputs(r: Reader) -> tuple[Channel, ...]:
    if isinstance(r.raw.get("inputs"), str):  # fit("s3://...") makes it the one channel "training", as TrainingInput
        location = s3_location(r, "inputs", r.raw["inputs"])
        return (S3Channel(name=SINGLE_INPUT_CHANNEL, s3_data=location),) if location is not None else ()
    inputs = r.child("inputs")
    if inputs is None:
        return ()
    single = _single_input(inputs)
    if single is not None:
        return single
    channels: list[Channel] = []
    pattern, longest = limits().channel_name_pattern, limits().channel_name_max
    for name, raw in inputs.raw.items():
        where = str(name)
        if not re.fullmatch(pattern, str(name)) or len(str(name)) > longest:
            inputs.problem(where, f"channel names are 1-{longest} letters, digits, '.', '-' or '_'")
            continue
        if isinstance(raw, str) and where in _ARGUMENTS:
            inputs.problem(where, f"is an argument of TrainingInput or FileSystemInput, not a channel: put it in the "
                           f"channel it belongs to, e.g. {{train: {{s3_data: ..., {where}: {raw}}}}}")
            continue
        if isinstance(raw, str):
            location = s3_location(inputs, where, raw)
            if location is not None:
                channels.append(S3Channel(name=str(name), s3_data=location))
            continue
        if raw is None:  # fit() refuses a channel of None ("Cannot format input None"): never drop it silently
            inputs.problem(where, "is empty: give the channel's S3 location (a key prefix or s3:// URI), "
                           "{s3_data: ...} or {directory_path: ...}, or remove the channel")
            continue
        c = inputs.child(where)
        if c is None:
            continue
        channel: Channel | None
        if "s3_data" in raw:
            channel = _s3_channel(c, str(name), raw)
        elif "directory_path" in raw or "file_system_type" in raw or "file_system_id" in raw:
            channel = _fsx_channel(c, str(name), raw)
        else:
            c.problem("", "give s3_data (S3) or directory_path (the environment's FSx for Lustre)")
            channel = None
        if channel is not None:
            channels.append(channel)
    return tuple(channels)


def read_model_uri(r: Reader) -> tuple[str | None, str]:
    uri = s3_location(r, "model_uri", r.raw["model_uri"]) if r.has("model_uri") else None
    name = r.string("model_channel_name", max_length=limits().channel_name_max, default="model",
                    pattern=limits().channel_name_pattern, explain="channel names are letters, digits, '.', '-' or '_'")
    return uri, name or "model"
