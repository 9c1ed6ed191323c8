"""Workload specs: one YAML file per training workload, keyed by the SageMaker Python SDK v2 estimator's names.

`parse_workload` turns a mapping into a checked, immutable `Workload` or raises `SpecError` listing every
problem with the file, the field and the fix. Rules that depend on the distribution strategy live in
`distribution.py`; those that depend on an environment (FSx present or not) are checked by the request
compiler. Nothing here imports the SageMaker SDK or the CDK.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compiler import catalog, sdk_rules
from compiler.errors import Problem, SpecError

WORKLOADS_DIR = Path(__file__).resolve().parents[1] / "workloads"

FRAMEWORKS = ("pytorch", "tensorflow", "huggingface")
INPUT_MODES = ("File", "Pipe", "FastFile")
S3_DISTRIBUTIONS = ("FullyReplicated", "ShardedByS3Key")
S3_DATA_TYPES = ("S3Prefix", "ManifestFile", "AugmentedManifestFile")
COMPRESSION_TYPES = ("None", "Gzip")
FSX_ACCESS_MODES = ("ro", "rw")

# SageMaker limits (botocore's CreateTrainingJob model and the service quotas, ../shared/FACTS.md section 4).
MAX_JOB_NAME = 63
JOB_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
WORKLOAD_NAME = re.compile(r"^[a-z0-9](-?[a-z0-9])*$")
MAX_WORKLOAD_NAME = 40
MAX_RUNTIME_SECONDS = 28 * 24 * 3600
MAX_KEEP_ALIVE_SECONDS = 21600
MAX_RETRY_ATTEMPTS = 30
MAX_VOLUME_GB = 16384
MAX_INSTANCE_COUNT = 1000  # a guard against typos; SageMaker's own quota is per account
CHANNEL_NAME = re.compile(r"^[A-Za-z0-9.\-_]{1,64}$")
MAX_CHANNELS = 20
MAX_METRICS = 40
MAX_TAGS = 50
RESERVED_TAGS = 3  # workload, environment and execution ARN tags added by the platform
S3_URI = re.compile(r"^s3://[^/\s]+(/[^\r\n]*)?$")  # a bucket, then any key (SageMaker's S3Uri pattern)
TAG_KEY = re.compile(r"^([\w\s.:/=+\-@]*)$")
RUN_ID_LENGTH = 12  # hex characters the state machine puts in every job name

# The keys a spec may use. Most are the SDK estimator's own argument names; the rest say so.
SDK_KEYS = {
    "entry_point", "source_dir", "framework_version", "py_version", "image_uri", "instance_type",
    "instance_count", "volume_size", "max_run", "distribution", "hyperparameters", "environment",
    "use_spot_instances", "max_wait", "checkpoint_s3_uri", "checkpoint_local_path",
    "keep_alive_period_in_seconds", "max_retry_attempts", "encrypt_inter_container_traffic",
    "enable_network_isolation", "metric_definitions", "tags", "base_job_name", "output_path",
    "output_kms_key", "input_mode", "container_log_level", "pytorch_version", "tensorflow_version",
    "transformers_version",
}
PLATFORM_KEYS = {
    "name",  # the workload's name: state machine, job-name prefix, S3 prefixes
    "description",
    "framework",  # which SDK estimator class: PyTorch, TensorFlow or HuggingFace
    "image",  # {repository, tag}: an image this project builds into its own ECR repository
    "inputs",  # the channels passed to fit(): S3 or the environment's FSx for Lustre file system
    "checkpoints",  # true: checkpoints under the environment's checkpoint bucket
    "capacity_retry",  # relaunches after EC2 capacity failures (the state machine does them)
}
KNOWN_KEYS = SDK_KEYS | PLATFORM_KEYS
S3_INPUT_KEYS = {"s3_data", "input_mode", "distribution", "s3_data_type", "content_type", "compression"}
FSX_INPUT_KEYS = {"file_system_type", "directory_path", "file_system_access_mode", "content_type", "input_mode"}
CAPACITY_KEYS = {"max_attempts", "wait_seconds", "backoff_rate"}
IMAGE_KEYS = {"repository", "tag"}


@dataclass(frozen=True)
class S3Input:
    """A channel read from S3: a full s3:// URI, or a key prefix in the environment's data bucket."""

    channel: str
    s3_data: str
    input_mode: str | None = None
    distribution: str = "FullyReplicated"
    s3_data_type: str = "S3Prefix"
    content_type: str | None = None
    compression: str | None = None
    kind: str = "s3"

    @property
    def in_data_bucket(self) -> bool:
        return not self.s3_data.startswith("s3://")


@dataclass(frozen=True)
class FsxInput:
    """A channel read from the environment's FSx for Lustre file system (path inside it)."""

    channel: str
    directory_path: str  # starts with '/', relative to the file system root (the mount name is added)
    file_system_access_mode: str = "ro"
    content_type: str | None = None
    kind: str = "fsx"


@dataclass(frozen=True)
class Image:
    """Where the training image comes from: an SDK framework image, a URI, or a project repository."""

    kind: str  # "framework" | "uri" | "repository"
    uri: str | None = None
    repository: str | None = None
    tag: str | None = None


@dataclass(frozen=True)
class CapacityRetry:
    """How the state machine relaunches a job that failed for lack of EC2 capacity."""

    max_attempts: int = 3
    wait_seconds: int = 600
    backoff_rate: float = 2.0


@dataclass(frozen=True)
class Workload:
    """A checked workload spec. Raw values are kept as written; the compiler encodes them."""

    name: str
    path: Path
    framework: str
    entry_point: str
    source_dir: Path
    instance_type: str
    image: Image
    framework_version: str | None = None
    py_version: str | None = None
    pytorch_version: str | None = None
    tensorflow_version: str | None = None
    transformers_version: str | None = None
    description: str = ""
    base_job_name: str = ""
    instance_count: int = 1
    volume_size: int = 30
    max_run: int = 24 * 3600
    distribution: dict[str, Any] = field(default_factory=dict)
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    use_spot_instances: bool = False
    max_wait: int | None = None
    checkpoints: bool = False
    checkpoint_s3_uri: str | None = None
    checkpoint_local_path: str | None = None
    keep_alive_period_in_seconds: int | None = None
    max_retry_attempts: int | None = None
    encrypt_inter_container_traffic: bool = False
    enable_network_isolation: bool = False
    metric_definitions: tuple[dict[str, str], ...] = ()
    tags: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, S3Input | FsxInput] = field(default_factory=dict)
    input_mode: str = "File"
    output_path: str | None = None
    output_kms_key: str | None = None
    container_log_level: int = 20
    capacity_retry: CapacityRetry = field(default_factory=CapacityRetry)
    warnings: tuple[str, ...] = ()

    @property
    def instance(self) -> catalog.InstanceType:
        entry = catalog.lookup(self.instance_type)
        assert entry is not None, "parse_workload only accepts catalogued instance types"
        return entry

    @property
    def strategy(self) -> str:
        from compiler.distribution import strategy_name

        return strategy_name(self.distribution)

    @property
    def uses_fsx(self) -> bool:
        return any(i.kind == "fsx" for i in self.inputs.values())

    @property
    def checkpointing(self) -> bool:
        return self.checkpoints or self.checkpoint_s3_uri is not None

    @property
    def max_job_name_suffix(self) -> int:
        """Characters the state machine appends to base_job_name: '-<run id>-<attempt>'."""
        return 1 + RUN_ID_LENGTH + 1 + len(str(self.capacity_retry.max_attempts))


class _Checker:
    """Collects problems for one spec so a single run reports all of them."""

    def __init__(self, source: str):
        self.source = source
        self.problems: list[Problem] = []
        self.warnings: list[str] = []

    def add(self, field_name: str, message: str) -> None:
        self.problems.append(Problem(self.source, field_name, message))

    def warn(self, field_name: str, message: str) -> None:
        self.warnings.append(str(Problem(self.source, field_name, message)))

    def unknown_keys(self, where: str, raw: dict[str, Any], known: set[str]) -> None:
        for key in raw:
            if key in known:
                continue
            close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(sorted(known))}"
            self.add(f"{where}{key}", f"unknown key; {hint}")

    def integer(self, raw: dict[str, Any], key: str, default: int | None, low: int, high: int) -> int | None:
        value = raw.get(key, default)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            self.add(key, f"must be a whole number between {low} and {high}, not {value!r}")
            return default
        if not low <= value <= high:
            self.add(key, f"must be between {low} and {high}, not {value}")
            return default
        return value

    def boolean(self, raw: dict[str, Any], key: str, default: bool = False) -> bool:
        value = raw.get(key, default)
        if not isinstance(value, bool):
            self.add(key, f"must be true or false, not {value!r}")
            return default
        return value

    def string(self, raw: dict[str, Any], key: str, required: bool = False) -> str | None:
        value = raw.get(key)
        if value is None:
            if required:
                self.add(key, "is required")
            return None
        if not isinstance(value, str) or not value.strip():
            self.add(key, f"must be a non-empty string, not {value!r}")
            return None
        return value


def _job_name_room(capacity: CapacityRetry) -> int:
    return MAX_JOB_NAME - (1 + RUN_ID_LENGTH + 1 + len(str(capacity.max_attempts)))


def _check_capacity(c: _Checker, raw: Any) -> CapacityRetry:
    if raw is None:
        return CapacityRetry()
    if not isinstance(raw, dict):
        c.add("capacity_retry", "must be a mapping with max_attempts, wait_seconds and backoff_rate")
        return CapacityRetry()
    c.unknown_keys("capacity_retry.", raw, CAPACITY_KEYS)
    defaults = CapacityRetry()
    attempts = raw.get("max_attempts", defaults.max_attempts)
    wait = raw.get("wait_seconds", defaults.wait_seconds)
    rate = raw.get("backoff_rate", defaults.backoff_rate)
    if not isinstance(attempts, int) or isinstance(attempts, bool) or not 0 <= attempts <= 10:
        c.add("capacity_retry.max_attempts", "must be a whole number of relaunches from 0 to 10")
        attempts = defaults.max_attempts
    if not isinstance(wait, int) or isinstance(wait, bool) or not 1 <= wait <= 86400:
        c.add("capacity_retry.wait_seconds", "must be a whole number of seconds from 1 to 86400")
        wait = defaults.wait_seconds
    if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 1.0 <= rate <= 10.0:
        c.add("capacity_retry.backoff_rate", "must be a number from 1.0 to 10.0")
        rate = defaults.backoff_rate
    return CapacityRetry(max_attempts=attempts, wait_seconds=wait, backoff_rate=float(rate))


def _check_image(c: _Checker, raw: dict[str, Any], framework: str | None) -> Image:
    has_versions = raw.get("framework_version") is not None
    has_uri = raw.get("image_uri") is not None
    has_repo = raw.get("image") is not None
    chosen = [name for name, on in (("framework_version", has_versions), ("image_uri", has_uri),
                                    ("image", has_repo)) if on]
    if framework == "huggingface" and raw.get("transformers_version") is not None:
        chosen = [n for n in chosen if n != "framework_version"] + ["transformers_version"]
    if len(chosen) != 1:
        c.add(
            "image_uri",
            "give exactly one image source: framework_version + py_version (an AWS framework image), "
            "image_uri, or image: {repository, tag} (an image this project builds)"
            + (f"; found {', '.join(chosen)}" if chosen else ""),
        )
        return Image(kind="framework")
    if has_uri:
        uri = c.string(raw, "image_uri")
        return Image(kind="uri", uri=uri)
    if has_repo:
        image = raw["image"]
        if not isinstance(image, dict):
            c.add("image", "must be a mapping: {repository: <name>, tag: <optional tag>}")
            return Image(kind="repository")
        c.unknown_keys("image.", image, IMAGE_KEYS)
        repository = image.get("repository")
        if not isinstance(repository, str) or not re.match(r"^[a-z0-9]+([._/-][a-z0-9]+)*$", repository):
            c.add("image.repository", "must name one of this project's ECR repositories, e.g. gpt-trainer")
        tag = image.get("tag")
        if tag is not None and (not isinstance(tag, str) or not re.match(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", tag)):
            c.add("image.tag", "must be a Docker tag (letters, digits, '_', '.', '-'; at most 128)")
        return Image(kind="repository", repository=repository, tag=tag)
    return Image(kind="framework")


def _check_framework_versions(c: _Checker, raw: dict[str, Any], framework: str) -> None:
    """Framework and Python versions must exist in the pinned SDK's image catalog."""
    if framework == "huggingface":
        tv = raw.get("transformers_version")
        base_key = "pytorch_version" if raw.get("pytorch_version") is not None else "tensorflow_version"
        base = raw.get(base_key)
        if tv is None or base is None:
            c.add("transformers_version", "a HuggingFace image needs transformers_version and pytorch_version "
                  "(or tensorflow_version), as the SDK's HuggingFace estimator does")
            return
        known = sdk_rules.framework_versions("huggingface")
        if str(tv) not in known:
            c.add("transformers_version", f"'{tv}' is not a HuggingFace training image the SDK knows; "
                  f"newest known: {', '.join(known[-5:])}")
            return
        bases = sdk_rules.huggingface_base_versions(str(tv))
        wanted = f"{base_key.split('_')[0]}{base}"
        if not any(b == wanted or b.startswith(wanted + ".") for b in bases):
            c.add(base_key, f"transformers {tv} images come with {', '.join(bases)}, not {wanted}")
        py = raw.get("py_version")
        if py is None or py not in sdk_rules.py_versions("huggingface", str(tv)):
            c.add("py_version", f"transformers {tv} images support {', '.join(sdk_rules.py_versions('huggingface', str(tv)))}")
        return
    version = raw.get("framework_version")
    if version is None:
        return
    known = sdk_rules.framework_versions(framework)
    if not isinstance(version, str) or version not in known:
        c.add("framework_version", f"{version!r} is not a {framework} training image version the SDK knows "
              f"(quote versions in YAML); newest known: {', '.join(sorted(known, key=_version_key)[-5:])}")
        return
    py = raw.get("py_version")
    allowed = sdk_rules.py_versions(framework, version)
    if py is None:
        c.add("py_version", f"is required with framework_version; {framework} {version} supports {', '.join(allowed)}")
    elif py not in allowed:
        c.add("py_version", f"{framework} {version} images support {', '.join(allowed)}, not {py}")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def _check_hyperparameters(c: _Checker, raw: Any, framework: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        c.add("hyperparameters", "must be a mapping of names to values")
        return {}
    result: dict[str, Any] = {}
    for key, value in raw.items():
        where = f"hyperparameters.{key}"
        if not isinstance(key, str):
            c.add(where, "hyperparameter names must be strings")
            continue
        if key.startswith("sagemaker_") or key == "mp_parameters" or (framework == "tensorflow" and key == "model_dir"):
            c.add(where, "is set by the SDK from the spec (entry_point, distribution, ...); remove it and use those keys")
            continue
        if len(key) > 256:
            c.add(where, f"name is {len(key)} characters; SageMaker allows 256")
        try:
            encoded = json.dumps(value)
        except (TypeError, ValueError):
            c.add(where, f"value {value!r} is not a string, number, boolean, list or mapping; quote it")
            continue
        if len(encoded) > 2500:
            c.add(where, f"encoded value is {len(encoded)} characters; SageMaker allows 2500")
        result[key] = value
    return result


ENV_KEY = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def _check_environment(c: _Checker, raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        c.add("environment", "must be a mapping of variable names to string values")
        return {}
    result: dict[str, str] = {}
    for key, value in raw.items():
        where = f"environment.{key}"
        if not isinstance(key, str) or not ENV_KEY.match(key) or len(key) > 512:
            c.add(where, "variable names are letters, digits and '_', not starting with a digit, at most 512")
            continue
        if not isinstance(value, str):
            c.add(where, f"values must be strings; quote it: {key}: \"{value}\"")
            continue
        if len(value) > 512:
            c.add(where, f"value is {len(value)} characters; SageMaker allows 512")
        result[key] = value
    return result


def _check_inputs(c: _Checker, raw: Any) -> dict[str, S3Input | FsxInput]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        c.add("inputs", "must map channel names to an S3 location or an FSx path")
        return {}
    if len(raw) > MAX_CHANNELS:
        c.add("inputs", f"{len(raw)} channels; SageMaker allows {MAX_CHANNELS}")
    channels: dict[str, S3Input | FsxInput] = {}
    for name, value in raw.items():
        where = f"inputs.{name}"
        if not isinstance(name, str) or not CHANNEL_NAME.match(name):
            c.add(where, "channel names are 1-64 letters, digits, '.', '-' or '_'")
            continue
        if isinstance(value, str):
            value = {"s3_data": value}
        if not isinstance(value, dict):
            c.add(where, "must be an S3 location (string or {s3_data: ...}) or {directory_path: ...} on FSx")
            continue
        if "directory_path" in value or "file_system_type" in value:
            c.unknown_keys(where + ".", value, FSX_INPUT_KEYS)
            fs_type = value.get("file_system_type", "FSxLustre")
            if fs_type != "FSxLustre":
                c.add(where + ".file_system_type", "the platform provides FSx for Lustre: use FSxLustre")
            path = value.get("directory_path")
            if not isinstance(path, str) or not path.strip("/"):
                c.add(where + ".directory_path", "must be a path inside the environment's FSx file system, "
                      "e.g. /datasets/tokens (the mount name is added for you)")
                continue
            if ".." in path.split("/"):
                c.add(where + ".directory_path", "must not contain '..'")
                continue
            mode = value.get("file_system_access_mode", "ro")
            if mode not in FSX_ACCESS_MODES:
                c.add(where + ".file_system_access_mode", "must be ro or rw")
            if value.get("input_mode", "File") != "File":
                c.add(where + ".input_mode", "FSx for Lustre channels are mounted: use File (or leave it out)")
            channels[name] = FsxInput(
                channel=name, directory_path="/" + path.strip("/"), file_system_access_mode=mode,
                content_type=value.get("content_type"),
            )
            continue
        c.unknown_keys(where + ".", value, S3_INPUT_KEYS)
        s3_data = value.get("s3_data")
        if not isinstance(s3_data, str) or not s3_data.strip() or (s3_data.startswith("s3://") and len(s3_data) <= 5):
            c.add(where + ".s3_data", "must be an s3:// URI or a key prefix in the environment's data bucket")
            continue
        if "://" in s3_data and not S3_URI.match(s3_data):
            c.add(where + ".s3_data", f"'{s3_data}' is not an s3://bucket/prefix URI")
            continue
        if s3_data.startswith("/"):
            c.add(where + ".s3_data", "a key prefix in the data bucket must not start with '/'")
            continue
        mode = value.get("input_mode")
        if mode is not None and mode not in INPUT_MODES:
            c.add(where + ".input_mode", f"must be one of {', '.join(INPUT_MODES)}")
        dist = value.get("distribution", "FullyReplicated")
        if dist not in S3_DISTRIBUTIONS:
            c.add(where + ".distribution", f"must be one of {', '.join(S3_DISTRIBUTIONS)}")
        data_type = value.get("s3_data_type", "S3Prefix")
        if data_type not in S3_DATA_TYPES:
            c.add(where + ".s3_data_type", f"must be one of {', '.join(S3_DATA_TYPES)}")
        compression = value.get("compression")
        if compression is not None and compression not in COMPRESSION_TYPES:
            c.add(where + ".compression", f"must be one of {', '.join(COMPRESSION_TYPES)}")
        content_type = value.get("content_type")
        if content_type is not None and not isinstance(content_type, str):
            c.add(where + ".content_type", "must be a string such as application/x-recordio")
        channels[name] = S3Input(
            channel=name, s3_data=s3_data, input_mode=mode, distribution=dist, s3_data_type=data_type,
            content_type=content_type, compression=compression,
        )
    return channels


def _check_metrics(c: _Checker, raw: Any) -> tuple[dict[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        c.add("metric_definitions", "must be a list of {Name, Regex}")
        return ()
    if len(raw) > MAX_METRICS:
        c.add("metric_definitions", f"{len(raw)} metrics; SageMaker allows {MAX_METRICS}")
    result = []
    for i, item in enumerate(raw):
        where = f"metric_definitions[{i}]"
        if not isinstance(item, dict) or set(item) != {"Name", "Regex"}:
            c.add(where, "must be {Name: <metric name>, Regex: <pattern with one group>}")
            continue
        name, regex = item["Name"], item["Regex"]
        if not isinstance(name, str) or not 1 <= len(name) <= 255:
            c.add(where + ".Name", "must be 1-255 characters")
            continue
        if not isinstance(regex, str) or not 1 <= len(regex) <= 500:
            c.add(where + ".Regex", "must be 1-500 characters")
            continue
        try:
            compiled = re.compile(regex)
        except re.error as exc:
            c.add(where + ".Regex", f"is not a valid regular expression: {exc}")
            continue
        if compiled.groups < 1:
            c.add(where + ".Regex", "needs a capture group around the number, e.g. 'loss=([0-9.]+)'")
        result.append({"Name": name, "Regex": regex})
    return tuple(result)


def _check_tags(c: _Checker, raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if isinstance(raw, list):  # the SDK's own shape: [{Key, Value}]
        if not all(isinstance(t, dict) and set(t) == {"Key", "Value"} for t in raw):
            c.add("tags", "as a list, each tag is {Key: ..., Value: ...}")
            return {}
        raw = {t["Key"]: t["Value"] for t in raw}
    if not isinstance(raw, dict):
        c.add("tags", "must be a mapping of tag keys to values (or the SDK's [{Key, Value}] list)")
        return {}
    if len(raw) > MAX_TAGS - RESERVED_TAGS:
        c.add("tags", f"{len(raw)} tags; SageMaker allows {MAX_TAGS} and the platform adds {RESERVED_TAGS}")
    result = {}
    for key, value in raw.items():
        where = f"tags.{key}"
        if not isinstance(key, str) or not 1 <= len(key) <= 128 or not TAG_KEY.match(key) or key.startswith("aws:"):
            c.add(where, "tag keys are 1-128 letters, digits, spaces or _.:/=+-@ and must not start with aws:")
            continue
        if not isinstance(value, str) or len(value) > 256 or not TAG_KEY.match(value):
            c.add(where, "tag values are strings of at most 256 letters, digits, spaces or _.:/=+-@")
            continue
        result[key] = value
    return result


def parse_workload(raw: Any, source: str, base_dir: Path, path: Path | None = None) -> Workload:
    """Check one spec mapping and return its Workload, or raise SpecError with every problem found."""
    from compiler import distribution as dist_rules

    c = _Checker(source)
    if not isinstance(raw, dict):
        raise SpecError(Problem(source, "", "a workload spec is a YAML mapping of estimator arguments"))
    c.unknown_keys("", raw, KNOWN_KEYS)

    name = c.string(raw, "name", required=True) or ""
    if name and (not WORKLOAD_NAME.match(name) or len(name) > MAX_WORKLOAD_NAME):
        c.add("name", f"'{name}' must be 1-{MAX_WORKLOAD_NAME} lowercase letters, digits and single hyphens")
    framework = raw.get("framework", "pytorch")
    if framework not in FRAMEWORKS:
        close = difflib.get_close_matches(str(framework), FRAMEWORKS, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        c.add("framework", f"must be one of {', '.join(FRAMEWORKS)}{hint}")
        framework = "pytorch"

    image = _check_image(c, raw, framework)
    if image.kind == "framework":
        _check_framework_versions(c, raw, framework)

    capacity = _check_capacity(c, raw.get("capacity_retry"))
    base_job_name = raw.get("base_job_name", name)
    room = _job_name_room(capacity)
    if not isinstance(base_job_name, str) or not JOB_NAME.match(base_job_name or "-"):
        c.add("base_job_name", "job names are letters, digits and hyphens, starting and ending with a letter or digit")
    elif len(base_job_name) > room:
        c.add(
            "base_job_name" if "base_job_name" in raw else "name",
            f"'{base_job_name}' is {len(base_job_name)} characters; with the per-run suffix "
            f"('-<12-character run id>-<attempt>') a job name must fit {MAX_JOB_NAME}, so use at most {room}",
        )

    entry_point = c.string(raw, "entry_point", required=True) or ""
    source_dir_raw = raw.get("source_dir")
    source_dir = base_dir
    if source_dir_raw is not None:
        if not isinstance(source_dir_raw, str) or source_dir_raw.startswith("s3://"):
            c.add("source_dir", "must be a local folder, relative to the spec file (it is packed at synth time)")
        else:
            source_dir = (base_dir / source_dir_raw).resolve()
            if not source_dir.is_dir():
                c.add("source_dir", f"folder {source_dir_raw} does not exist (paths are relative to the spec file)")
    if entry_point:
        if Path(entry_point).is_absolute() or ".." in Path(entry_point).parts:
            c.add("entry_point", "must be a path inside source_dir, e.g. train.py")
        elif source_dir.is_dir() and not (source_dir / entry_point).is_file():
            c.add("entry_point", f"{entry_point} is not a file in {source_dir_raw or 'the spec folder'}")

    instance_type = c.string(raw, "instance_type", required=True) or ""
    if instance_type and catalog.lookup(instance_type) is None:
        close = difflib.get_close_matches(instance_type, sorted(catalog.CATALOG), n=1, cutoff=0.7)
        hint = f"did you mean '{close[0]}'? " if close else ""
        c.add("instance_type", f"'{instance_type}' is not in the instance catalog; {hint}"
              "known types are listed in training/core/catalog.py (add a row there for a new type)")
        instance_type = ""

    instance_count = c.integer(raw, "instance_count", 1, 1, MAX_INSTANCE_COUNT) or 1
    volume_size = c.integer(raw, "volume_size", 30, 1, MAX_VOLUME_GB) or 30
    max_run = c.integer(raw, "max_run", 24 * 3600, 1, MAX_RUNTIME_SECONDS) or 24 * 3600
    use_spot = c.boolean(raw, "use_spot_instances")
    max_wait = c.integer(raw, "max_wait", None, 1, MAX_RUNTIME_SECONDS)
    keep_alive = c.integer(raw, "keep_alive_period_in_seconds", None, 0, MAX_KEEP_ALIVE_SECONDS)
    retries = c.integer(raw, "max_retry_attempts", None, 1, MAX_RETRY_ATTEMPTS)
    encrypt = c.boolean(raw, "encrypt_inter_container_traffic")
    isolation = c.boolean(raw, "enable_network_isolation")
    checkpoints = c.boolean(raw, "checkpoints")
    log_level = c.integer(raw, "container_log_level", 20, 0, 50)
    input_mode = raw.get("input_mode", "File")
    if input_mode not in INPUT_MODES:
        c.add("input_mode", f"must be one of {', '.join(INPUT_MODES)}")
        input_mode = "File"

    checkpoint_s3_uri = raw.get("checkpoint_s3_uri")
    if checkpoint_s3_uri is not None:
        if not isinstance(checkpoint_s3_uri, str) or not S3_URI.match(checkpoint_s3_uri):
            c.add("checkpoint_s3_uri", "must be an s3://bucket/prefix URI (or set checkpoints: true instead)")
        elif checkpoints:
            c.add("checkpoints", "set either checkpoints: true (the environment's bucket) or checkpoint_s3_uri, not both")
    checkpoint_local_path = raw.get("checkpoint_local_path")
    if checkpoint_local_path is not None and (
        not isinstance(checkpoint_local_path, str) or not checkpoint_local_path.startswith("/")
    ):
        c.add("checkpoint_local_path", "must be an absolute path in the container, e.g. /opt/ml/checkpoints")
    wants_checkpoints = checkpoints or checkpoint_s3_uri is not None

    if use_spot:
        if max_wait is None:
            c.add("max_wait", "spot training needs max_wait (seconds, at least max_run) to bound waiting for capacity")
        elif max_wait < max_run:
            c.add("max_wait", f"must be at least max_run ({max_run}) with spot training")
        if not wants_checkpoints:
            c.add("checkpoints", "spot training is interrupted: set checkpoints: true (or checkpoint_s3_uri) to resume")
        if keep_alive:
            c.add("keep_alive_period_in_seconds", "warm pools are not available with spot training; remove one of them")
    elif max_wait is not None:
        c.add("max_wait", "only applies to spot training; set use_spot_instances: true or remove max_wait")

    for key in ("output_path", "output_kms_key"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            c.add(key, "must be a string")
    output_path = raw.get("output_path")
    if isinstance(output_path, str) and not S3_URI.match(output_path):
        c.add("output_path", "must be an s3://bucket/prefix URI (default: the environment's output bucket)")
    output_kms_key = raw.get("output_kms_key")
    if isinstance(output_kms_key, str) and not re.fullmatch(r"[a-zA-Z0-9:/_-]{1,2048}", output_kms_key):
        c.add("output_kms_key", "must be a KMS key ID, key ARN, alias/<name> or alias ARN "
              "(letters, digits and ':/_-'; default: the environment's key)")

    hyperparameters = _check_hyperparameters(c, raw.get("hyperparameters"), framework)
    environment = _check_environment(c, raw.get("environment"))
    inputs = _check_inputs(c, raw.get("inputs"))
    if isolation and "code" in inputs:
        c.add("inputs.code", "with enable_network_isolation the code travels in an input channel named 'code'; "
              "rename this channel")
    elif isolation and len(inputs) >= MAX_CHANNELS:
        c.add("inputs", f"with enable_network_isolation the code takes one of SageMaker's {MAX_CHANNELS} channels; "
              f"use at most {MAX_CHANNELS - 1}")
    for channel in inputs.values():
        if channel.kind == "fsx" and input_mode != "File":
            c.add("input_mode", f"channel {channel.channel} is on FSx, which needs input_mode File")
    metrics = _check_metrics(c, raw.get("metric_definitions"))
    tags = _check_tags(c, raw.get("tags"))
    description = raw.get("description", "")
    if not isinstance(description, str):
        c.add("description", "must be a string")
        description = ""

    distribution = raw.get("distribution") or {}
    if not isinstance(distribution, dict):
        c.add("distribution", "must be a mapping in the SDK's shape, e.g. {torch_distributed: {enabled: true}}")
        distribution = {}

    workload = Workload(
        name=name,
        path=path if path is not None else base_dir / "<inline>",
        framework=framework,
        entry_point=entry_point,
        source_dir=source_dir,
        instance_type=instance_type,
        image=image,
        framework_version=raw.get("framework_version"),
        py_version=raw.get("py_version"),
        pytorch_version=raw.get("pytorch_version"),
        tensorflow_version=raw.get("tensorflow_version"),
        transformers_version=raw.get("transformers_version"),
        description=description,
        base_job_name=base_job_name if isinstance(base_job_name, str) else name,
        instance_count=instance_count,
        volume_size=volume_size,
        max_run=max_run,
        distribution=distribution,
        hyperparameters=hyperparameters,
        environment=environment,
        use_spot_instances=use_spot,
        max_wait=max_wait,
        checkpoints=checkpoints,
        checkpoint_s3_uri=checkpoint_s3_uri if isinstance(checkpoint_s3_uri, str) else None,
        checkpoint_local_path=checkpoint_local_path,
        keep_alive_period_in_seconds=keep_alive,
        max_retry_attempts=retries,
        encrypt_inter_container_traffic=encrypt,
        enable_network_isolation=isolation,
        metric_definitions=metrics,
        tags=tags,
        inputs=inputs,
        input_mode=input_mode,
        output_path=output_path if isinstance(output_path, str) else None,
        output_kms_key=raw.get("output_kms_key"),
        container_log_level=log_level if log_level is not None else 20,
        capacity_retry=capacity,
    )
    if instance_type:
        before = len(c.problems)
        dist_rules.check(c, workload)
        if len(c.problems) == before:  # the counts encode the distribution, which must be well-formed first
            _check_limits(c, workload)
    if c.problems:
        raise SpecError(c.problems)
    return _with_warnings(workload, c.warnings)


def _check_limits(c: _Checker, workload: Workload) -> None:
    """Counts that only add up once the SDK's own keys and the platform's variables are known."""
    from compiler.distribution import distribution_hyperparameters

    sdk_keys = 5 + len(distribution_hyperparameters(workload, job_name="x"))
    total = len(workload.hyperparameters) + sdk_keys
    if total > 100:
        c.add("hyperparameters", f"{len(workload.hyperparameters)} hyperparameters plus {sdk_keys} set by the SDK "
              "make more than SageMaker's 100")
    env_total = len(workload.environment | workload.instance.efa_environment())
    if env_total > 100:
        c.add("environment", f"{env_total} variables (with the EFA ones the platform adds); SageMaker allows 100")


def _with_warnings(workload: Workload, warnings: list[str]) -> Workload:
    from dataclasses import replace

    return replace(workload, warnings=tuple(warnings)) if warnings else workload


def load_workload_file(path: Path) -> Workload:
    """Read and check one YAML spec."""
    path = Path(path)
    source = _display(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise SpecError(Problem(source, "", "no such file")) from None
    except yaml.YAMLError as exc:
        raise SpecError(Problem(source, "", f"is not valid YAML: {exc}")) from None
    return parse_workload(raw, source=source, base_dir=path.parent.resolve(), path=path.resolve())


def workload_files(directory: Path = WORKLOADS_DIR) -> list[Path]:
    return sorted(list(directory.glob("*.yaml")) + list(directory.glob("*.yml")))


def load_workload(name_or_path: str | Path) -> Workload:
    """A workload by name (a file in training/workloads/) or by path to a YAML file."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists():
        return load_workload_file(candidate)
    for path in workload_files():
        if path.stem == str(name_or_path):
            return load_workload_file(path)
    known = [p.stem for p in workload_files()]
    close = difflib.get_close_matches(str(name_or_path), known, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise SpecError(Problem("", str(name_or_path), f"no such workload; {hint}known: {', '.join(known)}"))


def load_all_workloads(directory: Path = WORKLOADS_DIR) -> list[Workload]:
    """Every workload under the directory; raises one SpecError listing the problems of all files."""
    workloads: list[Workload] = []
    problems: list[Problem] = []
    for path in workload_files(directory):
        try:
            workloads.append(load_workload_file(path))
        except SpecError as exc:
            problems.extend(exc.problems)
    names: dict[str, Path] = {}
    for w in workloads:
        if w.name in names:
            problems.append(Problem(_display(w.path), "name", f"'{w.name}' is also used by {_display(names[w.name])}"))
        names[w.name] = w.path
    if problems:
        raise SpecError(problems)
    return workloads


def _display(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
