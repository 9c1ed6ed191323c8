"""The typed workload model: what a checked spec says, in the SageMaker SDK's terms, before any encoding.

`compiler.spec` builds it from YAML (every field checked, every problem reported at once); `compiler.compilation.request`
turns it into the CreateTrainingJob request the SDK would send; the state machine, the CDK layer and the CLI
read it. It is immutable and holds raw values as the user wrote them (hyperparameters keep their JSON types):
encoding belongs to the request compiler.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from compiler.facts import catalog

# The SDK's defaults for what a spec leaves out (EstimatorBase.__init__ of the pinned sagemaker==2.257.7): stated once
# here, for the model's fields and the spec readers (compiler/inputs/spec/) alike.
MAX_RUN_SECONDS = 24 * 60 * 60  # max_run
VOLUME_SIZE_GB = 30  # volume_size
INPUT_MODE = "File"  # input_mode
CONTAINER_LOG_LEVEL = logging.INFO  # container_log_level: 20

# On unless a spec turns it off with a reason (compiler/rules/isolation.py, docs/security.md#network-isolation).
NETWORK_ISOLATION_DEFAULT = True
# The most instances any environment could hold: a VPC is at most a /16 (vpc_cidr, compiler/inputs/environments.py)
# and its training subnet at most half of it, one address per instance at least. The network rule checks each
# environment's real room; this bound only keeps counts finite for what iterates over them (cost ceilings per count).
MAX_INSTANCE_COUNT = 2**15

Framework = Literal["pytorch", "tensorflow", "huggingface", "xgboost", "sklearn", "generic"]
FRAMEWORKS: tuple[str, ...] = ("pytorch", "tensorflow", "huggingface", "xgboost", "sklearn")
# The estimators whose containers launch the SDK's distribution strategies. XGBoost and SKLearn take no `distribution`
# (their estimators drop it without a word; the XGBoost container distributes a script's work itself), and neither
# does the generic Estimator.
DISTRIBUTED_FRAMEWORKS: tuple[str, ...] = ("pytorch", "tensorflow", "huggingface")
# The SDK's XGBoost and SKLearn estimators: script mode on an image retrieved by framework_version, one process per
# instance (no distribution).
SCRIPT_MODE_TABULAR: tuple[str, ...] = ("xgboost", "sklearn")


# ----------------------------------------------------------------------------------------------------- image


@dataclass(frozen=True)
class FrameworkImage:
    """An AWS Deep Learning Container the SDK resolves from framework and Python versions (and the instance type)."""

    kind: Literal["framework"] = "framework"


@dataclass(frozen=True)
class UriImage:
    """An image given by URI (`image_uri`)."""

    uri: str
    kind: Literal["uri"] = "uri"


@dataclass(frozen=True)
class ProjectImage:
    """An image this project builds into one of its own ECR repositories (`image: {repository, tag}`)."""

    repository: str
    tag: str | None = None
    kind: Literal["repository"] = "repository"


@dataclass(frozen=True)
class AlgorithmImage:
    """A SageMaker built-in algorithm (`image: {algorithm, version}`), run by the generic Estimator from the image
    `image_uris.retrieve(algorithm, region, version)` names in each environment's region."""

    algorithm: str  # the SDK's image catalog name: linear-learner, kmeans, xgboost, ...
    version: str
    kind: Literal["algorithm"] = "algorithm"


Image = FrameworkImage | UriImage | ProjectImage | AlgorithmImage


@dataclass(frozen=True)
class Estimator:
    """Which SDK estimator class the spec stands for, and the versions that pick its framework image."""

    framework: Framework
    framework_version: str | None = None  # transformers_version for HuggingFace
    py_version: str | None = None
    pytorch_version: str | None = None  # HuggingFace base framework
    tensorflow_version: str | None = None
    model_dir: str | bool | None = None  # TensorFlow: False turns the model_dir hyperparameter off


# ----------------------------------------------------------------------------------------------------- code


@dataclass(frozen=True)
class Code:
    """The training code shipped with the job: packed into sourcedir.tar.gz as the SDK does it."""

    entry_point: str  # relative to source_dir (or the entry point file's own folder without one)
    source_dir: Path | None  # absolute, inside the project; None: only the entry point (and dependencies) ship
    entry_point_path: Path  # absolute path of the entry point file
    dependencies: tuple[Path, ...] = ()  # folders copied beside the entry point
    container_log_level: int = CONTAINER_LOG_LEVEL

    @property
    def program(self) -> str:
        """`sagemaker_program`: the entry point's path inside the archive."""
        return self.entry_point if self.source_dir is not None else self.entry_point_path.name


# ----------------------------------------------------------------------------------------------------- compute


@dataclass(frozen=True)
class InstanceGroup:
    """One group of a heterogeneous cluster (`instance_groups`)."""

    name: str
    instance_type: str
    instance_count: int

    @property
    def instance(self) -> catalog.InstanceType:
        return catalog.get(self.instance_type)


@dataclass(frozen=True)
class Compute:
    """What the job runs on: one instance type and count, or instance groups."""

    instance_type: str | None
    instance_count: int | None
    instance_groups: tuple[InstanceGroup, ...] = ()
    volume_size: int = VOLUME_SIZE_GB
    volume_kms_key: str | None = None
    keep_alive_period_in_seconds: int | None = None
    training_plan: str | None = None  # an ARN, or the name of a plan declared by the environment
    instance_placement_config: Mapping[str, Any] | None = None

    @property
    def groups(self) -> tuple[InstanceGroup, ...]:
        """Every group, the single-type form as one group named after nothing."""
        if self.instance_groups:
            return self.instance_groups
        assert self.instance_type is not None and self.instance_count is not None
        return (InstanceGroup("", self.instance_type, self.instance_count),)

    @property
    def total_instances(self) -> int:
        return sum(g.instance_count for g in self.groups)

    @property
    def primary(self) -> catalog.InstanceType:
        """The instance type that runs the training processes (the first group for heterogeneous clusters)."""
        return self.groups[0].instance

    def hourly_cost(self, region: str) -> float | None:
        """List price per hour of the whole cluster in a region; None when a type has no price there."""
        costs = [catalog.hourly_cost(g.instance_type, g.instance_count, region) for g in self.groups]
        return None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 4)


# ----------------------------------------------------------------------------------------------------- data


@dataclass(frozen=True)
class S3Channel:
    """A channel read from S3: a key prefix in the environment's data bucket, or a URI in an allowed bucket."""

    name: str
    s3_data: str
    distribution: str | None = "FullyReplicated"
    compression: str | None = None
    content_type: str | None = None
    record_wrapping: str | None = None
    s3_data_type: str = "S3Prefix"
    instance_groups: tuple[str, ...] | None = None
    input_mode: str | None = None
    attribute_names: tuple[str, ...] | None = None
    shuffle_seed: int | None = None
    model_access_config: Mapping[str, Any] | None = None  # {AcceptEula: true}, for a gated JumpStart model
    hub_access_config: Mapping[str, Any] | None = None  # {HubContentArn: ...}
    kind: Literal["s3"] = "s3"

    @property
    def in_data_bucket(self) -> bool:
        return not self.s3_data.startswith("s3://")

    @property
    def bucket(self) -> str | None:
        return None if self.in_data_bucket else self.s3_data[5:].split("/", 1)[0]

    @property
    def key_prefix(self) -> str:
        return self.s3_data if self.in_data_bucket else self.s3_data[5:].partition("/")[2]


@dataclass(frozen=True)
class FsxChannel:
    """A channel read from the environment's FSx for Lustre file system (path inside it)."""

    name: str
    directory_path: str  # starts with '/', relative to the file system root (the mount name is added)
    file_system_access_mode: str = "ro"
    content_type: str | None = None
    kind: Literal["fsx"] = "fsx"


Channel = S3Channel | FsxChannel


@dataclass(frozen=True)
class Debugging:
    """SageMaker Debugger, Profiler and TensorBoard settings, sent only when the spec asks for them."""

    debugger_hook: Mapping[str, Any] | None = None  # None: not asked; {} or a config: send DebugHookConfig
    debugger_hook_disabled: bool = False  # debugger_hook_config: false
    profiler: Mapping[str, Any] | None = None  # ProfilerConfig as the SDK builds it, minus S3OutputPath
    tensorboard_local_path: str | None = None
    tensorboard: bool = False


@dataclass(frozen=True)
class CapacityRetry:
    """How the state machine relaunches a job that failed for lack of EC2 capacity."""

    max_attempts: int = 3
    wait_seconds: int = 600
    backoff_rate: float = 2.0
    fallback_instance_types: tuple[str, ...] = ()
    capacity_window_minutes: int = 10  # a job still waiting for instances after this is stopped and relaunched
    instance_preferences: bool = False  # send every type in one request (ResourceConfig.InstancePreferences)


@dataclass(frozen=True)
class StallWatchdog:
    """`stall_watchdog:`: a training job that writes no line of its `metric` to its log for `minutes` of training is
    stopped and relaunched from its checkpoints, at most `max_relaunches` times (compiler/state_machine/watchdog.py)."""

    metric: str  # one of metric_definitions' names
    minutes: int = 30
    max_relaunches: int = 2
    log_pattern: str = ""  # the CloudWatch Logs filter pattern that finds the metric's lines (facts/log_patterns.py)


@dataclass(frozen=True)
class Schedule:
    """`schedule:`: when EventBridge Scheduler starts a run, where, and with which input.

    compiler/inputs/schedule.py reads it; compiler/compilation/schedules.py projects its runs and their cost.
    """

    expression: str  # cron(...) or rate(...), as EventBridge Scheduler takes it
    timezone: str = "UTC"  # IANA name the expression is evaluated in
    environments: tuple[str, ...] | None = None  # None: every environment the workload deploys to
    input: Mapping[str, Any] = field(default_factory=dict)  # the execution input, checked like a console start

    def applies_to(self, env: str) -> bool:
        return self.environments is None or env in self.environments


@dataclass(frozen=True)
class Metric:
    name: str
    regex: str


@dataclass(frozen=True)
class RunOptions:
    """How a job runs: limits, spot, checkpoints, switches and the console's ceilings (compiler/inputs/spec/options.py reads
    them; the Workload shows each under its own name)."""

    input_mode: str = INPUT_MODE
    max_run: int = MAX_RUN_SECONDS
    max_wait: int | None = None
    use_spot_instances: bool = False
    checkpoints: bool = False
    checkpoint_local_path: str | None = None
    output_kms_key: str | None = None
    disable_output_compression: bool = False
    max_retry_attempts: int | None = None
    encrypt_inter_container_traffic: bool | None = None  # None: the environment's policy decides
    unencrypted_traffic_reason: str | None = None
    enable_network_isolation: bool = NETWORK_ISOLATION_DEFAULT
    network_isolation_off_reason: str | None = None
    enable_sagemaker_metrics: bool | None = None
    enable_infra_check: bool | None = None
    enable_remote_debug: bool | None = None
    remote_debug_reason: str | None = None
    enable_session_tag_chaining: bool | None = None
    training_repository_access_mode: str | None = None
    container_entry_point: tuple[str, ...] | None = None
    container_arguments: tuple[str, ...] | None = None
    max_instance_count: int | None = None  # ceiling for the console's instance_count override
    concurrent_runs: bool = False  # True: runs may go side by side (no check for another run in progress)
    max_run_cost_usd: float | None = None  # the per-run cost ceiling (compiler/compilation/cost_ceiling.py); None: none


# ----------------------------------------------------------------------------------------------------- workload


@dataclass(frozen=True)
class Workload:
    """A checked workload spec for one environment."""

    name: str
    source: str  # the spec file, as shown in messages
    estimator: Estimator
    image: Image
    code: Code | None
    compute: Compute
    distribution: Mapping[str, Any] = field(default_factory=dict)  # the SDK's dict, as written
    hyperparameters: Mapping[str, Any] = field(default_factory=dict)
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # a run may set these names only to these
    environment: Mapping[str, str] | None = None  # None: the spec sets none (the SDK then sends no Environment)
    secrets: Mapping[str, str] = field(default_factory=dict)  # variable name -> Secrets Manager secret ARN
    secrets_kms_key: str | None = None  # the customer managed key the secrets are encrypted with, if any
    inputs: tuple[Channel, ...] = ()
    model_uri: str | None = None
    model_channel_name: str = "model"
    run: RunOptions = field(default_factory=RunOptions)
    metric_definitions: tuple[Metric, ...] | None = None  # None: not given ([] is sent, as the SDK sends it)
    tags: Mapping[str, str] = field(default_factory=dict)
    debugging: Debugging = field(default_factory=Debugging)
    base_job_name: str = ""
    description: str = ""
    capacity_retry: CapacityRetry = field(default_factory=CapacityRetry)
    schedule: Schedule | None = None  # None: runs start only by hand
    stall_watchdog: StallWatchdog | None = None  # None: no watch on progress
    warnings: tuple[str, ...] = ()

    @property
    def framework(self) -> str:
        return self.estimator.framework

    # The run options under their own names, as the request compiler, the rules and the CDK layer read them.

    @property
    def input_mode(self) -> str:
        return self.run.input_mode

    @property
    def max_run(self) -> int:
        return self.run.max_run

    @property
    def max_wait(self) -> int | None:
        return self.run.max_wait

    @property
    def use_spot_instances(self) -> bool:
        return self.run.use_spot_instances

    @property
    def checkpoints(self) -> bool:
        return self.run.checkpoints

    @property
    def checkpoint_local_path(self) -> str | None:
        return self.run.checkpoint_local_path

    @property
    def output_kms_key(self) -> str | None:
        return self.run.output_kms_key

    @property
    def disable_output_compression(self) -> bool:
        return self.run.disable_output_compression

    @property
    def max_retry_attempts(self) -> int | None:
        return self.run.max_retry_attempts

    @property
    def encrypt_inter_container_traffic(self) -> bool | None:
        return self.run.encrypt_inter_container_traffic

    @property
    def unencrypted_traffic_reason(self) -> str | None:
        return self.run.unencrypted_traffic_reason

    @property
    def enable_network_isolation(self) -> bool:
        return self.run.enable_network_isolation

    @property
    def network_isolation_off_reason(self) -> str | None:
        return self.run.network_isolation_off_reason

    @property
    def enable_sagemaker_metrics(self) -> bool | None:
        return self.run.enable_sagemaker_metrics

    @property
    def enable_infra_check(self) -> bool | None:
        return self.run.enable_infra_check

    @property
    def enable_remote_debug(self) -> bool | None:
        return self.run.enable_remote_debug

    @property
    def remote_debug_reason(self) -> str | None:
        return self.run.remote_debug_reason

    @property
    def enable_session_tag_chaining(self) -> bool | None:
        return self.run.enable_session_tag_chaining

    @property
    def training_repository_access_mode(self) -> str | None:
        return self.run.training_repository_access_mode

    @property
    def container_entry_point(self) -> tuple[str, ...] | None:
        return self.run.container_entry_point

    @property
    def container_arguments(self) -> tuple[str, ...] | None:
        return self.run.container_arguments

    @property
    def max_instance_count(self) -> int | None:
        return self.run.max_instance_count

    @property
    def concurrent_runs(self) -> bool:
        return self.run.concurrent_runs

    @property
    def max_run_cost_usd(self) -> float | None:
        return self.run.max_run_cost_usd

    @property
    def instance(self) -> catalog.InstanceType:
        return self.compute.primary

    @property
    def instance_type(self) -> str:
        return self.compute.groups[0].instance_type

    @property
    def instance_count(self) -> int:
        return self.compute.total_instances

    @property
    def launch_types(self) -> tuple[str, ...]:
        """Every instance type a run may launch on: the instance groups' types, or the type and its fallbacks."""
        if self.compute.instance_groups:
            return tuple(g.instance_type for g in self.compute.instance_groups)
        return (self.instance_type, *self.capacity_retry.fallback_instance_types)

    @property
    def s3_reads(self) -> tuple[tuple[str, S3Channel], ...]:
        """(spec field, location) of every S3 location the workload's jobs read: its S3 channels, and `model_uri` as
        the channel SageMaker adds for it. The one list the rules check and the execution role grants."""
        found = [(f"inputs.{c.name}", c) for c in self.inputs if isinstance(c, S3Channel)]
        if self.model_uri is not None:
            found.append(("model_uri", S3Channel(name=self.model_channel_name, s3_data=self.model_uri)))
        return tuple(found)

    @property
    def uses_fsx(self) -> bool:
        return any(c.kind == "fsx" for c in self.inputs)

    def hourly_cost(self, region: str) -> float | None:
        """List price per hour of the cluster in a region (its environment's); None where a type has no price."""
        return self.compute.hourly_cost(region)

    @property
    def max_relaunches(self) -> int:
        """The most relaunches a run makes (capacity and stalls): the highest `${Attempt}` of its job names."""
        return self.capacity_retry.max_attempts + (self.stall_watchdog.max_relaunches if self.stall_watchdog else 0)

    @property
    def instance_count_ceiling(self) -> int:
        return self.max_instance_count or self.instance_count
