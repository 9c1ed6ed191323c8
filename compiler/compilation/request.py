"""Compile a checked Workload into the CreateTrainingJob request the SageMaker Python SDK v2 would send.

The request is complete except for values that exist only at deploy or run time, written as `${Name}`
placeholders (see placeholders.py). Optional fields the SDK adds by default (DebugHookConfig, ProfilerConfig,
EnableSageMakerMetricsTimeSeries) are sent only when the spec asks for them: Step Functions checks field names
when a state machine is created, so an optional field nobody asked for is a field that cannot break a deploy.
"""

from __future__ import annotations

import json
from typing import Any

from compiler.compilation import strategies
from compiler.compilation.images import image_uri
from compiler.compilation.strategies.base import enabled
from compiler.compilation.strategies.encoding import generic
from compiler.facts import placeholders as ph
from compiler.facts import secret_refs
from compiler.inputs.environments import Environment
from compiler.inputs.model import Channel, FsxChannel, S3Channel, Workload

# Tag keys the platform sets on every job (the execution ARN tag is added by the state machine at run time).
TAG_WORKLOAD = "training-platform:workload"
TAG_ENVIRONMENT = "training-platform:environment"
TAG_EXECUTION = "training-platform:execution-arn"

SDK_PROGRAM = "sagemaker_program"
SDK_SUBMIT_DIRECTORY = "sagemaker_submit_directory"
SDK_LOG_LEVEL = "sagemaker_container_log_level"
SDK_JOB_NAME = "sagemaker_job_name"
SDK_REGION = "sagemaker_region"
MODEL_DIR = "model_dir"
# With network isolation the container cannot read S3 itself: the SDK passes the code as an input channel.
CODE_CHANNEL = "code"
# The SDK writes EstimatorBase.CONTAINER_CODE_CHANNEL_SOURCEDIR_PATH, /opt/ml/input/data/code/sourcedir.tar.gz:
# the channel folder plus the object's name, which the SDK always uploads as sourcedir.tar.gz. Our tarball is a
# CDK asset whose object is named by its hash, so the name is a deploy-time value here.
CODE_CHANNEL_SOURCEDIR = "/opt/ml/input/data/code/" + ph.ref(ph.SOURCE_DIR_FILE_NAME)
MODEL_CONTENT_TYPE = "application/x-sagemaker-model"
TENSORBOARD_PREFIX = "tensorboard"
# Estimators whose debugger checks drop the hook for jobs with checkpoints (Framework._validate_and_set_debugger_configs).
DEBUGGER_HOOK_OFF_FRAMEWORKS = ("pytorch", "tensorflow")


def job_name(workload: Workload) -> str:
    """The job name with its run-specific part as placeholders (filled per execution and attempt)."""
    return f"{workload.base_job_name}-{ph.ref(ph.RUN_ID)}-{ph.ref(ph.ATTEMPT)}"


def output_path(workload: Workload) -> str:
    return f"s3://{ph.ref(ph.OUTPUT_BUCKET)}/{workload.name}/"


def checkpoint_uri(workload: Workload) -> str | None:
    """Per execution, so a relaunch after a capacity failure resumes and a new run starts clean."""
    if not workload.checkpoints:
        return None
    return f"s3://{ph.ref(ph.CHECKPOINT_BUCKET)}/{workload.name}/{ph.ref(ph.RUN_ID)}/"


def s3_join(*parts: str) -> str:
    """`sagemaker.s3.s3_path_join`: join with single slashes, keeping the s3:// scheme."""
    head = ""
    items = list(parts)
    if items and items[0].startswith("s3://"):
        head, items[0] = "s3://", items[0][5:]
    return head + "/".join(p.strip("/") for p in items if p.strip("/"))


def s3_uri(location: str) -> str:
    """An input location as a URI: key prefixes are in the environment's data bucket."""
    return location if location.startswith("s3://") else f"s3://{ph.ref(ph.DATA_BUCKET)}/{location}"


# --------------------------------------------------------------------------------------------------- hyperparameters


def json_encoded(values: dict[str, Any]) -> dict[str, str]:
    """`EstimatorBase._json_encode_hyperparameters`: json.dumps of every value."""
    return {str(k): json.dumps(v) for k, v in values.items()}


def _user_values(workload: Workload) -> dict[str, str]:
    """The spec's hyperparameters as the estimator sends them.

    Framework estimators JSON-encode them. The generic Estimator JSON-encodes them when it ships a source_dir and
    otherwise sends `str()` of each (`Estimator.set_hyperparameters`, then `to_string` in `_get_train_args`).
    """
    if workload.framework != "generic" or (workload.code is not None and workload.code.source_dir is not None):
        return json_encoded(dict(workload.hyperparameters))
    return {str(k): str(v) for k, v in workload.hyperparameters.items()}


def script_mode_values(workload: Workload, env: Environment) -> dict[str, Any]:
    """What `_script_mode_hyperparam_update` adds when the job ships code (before encoding)."""
    code = workload.code
    if code is None:
        return {}
    return {
        SDK_SUBMIT_DIRECTORY: CODE_CHANNEL_SOURCEDIR if workload.enable_network_isolation
        else ph.ref(ph.SOURCE_DIR_S3_URI),
        SDK_PROGRAM: code.program,
        SDK_LOG_LEVEL: code.container_log_level,
        SDK_JOB_NAME: job_name(workload),
        SDK_REGION: env.region,
    }


def distribution_values(workload: Workload) -> dict[str, Any]:
    """The distribution's keys, plus TensorFlow's model_dir (before encoding)."""
    values = strategies.hyperparameters(workload)
    if workload.framework == "tensorflow" and workload.estimator.model_dir is not False:
        mpi = generic(strategies.job_of(workload)).get("sagemaker_mpi_enabled", False)
        default = "/opt/ml/model" if mpi else s3_join(output_path(workload), job_name(workload), "model")
        values[MODEL_DIR] = workload.estimator.model_dir or default
    return values


def hyperparameters(workload: Workload, env: Environment) -> dict[str, str]:
    """HyperParameters exactly as the SDK sends them, in its order: the spec's, script mode, distribution."""
    values = _user_values(workload) | json_encoded(script_mode_values(workload, env))
    if workload.framework != "generic":
        values |= json_encoded(distribution_values(workload))
    return values


# --------------------------------------------------------------------------------------------------- channels


def _s3_channel(channel: S3Channel) -> dict[str, Any]:
    """`TrainingInput.config` plus the channel name."""
    source: dict[str, Any] = {"S3DataType": channel.s3_data_type, "S3Uri": s3_uri(channel.s3_data)}
    if channel.distribution is not None:
        source["S3DataDistributionType"] = channel.distribution
    config: dict[str, Any] = {"DataSource": {"S3DataSource": source}}
    if channel.compression is not None:
        config["CompressionType"] = channel.compression
    if channel.content_type is not None:
        config["ContentType"] = channel.content_type
    if channel.record_wrapping is not None:
        config["RecordWrapperType"] = channel.record_wrapping
    if channel.instance_groups is not None:
        source["InstanceGroupNames"] = list(channel.instance_groups)
    if channel.input_mode is not None:
        config["InputMode"] = channel.input_mode
    if channel.attribute_names is not None:
        source["AttributeNames"] = list(channel.attribute_names)
    if channel.shuffle_seed is not None:
        config["ShuffleConfig"] = {"Seed": channel.shuffle_seed}
    if channel.hub_access_config is not None:
        source["HubAccessConfig"] = dict(channel.hub_access_config)
    if channel.model_access_config is not None:
        source["ModelAccessConfig"] = dict(channel.model_access_config)
    config["ChannelName"] = channel.name
    return config


def _fsx_channel(channel: FsxChannel) -> dict[str, Any]:
    config: dict[str, Any] = {"DataSource": {"FileSystemDataSource": {
        "FileSystemId": ph.ref(ph.FILE_SYSTEM_ID),
        "FileSystemType": "FSxLustre",
        "DirectoryPath": f"/{ph.ref(ph.FSX_MOUNT_NAME)}{channel.directory_path}",
        "FileSystemAccessMode": channel.file_system_access_mode,
    }}}
    if channel.content_type:
        config["ContentType"] = channel.content_type
    config["ChannelName"] = channel.name
    return config


def _channel(channel: Channel) -> dict[str, Any]:
    return _fsx_channel(channel) if isinstance(channel, FsxChannel) else _s3_channel(channel)


def input_channels(workload: Workload) -> list[dict[str, Any]]:
    """The spec's channels, then the model channel, then the code channel (network isolation), as `_load_config`."""
    channels = [_channel(c) for c in workload.inputs]
    if workload.model_uri is not None:
        channels.append(_s3_channel(S3Channel(name=workload.model_channel_name, s3_data=workload.model_uri,
                                              content_type=MODEL_CONTENT_TYPE, input_mode="File")))
    if workload.enable_network_isolation and workload.code is not None:
        code = _s3_channel(S3Channel(name=CODE_CHANNEL, s3_data=ph.ref(ph.SOURCE_DIR_S3_URI)))
        code["DataSource"]["S3DataSource"]["S3Uri"] = ph.ref(ph.SOURCE_DIR_S3_URI)  # a URI, not a data-bucket prefix
        channels.append(code)
    return channels


# --------------------------------------------------------------------------------------------------- parts


def environment(workload: Workload) -> dict[str, str] | None:
    """The spec's variables plus the EFA ones the in-container toolkit does not set for the training type, then one
    variable per secret holding its ARN, never its value (compiler.facts.secret_refs)."""
    efa = workload.instance.efa_environment()
    if workload.environment is None and not efa and not workload.secrets:
        return None
    # the spec wins over EFA's, so a user can still override; a secret's name never clashes (a rule refuses it)
    return efa | dict(workload.environment or {}) | secret_refs.request_variables(dict(workload.secrets))


def tags(workload: Workload, env: Environment) -> list[dict[str, str]]:
    items = dict(workload.tags)
    items[TAG_WORKLOAD] = workload.name
    items[TAG_ENVIRONMENT] = env.name
    return [{"Key": k, "Value": v} for k, v in items.items()]


def training_plan_arn(workload: Workload, env: Environment) -> str | None:
    plan = workload.compute.training_plan
    if plan is None:
        return None
    return env.training_plans[plan].arn if plan in env.training_plans else plan


def resource_config(workload: Workload, env: Environment) -> dict[str, Any]:
    """`_Job._prepare_resource_config`."""
    compute = workload.compute
    config: dict[str, Any] = {"VolumeSizeInGB": compute.volume_size}
    if compute.volume_kms_key is not None:
        config["VolumeKmsKeyId"] = compute.volume_kms_key
    if compute.keep_alive_period_in_seconds is not None:
        config["KeepAlivePeriodInSeconds"] = compute.keep_alive_period_in_seconds
    if compute.instance_groups:
        config["InstanceGroups"] = [{"InstanceGroupName": g.name, "InstanceType": g.instance_type,
                                     "InstanceCount": g.instance_count} for g in compute.instance_groups]
    else:
        config["InstanceCount"] = compute.instance_count
        config["InstanceType"] = compute.instance_type
    plan = training_plan_arn(workload, env)
    if plan is not None:
        config["TrainingPlanArn"] = plan
    if compute.instance_placement_config is not None:
        config["InstancePlacementConfig"] = dict(compute.instance_placement_config)
    return config


def algorithm(workload: Workload, env: Environment, image: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"TrainingInputMode": workload.input_mode, "TrainingImage": image}
    if workload.training_repository_access_mode is not None:
        spec["TrainingImageConfig"] = {"TrainingRepositoryAccessMode": workload.training_repository_access_mode}
    if workload.container_entry_point is not None:
        spec["ContainerEntrypoint"] = list(workload.container_entry_point)
    if workload.container_arguments is not None:
        spec["ContainerArguments"] = list(workload.container_arguments)
    if workload.metric_definitions is not None:
        spec["MetricDefinitions"] = [{"Name": m.name, "Regex": m.regex} for m in workload.metric_definitions]
    if workload.enable_sagemaker_metrics is not None:
        spec["EnableSageMakerMetricsTimeSeries"] = workload.enable_sagemaker_metrics
    return spec


def encrypts_traffic(workload: Workload, env: Environment) -> bool:
    """The spec's choice, or the environment's policy for jobs that may run on several nodes when the spec does not
    say: a run may ask for up to `max_instance_count` instances, and the request's other fields do not change with
    the count, so the count a run may reach decides, not the spec's own."""
    if workload.encrypt_inter_container_traffic is not None:
        return workload.encrypt_inter_container_traffic
    return env.encrypt_inter_container_traffic and workload.instance_count_ceiling > 1


def _debugger_hook(workload: Workload) -> dict[str, Any] | None:
    hook = workload.debugging.debugger_hook
    if hook is None or workload.debugging.debugger_hook_disabled:
        return None
    if workload.checkpoints and workload.checkpoint_local_path and workload.framework in DEBUGGER_HOOK_OFF_FRAMEWORKS:
        # Framework._validate_and_set_debugger_configs turns the hook off for "distributed" jobs with checkpoints;
        # its test (`instance_count > 1 or self.distribution is not None`) holds for every PyTorch and TensorFlow
        # job, whose estimators set `distribution` to {} when none is given.
        return None
    if workload.framework == "tensorflow" and enabled(workload.distribution.get("parameter_server")):
        return None  # TensorFlow._validate_and_set_debugger_configs
    # The SDK always sends the collections it gathered (a set, so their order is arbitrary), even when none.
    return {"S3OutputPath": output_path(workload), **hook,
            "CollectionConfigurations": list(hook.get("CollectionConfigurations", []))}


def _observability(workload: Workload, request: dict[str, Any]) -> None:
    hook = _debugger_hook(workload)
    if hook is not None:
        request["DebugHookConfig"] = hook
    if workload.debugging.tensorboard:
        config = {"S3OutputPath": s3_join(output_path(workload), TENSORBOARD_PREFIX) + "/"}
        if workload.debugging.tensorboard_local_path is not None:
            config["LocalPath"] = workload.debugging.tensorboard_local_path
        request["TensorBoardOutputConfig"] = config
    profiler = workload.debugging.profiler
    if profiler is not None:
        config = {} if profiler.get("DisableProfiler") else {"S3OutputPath": output_path(workload)}
        request["ProfilerConfig"] = config | dict(profiler)


def _switches(workload: Workload, env: Environment, request: dict[str, Any]) -> None:
    if workload.enable_network_isolation:
        request["EnableNetworkIsolation"] = True
    if encrypts_traffic(workload, env):
        request["EnableInterContainerTrafficEncryption"] = True
    if workload.use_spot_instances:
        request["EnableManagedSpotTraining"] = True
    checkpoint = checkpoint_uri(workload)
    if checkpoint:
        request["CheckpointConfig"] = {"S3Uri": checkpoint}
        if workload.checkpoint_local_path:
            request["CheckpointConfig"]["LocalPath"] = workload.checkpoint_local_path
    if workload.max_retry_attempts is not None:
        request["RetryStrategy"] = {"MaximumRetryAttempts": workload.max_retry_attempts}
    if workload.enable_infra_check is not None:
        request["InfraCheckConfig"] = {"EnableInfraCheck": workload.enable_infra_check}
    if workload.enable_remote_debug is not None:
        request["RemoteDebugConfig"] = {"EnableRemoteDebug": workload.enable_remote_debug}
    if workload.enable_session_tag_chaining is not None:
        request["SessionChainingConfig"] = {"EnableSessionTagChaining": workload.enable_session_tag_chaining}


def compile_request(workload: Workload, env: Environment, *, training_image: str | None = None) -> dict[str, Any]:
    """The CreateTrainingJob request for one run of the workload in the environment.

    `training_image` replaces the image lookup (validate uses a stand-in to check requests without resolving images).
    """
    output: dict[str, Any] = {"S3OutputPath": output_path(workload),
                              "KmsKeyId": workload.output_kms_key or ph.ref(ph.KMS_KEY_ARN)}
    if workload.disable_output_compression:
        output["CompressionType"] = "NONE"
    stopping: dict[str, Any] = {"MaxRuntimeInSeconds": workload.max_run}
    if workload.max_wait:
        stopping["MaxWaitTimeInSeconds"] = workload.max_wait
    request: dict[str, Any] = {
        "TrainingJobName": job_name(workload),
        "AlgorithmSpecification": algorithm(workload, env, training_image or image_uri(workload, env.region)),
        "RoleArn": ph.ref(ph.EXECUTION_ROLE_ARN),
        "OutputDataConfig": output,
        "ResourceConfig": resource_config(workload, env),
        "VpcConfig": {"SecurityGroupIds": [ph.ref(ph.TRAINING_SECURITY_GROUP_ID)],
                      "Subnets": [ph.ref(ph.TRAINING_SUBNET_ID)]},
        "StoppingCondition": stopping,
        "Tags": tags(workload, env),
    }
    values = hyperparameters(workload, env)
    if values:
        request["HyperParameters"] = values
    channels = input_channels(workload)
    if channels:
        request["InputDataConfig"] = channels
    env_vars = environment(workload)
    if env_vars is not None:
        request["Environment"] = env_vars
    _switches(workload, env, request)
    _observability(workload, request)
    return request
