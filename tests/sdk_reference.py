"""The reference: what the real SageMaker Python SDK v2 sends to CreateTrainingJob, captured offline.

The compiler claims to build the exact request `Estimator.fit()` would send. Rather than copying the
SDK's encoding rules into tests (which would only test the copy), the parity tests run the real
`sagemaker==2.257.7` estimators and capture the parameters of the CreateTrainingJob call they make
(FACTS.md section 1): a boto3 session with dummy keys, a botocore Stubber answering CreateTrainingJob,
and a `provide-client-params` hook that records what the SDK passed. Code never leaves the machine:
with `source_dir` the SDK gets the S3 tarball the platform uploads (so it uploads nothing), and without
one it packs the entry point (and dependencies) itself and hands the archive to an S3 stand-in that keeps
the file names. Every other way out is shut while capturing: telemetry is patched out, any AWS call that
is not stubbed raises, and sockets refuse to connect, so a capture can never reach AWS, and a change in
the SDK that would try to shows up as a clear error instead of a hang.

`estimator_arguments` turns a workload spec (the SDK's argument names) into the same estimator call, with
the spec's mappings made into the SDK's own objects (DebuggerHookConfig, CollectionConfig, ProfilerConfig,
TensorBoardOutputConfig, InstanceGroup, TrainingInput, ShuffleConfig, FileSystemInput) and the values the
platform owns (role, network, output and checkpoint locations, buckets, FSx) taken from the compiled request.

`import sagemaker` takes ~2 s; it happens once per process, on the first capture.
"""

from __future__ import annotations

import copy
import functools
import os
import socket
import tarfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

from compiler.facts import placeholders as _ph
from compiler.facts import samples as _samples
from compiler.inputs.spec.keys import SDK_ARGUMENTS

REGION = _samples.REGION
ACCOUNT = _samples.ACCOUNT
ROLE_ARN = _samples.DEPLOY_VALUES[_ph.EXECUTION_ROLE_ARN]
# The SDK uploads the source as .../sourcedir.tar.gz; the parity side fills our placeholders the same way.
SOURCE_DIR = "s3://code-bucket/workloads/gpt/sourcedir.tar.gz"
OUTPUT_PATH = "s3://output-bucket/gpt"
TARBALL = "sourcedir.tar.gz"

FRAMEWORKS = ("pytorch", "tensorflow", "huggingface", "xgboost", "sklearn", "generic")
RUN_ID = _samples.RUN_VALUES[_ph.RUN_ID]
FSX_MOUNT = _samples.DEPLOY_VALUES[_ph.FSX_MOUNT_NAME]

# Deploy-time and run-time values, as CloudFormation and the state machine fill them (compiler/facts/samples.py);
# the SDK side of a parity test gets the same ones as estimator arguments.
DEPLOY_VALUES: dict[str, str] = _samples.DEPLOY_VALUES | _samples.RUN_VALUES | {
    _ph.SOURCE_DIR_S3_URI: SOURCE_DIR,
    _ph.SOURCE_DIR_FILE_NAME: SOURCE_DIR.rsplit("/", 1)[-1],
}

# Spec keys that are SDK arguments but are not passed as such: the job name is fit()'s, and the code
# arguments are rewritten (the tarball the platform uploads, or local paths the SDK packs itself).
_NOT_PASSED = frozenset({"base_job_name", "entry_point", "source_dir", "dependencies"})


def deploy_values(request: Mapping[str, Any], **overrides: str) -> dict[str, str]:
    """DEPLOY_VALUES plus a realistic URI for each project ECR repository the request names."""
    return _samples.sample_values(request, DEPLOY_VALUES, **overrides)


class OfflineViolation(RuntimeError):
    """The SDK tried to reach AWS or the internet during a capture."""


@functools.cache
def _sagemaker() -> ModuleType:
    """Import the SDK once per process (quietly), with the modules the harness needs."""
    os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    import sagemaker
    import sagemaker.debugger
    import sagemaker.estimator
    import sagemaker.huggingface
    import sagemaker.image_uris
    import sagemaker.inputs
    import sagemaker.instance_group
    import sagemaker.pytorch
    import sagemaker.sklearn
    import sagemaker.telemetry.telemetry_logging
    import sagemaker.tensorflow
    import sagemaker.utils
    import sagemaker.xgboost

    global _RESOLVER
    _RESOLVER = sagemaker.utils._botocore_resolver
    return sagemaker


_RESOLVER: Any = None  # the SDK's own resolver function, kept before the harness memoizes it


def estimator_class(framework: str) -> type:
    """The SDK class a spec's `framework` stands for ('generic': `sagemaker.estimator.Estimator`)."""
    sagemaker = _sagemaker()
    classes = {
        "pytorch": sagemaker.pytorch.PyTorch,
        "tensorflow": sagemaker.tensorflow.TensorFlow,
        "huggingface": sagemaker.huggingface.HuggingFace,
        "xgboost": sagemaker.xgboost.XGBoost,
        "sklearn": sagemaker.sklearn.SKLearn,
        "generic": sagemaker.estimator.Estimator,
    }
    if framework not in classes:
        raise ValueError(f"framework must be one of {', '.join(FRAMEWORKS)}, not {framework!r}")
    return classes[framework]


def _refuse_connect(*args: Any, **kwargs: Any) -> None:
    raise OfflineViolation(f"the SDK tried to open a network connection to {args[1:]!r} during a capture")


@functools.cache
def _endpoint_resolver() -> Any:
    """The SDK's `utils._botocore_resolver()`, built once: it parses botocore's endpoints.json (~0.4 s) on every call."""
    return _RESOLVER()


@contextmanager
def _offline() -> Iterator[None]:
    """Patch out telemetry and make every socket connection fail while the SDK runs."""
    sagemaker = _sagemaker()
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(
            sagemaker.telemetry.telemetry_logging, "_send_telemetry_request", lambda *a, **k: None,
        ))
        stack.enter_context(mock.patch.object(sagemaker.utils, "_botocore_resolver", _endpoint_resolver))
        stack.enter_context(mock.patch.object(socket.socket, "connect", _refuse_connect))
        stack.enter_context(mock.patch.object(socket.socket, "connect_ex", _refuse_connect))
        yield


class _CodeBucket:
    """Stands in for the session's boto3 S3 resource: keeps what the SDK would upload (archive file names)."""

    def __init__(self) -> None:
        self.uploads: dict[str, list[str]] = {}

    def Object(self, bucket: str, key: str) -> _CodeObject:
        return _CodeObject(self, f"s3://{bucket}/{key}")


class _CodeObject:
    def __init__(self, store: _CodeBucket, uri: str) -> None:
        self.store, self.uri = store, uri

    def upload_file(self, filename: str, ExtraArgs: Any = None) -> None:
        with tarfile.open(filename) as archive:
            self.store.uploads[self.uri] = sorted(archive.getnames())


def _refuse_request(request: Any, **kwargs: Any) -> None:
    raise OfflineViolation(f"the SDK sent an unstubbed AWS request: {request.method} {request.url}")


@functools.cache
def _boto_session(region: str) -> Any:
    """One boto3 session per region for every capture: it keeps the parsed service models (~0.15 s a session).

    Clients stay per capture (each gets its own Stubber and hooks); the session itself refuses every request
    that reaches the wire.
    """
    import boto3

    session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=region)
    session.events.register("before-send", _refuse_request)
    return session


def _session(region: str) -> tuple[Any, Any, _CodeBucket]:
    """A sagemaker Session on dummy credentials, a Stubber on its SageMaker client, and its S3 stand-in."""
    from botocore.stub import Stubber

    sagemaker = _sagemaker()
    boto_session = _boto_session(region)
    session = sagemaker.session.Session(boto_session=boto_session)
    bucket = _CodeBucket()
    session.s3_resource = bucket
    return session, Stubber(session.sagemaker_client), bucket


def _channel(value: Any) -> Any:
    """Turn a plain channel description into the SDK's input object.

    A string is an S3 URI. A dict with `file_system_id` is a FileSystemInput; with `s3_data` a
    TrainingInput (its `shuffle_config` a ShuffleConfig); keys are the SDK's own argument names.
    """
    sagemaker = _sagemaker()
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if "file_system_id" in value:
            return sagemaker.inputs.FileSystemInput(**value)
        arguments = dict(value)
        if isinstance(arguments.get("shuffle_config"), Mapping):
            arguments["shuffle_config"] = sagemaker.inputs.ShuffleConfig(**arguments["shuffle_config"])
        return sagemaker.inputs.TrainingInput(**arguments)
    return value


def capture_create_training_job(
    framework: str,
    *,
    job_name: str,
    inputs: Mapping[str, Any] | str | None = None,
    region: str = REGION,
    uploads: dict[str, list[str]] | None = None,
    arguments: Mapping[str, Any] | None = None,
    **estimator_kwargs: Any,
) -> dict[str, Any]:
    """Run `<Estimator class>(**estimator_kwargs).fit(inputs, job_name=...)` offline; return the request.

    `estimator_kwargs` are the SDK v2 estimator's own arguments (entry_point, instance_type,
    distribution, hyperparameters, ...). Defaults that would otherwise make the SDK call AWS are
    filled in: `role`, `output_path` (so no default bucket is created) and, for framework estimators,
    `source_dir` (an S3 tarball, so nothing is uploaded; pass `source_dir=None` to have the SDK pack
    the entry point itself, into `uploads`). `arguments` are more estimator arguments, for names this
    function takes itself (an estimator given `job_name`, as a user might write by mistake). The result is
    exactly the CreateTrainingJob parameters, after botocore's own parameter validation (the client
    validates before the stub answers).
    """
    estimator_cls = estimator_class(framework)
    kwargs = copy.deepcopy(dict(estimator_kwargs) | dict(arguments or {}))
    kwargs.setdefault("role", ROLE_ARN)
    if framework != "generic":
        kwargs.setdefault("source_dir", SOURCE_DIR)
    kwargs.setdefault("output_path", OUTPUT_PATH)
    if isinstance(inputs, Mapping):
        channels: Any = {name: _channel(value) for name, value in inputs.items()}
    else:
        channels = _channel(inputs) if inputs is not None else None

    captured: list[dict[str, Any]] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        captured.append(copy.deepcopy(params))

    with _offline():
        session, stubber, bucket = _session(region)
        session.sagemaker_client.meta.events.register("provide-client-params.sagemaker.CreateTrainingJob", record)
        arn = f"arn:aws:sagemaker:{region}:{ACCOUNT}:training-job/{job_name}"
        stubber.add_response("create_training_job", {"TrainingJobArn": arn})
        # Parts of the SDK (TensorBoardApp) make clients from boto3's default session: give them ours.
        with mock.patch("boto3.DEFAULT_SESSION", session.boto_session), stubber:
            estimator = estimator_cls(sagemaker_session=session, **kwargs)
            estimator.fit(inputs=channels, job_name=job_name, wait=False, logs=False)
        stubber.assert_no_pending_responses()
    if uploads is not None:
        uploads.update(bucket.uploads)
    if len(captured) != 1:
        raise AssertionError(f"expected one CreateTrainingJob call from fit(), saw {len(captured)}")
    return captured[0]


# ---------------------------------------------------------------------------------------------------------------
# A spec as the same estimator call
# ---------------------------------------------------------------------------------------------------------------


def framework_of(spec: Mapping[str, Any]) -> str:
    """The estimator a spec stands for: its `framework`, or the generic Estimator without one."""
    return str(spec.get("framework") or "generic")


def s3_location(location: str) -> str:
    """A spec's S3 location as a URI: key prefixes are in the environment's data bucket."""
    return location if location.startswith("s3://") else f"s3://{DEPLOY_VALUES[_ph.DATA_BUCKET]}/{location}"


def debugger_hook_config(value: Any) -> Any:
    """`debugger_hook_config` as the SDK takes it: a bool, or a DebuggerHookConfig of CollectionConfigs.

    No `s3_output_path`: the SDK then uses output_path, which is what the platform fills in.
    """
    if not isinstance(value, Mapping):
        return value
    debugger = _sagemaker().debugger
    collections = value.get("collection_configs")
    return debugger.DebuggerHookConfig(
        container_local_output_path=value.get("container_local_output_path"),
        hook_parameters=value.get("hook_parameters"),
        collection_configs=None if collections is None else [
            debugger.CollectionConfig(name=c["name"], parameters=c.get("parameters")) for c in collections
        ],
    )


def profiler_config(value: Mapping[str, Any]) -> Any:
    """`profiler_config` as a ProfilerConfig (the SDK fills its S3 output path with output_path)."""
    arguments = {k: value[k] for k in ("system_monitor_interval_millis", "disable_profiler") if k in value}
    return _sagemaker().debugger.ProfilerConfig(**arguments)


def tensorboard_output_config(value: Any, request: Mapping[str, Any]) -> Any:
    """`tensorboard_output_config` as a TensorBoardOutputConfig at the platform's S3 location (from our request)."""
    if value is None or value is False:
        return None
    local = value.get("container_local_output_path") if isinstance(value, Mapping) else None
    return _sagemaker().debugger.TensorBoardOutputConfig(
        s3_output_path=request["TensorBoardOutputConfig"]["S3OutputPath"], container_local_output_path=local,
    )


def instance_groups(value: list[Mapping[str, Any]]) -> list[Any]:
    return [_sagemaker().instance_group.InstanceGroup(g["instance_group_name"], g["instance_type"],
                                                       g["instance_count"]) for g in value]


def distribution(value: Mapping[str, Any], groups: list[Any] | None) -> dict[str, Any]:
    """`distribution`, its `instance_groups` names made into the estimator's own InstanceGroup objects.

    The SDK takes the objects themselves (it checks membership by identity); a name the spec's groups lack
    becomes a bare InstanceGroup of that name, which the SDK then refuses.
    """
    result = copy.deepcopy(dict(value))
    named = result.get("instance_groups")
    if isinstance(named, list):
        by_name = {g.instance_group_name: g for g in groups or []}
        make = _sagemaker().instance_group.InstanceGroup
        result["instance_groups"] = [by_name.get(n) or make(n) for n in named]
    return result


def channel_arguments(channel: Any) -> dict[str, Any]:
    """One `inputs` entry as TrainingInput / FileSystemInput arguments, with the platform's buckets and FSx."""
    channel = {"s3_data": channel} if isinstance(channel, str) else dict(channel)
    if "directory_path" in channel:
        arguments = {
            "file_system_id": DEPLOY_VALUES[_ph.FILE_SYSTEM_ID], "file_system_type": "FSxLustre",
            "directory_path": f"/{FSX_MOUNT}{channel['directory_path']}",
            "file_system_access_mode": channel.get("file_system_access_mode", "ro"),
        }
        if "content_type" in channel:
            arguments["content_type"] = channel["content_type"]
        return arguments
    channel["s3_data"] = s3_location(channel["s3_data"])
    return channel


def _code_arguments(spec: Mapping[str, Any], spec_dir: Path) -> dict[str, Any]:
    """With source_dir, the tarball the platform uploads; without, local paths the SDK packs and uploads itself."""
    if "entry_point" not in spec:
        return {}
    if "source_dir" in spec:
        return {"entry_point": spec["entry_point"], "source_dir": DEPLOY_VALUES[_ph.SOURCE_DIR_S3_URI]}
    arguments: dict[str, Any] = {"entry_point": str(spec_dir / spec["entry_point"]), "source_dir": None}
    if spec.get("dependencies"):
        arguments["dependencies"] = [str(spec_dir / d) for d in spec["dependencies"]]
    return arguments


def _converted(key: str, value: Any, request: Mapping[str, Any]) -> Any:
    """A spec value as the SDK's argument (its own objects for the mappings it takes as objects)."""
    if key == "debugger_hook_config":
        return debugger_hook_config(value)
    if key == "profiler_config":
        return profiler_config(value)
    if key == "tensorboard_output_config":
        return tensorboard_output_config(value, request)
    if key == "instance_groups":
        return instance_groups(value)
    if key == "tags" and isinstance(value, Mapping):
        return [{"Key": k, "Value": v} for k, v in value.items()]
    if key == "model_uri":
        return s3_location(value)
    return copy.deepcopy(value)


def algorithm_image_uri(image: Mapping[str, Any], region: str, instance_type: str | None) -> str:
    """A built-in algorithm's image as the SageMaker Developer Guide has users get it, `image_uris.retrieve(algorithm,
    region, version)`, with the job's instance type (offline: the catalog is the SDK's JSON, the ECR host botocore's)."""
    with _offline():
        uri: str = _sagemaker().image_uris.retrieve(image["algorithm"], region, version=image.get("version"),
                                                    instance_type=instance_type)
    return uri


def estimator_arguments(spec: Mapping[str, Any], request: Mapping[str, Any],
                        spec_dir: Path, region: str = REGION) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The estimator class, arguments and fit() channels for the job a spec describes.

    `request` is our compiled request with placeholders filled: the values the platform owns (output
    path, checkpoint and TensorBoard locations, the project-built image) are read from it, so both sides
    get the same ones; the role and network come from the same deploy-time values. A built-in algorithm's image
    is the SDK's own `image_uris.retrieve` in `region`, never ours.
    """
    kwargs: dict[str, Any] = {}
    for key, value in spec.items():
        if key in SDK_ARGUMENTS and key not in _NOT_PASSED:
            converted = _converted(key, value, request)
            if converted is not None:
                kwargs[key] = converted
    if isinstance(spec.get("distribution"), Mapping):
        kwargs["distribution"] = distribution(spec["distribution"], kwargs.get("instance_groups"))
    kwargs |= _code_arguments(spec, spec_dir)
    if "instance_groups" not in spec:
        kwargs.setdefault("instance_count", 1)  # the SDK requires it; a spec may leave it at its default, 1
    kwargs["subnets"] = [DEPLOY_VALUES[_ph.TRAINING_SUBNET_ID]]
    kwargs["security_group_ids"] = [DEPLOY_VALUES[_ph.TRAINING_SECURITY_GROUP_ID]]
    kwargs["output_path"] = request["OutputDataConfig"]["S3OutputPath"]
    if "CheckpointConfig" in request:
        kwargs["checkpoint_s3_uri"] = request["CheckpointConfig"]["S3Uri"]
    if request.get("EnableInterContainerTrafficEncryption") and "encrypt_inter_container_traffic" not in spec:
        kwargs["encrypt_inter_container_traffic"] = True  # the environment's policy
    if request.get("EnableNetworkIsolation") and "enable_network_isolation" not in spec:
        kwargs["enable_network_isolation"] = True  # the platform's default (compiler/rules/isolation.py)
    image = spec.get("image")
    if isinstance(image, Mapping) and "algorithm" in image:
        kwargs["image_uri"] = algorithm_image_uri(image, region, spec.get("instance_type"))
    elif image is not None:
        kwargs["image_uri"] = request["AlgorithmSpecification"]["TrainingImage"]  # the project-built image
    channels = {name: channel_arguments(channel) for name, channel in (spec.get("inputs") or {}).items()}
    return framework_of(spec), kwargs, channels


def code_upload_uri(output_path: str, job_name: str) -> str:
    """Where the SDK uploads the code it packs itself: the output bucket, under <job>/source/ (no output prefix)."""
    bucket = output_path[len("s3://"):].split("/", 1)[0]
    return f"s3://{bucket}/{job_name}/source/{TARBALL}"
