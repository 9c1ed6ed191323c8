"""Compile a checked Workload into the CreateTrainingJob request the SageMaker Python SDK v2 would send.

The request is complete except for values that exist only at deploy or run time, written as `${Name}`
placeholders (see placeholders.py). Fields the SDK adds only on request are added only on request here too:
Step Functions checks field names when the state machine is created, so an optional field we never need is a
field that cannot break a deploy.
"""

from __future__ import annotations

import json
from typing import Any

from compiler import placeholders as ph
from compiler.distribution import distribution_hyperparameters, s3_join
from compiler.environments import Environment
from compiler.errors import Problem, SpecError
from compiler.images import image_uri
from compiler.spec import FsxInput, S3Input, Workload

# Tag keys the platform sets on every job (the execution ARN tag is added by the state machine at run time).
TAG_WORKLOAD = "training-platform:workload"
TAG_ENVIRONMENT = "training-platform:environment"
TAG_EXECUTION = "training-platform:execution-arn"

SDK_PROGRAM = "sagemaker_program"
SDK_SUBMIT_DIRECTORY = "sagemaker_submit_directory"
SDK_LOG_LEVEL = "sagemaker_container_log_level"
SDK_JOB_NAME = "sagemaker_job_name"
SDK_REGION = "sagemaker_region"
# With network isolation the container cannot read S3 itself: the SDK passes the code as an input channel.
CODE_CHANNEL = "code"
# The SDK writes EstimatorBase.CONTAINER_CODE_CHANNEL_SOURCEDIR_PATH, /opt/ml/input/data/code/sourcedir.tar.gz:
# the channel folder plus the object's name, which the SDK always uploads as sourcedir.tar.gz. Our tarball is a
# CDK asset whose object is named by its hash, so the name is a deploy-time value here.
CODE_CHANNEL_SOURCEDIR = "/opt/ml/input/data/code/" + ph.ref(ph.SOURCE_DIR_FILE_NAME)


def job_name(workload: Workload) -> str:
    """The job name with its run-specific part as placeholders (filled per execution and attempt)."""
    return f"{workload.base_job_name}-{ph.ref(ph.RUN_ID)}-{ph.ref(ph.ATTEMPT)}"


def output_path(workload: Workload) -> str:
    return workload.output_path or f"s3://{ph.ref(ph.OUTPUT_BUCKET)}/{workload.name}/"


def checkpoint_uri(workload: Workload) -> str | None:
    """Per execution, so a relaunch after a capacity failure resumes and a new run starts clean."""
    if workload.checkpoint_s3_uri:
        return workload.checkpoint_s3_uri
    if workload.checkpoints:
        return f"s3://{ph.ref(ph.CHECKPOINT_BUCKET)}/{workload.name}/{ph.ref(ph.RUN_ID)}/"
    return None


def encode(value: Any) -> str:
    """The SDK's hyperparameter encoding (`EstimatorBase._json_encode_hyperparameters`): json.dumps."""
    return json.dumps(value)


def sdk_hyperparameters(workload: Workload, env: Environment) -> dict[str, Any]:
    """The keys the SDK adds for script mode and distribution, before encoding."""
    name = job_name(workload)
    values: dict[str, Any] = {
        SDK_SUBMIT_DIRECTORY: CODE_CHANNEL_SOURCEDIR if workload.enable_network_isolation
        else ph.ref(ph.SOURCE_DIR_S3_URI),
        SDK_PROGRAM: workload.entry_point,
        SDK_LOG_LEVEL: workload.container_log_level,
        SDK_JOB_NAME: name,
        SDK_REGION: env.region,
    }
    values.update(distribution_hyperparameters(workload, job_name=name, output_path=output_path(workload)))
    return values


def hyperparameters(workload: Workload, env: Environment) -> dict[str, str]:
    user = {str(k): encode(v) for k, v in workload.hyperparameters.items()}
    return user | {k: encode(v) for k, v in sdk_hyperparameters(workload, env).items()}


def _channel(channel: S3Input | FsxInput) -> dict[str, Any]:
    if isinstance(channel, FsxInput):
        config: dict[str, Any] = {
            "ChannelName": channel.channel,
            "DataSource": {
                "FileSystemDataSource": {
                    "FileSystemId": ph.ref(ph.FILE_SYSTEM_ID),
                    "FileSystemType": "FSxLustre",
                    "DirectoryPath": f"/{ph.ref(ph.FSX_MOUNT_NAME)}{channel.directory_path}",
                    "FileSystemAccessMode": channel.file_system_access_mode,
                }
            },
        }
        if channel.content_type:
            config["ContentType"] = channel.content_type
        return config
    uri = channel.s3_data if not channel.in_data_bucket else f"s3://{ph.ref(ph.DATA_BUCKET)}/{channel.s3_data}"
    source: dict[str, Any] = {"S3DataType": channel.s3_data_type, "S3Uri": uri,
                              "S3DataDistributionType": channel.distribution}
    config = {"ChannelName": channel.channel, "DataSource": {"S3DataSource": source}}
    if channel.compression is not None:
        config["CompressionType"] = channel.compression
    if channel.content_type is not None:
        config["ContentType"] = channel.content_type
    if channel.input_mode is not None:
        config["InputMode"] = channel.input_mode
    return config


def environment(workload: Workload) -> dict[str, str]:
    """The spec's variables plus the EFA ones the in-container toolkit does not set for this type."""
    efa = workload.instance.efa_environment()
    return efa | workload.environment  # the spec wins, so a user can still override


def tags(workload: Workload, env: Environment) -> list[dict[str, str]]:
    items = {k: v for k, v in workload.tags.items()}
    items[TAG_WORKLOAD] = workload.name
    items[TAG_ENVIRONMENT] = env.name
    return [{"Key": k, "Value": v} for k, v in items.items()]


def check_for_environment(workload: Workload, env: Environment) -> None:
    """Rules that depend on where the workload is deployed."""
    problems = []
    source = str(workload.path)
    if workload.uses_fsx and not env.has_fsx:
        fsx_channels = ", ".join(c.channel for c in workload.inputs.values() if c.kind == "fsx")
        problems.append(Problem(source, "inputs", f"channel {fsx_channels} reads from FSx for Lustre, but environment "
                                f"'{env.name}' has no file system: add an fsx block to it in cdk.json, or read from S3"))
    if problems:
        raise SpecError(problems)


def compile_request(workload: Workload, env: Environment, *, training_image: str | None = None) -> dict[str, Any]:
    """The CreateTrainingJob request for one run of the workload in the environment.

    `training_image` replaces the image lookup (which imports the SDK for framework images); `validate`
    uses it to check every request in milliseconds.
    """
    check_for_environment(workload, env)
    algorithm: dict[str, Any] = {
        "TrainingImage": training_image or image_uri(workload, env.region),
        "TrainingInputMode": workload.input_mode,
    }
    if workload.metric_definitions:
        algorithm["MetricDefinitions"] = [dict(m) for m in workload.metric_definitions]

    resources: dict[str, Any] = {
        "InstanceType": workload.instance_type,
        "InstanceCount": workload.instance_count,
        "VolumeSizeInGB": workload.volume_size,
    }
    if workload.keep_alive_period_in_seconds is not None:
        resources["KeepAlivePeriodInSeconds"] = workload.keep_alive_period_in_seconds

    stopping: dict[str, Any] = {"MaxRuntimeInSeconds": workload.max_run}
    if workload.use_spot_instances and workload.max_wait is not None:
        stopping["MaxWaitTimeInSeconds"] = workload.max_wait

    output: dict[str, Any] = {"S3OutputPath": output_path(workload),
                              "KmsKeyId": workload.output_kms_key or ph.ref(ph.KMS_KEY_ARN)}

    request: dict[str, Any] = {
        "TrainingJobName": job_name(workload),
        "AlgorithmSpecification": algorithm,
        "RoleArn": ph.ref(ph.EXECUTION_ROLE_ARN),
        "OutputDataConfig": output,
        "ResourceConfig": resources,
        "VpcConfig": {
            "SecurityGroupIds": [ph.ref(ph.TRAINING_SECURITY_GROUP_ID)],
            "Subnets": [ph.ref(ph.TRAINING_SUBNET_ID)],
        },
        "StoppingCondition": stopping,
        "HyperParameters": hyperparameters(workload, env),
        "Tags": tags(workload, env),
    }
    if workload.inputs:
        request["InputDataConfig"] = [_channel(c) for c in workload.inputs.values()]
    if workload.enable_network_isolation:  # as the SDK's _Job._load_config adds its code channel
        request.setdefault("InputDataConfig", []).append({
            "ChannelName": CODE_CHANNEL,
            "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": ph.ref(ph.SOURCE_DIR_S3_URI),
                                            "S3DataDistributionType": "FullyReplicated"}},
        })
    env_vars = environment(workload)
    if env_vars:
        request["Environment"] = env_vars
    if workload.enable_network_isolation:
        request["EnableNetworkIsolation"] = True
    if workload.encrypt_inter_container_traffic:
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
    return request


def s3_model_artifacts(workload: Workload, job: str) -> str:
    """Where SageMaker writes model.tar.gz for a job (the execution's output reports it)."""
    return s3_join(output_path(workload), job, "output", "model.tar.gz")
