"""The reference: what the real SageMaker Python SDK v2 sends to CreateTrainingJob, captured offline.

The compiler claims to build the exact request `Estimator.fit()` would send. Rather than copying the
SDK's encoding rules into tests (which would only test the copy), the parity tests run the real
`sagemaker==2.257.7` estimators and capture the parameters of the CreateTrainingJob call they make
(FACTS.md section 1): a boto3 session with dummy keys, `source_dir` already in S3 so nothing is
uploaded, a botocore Stubber answering CreateTrainingJob, and a `provide-client-params` hook that
records what the SDK passed. Every other way out is shut while capturing: telemetry is patched out,
any AWS call that is not stubbed raises, and sockets refuse to connect, so a capture can never reach
AWS, and a change in the SDK that would try to shows up as a clear error instead of a hang.

`import sagemaker` takes ~2 s; it happens once per process, on the first capture.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import socket
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from types import ModuleType
from typing import Any
from unittest import mock

from compiler import placeholders as _ph
from compiler import samples as _samples

REGION = _samples.REGION
ACCOUNT = _samples.ACCOUNT
ROLE_ARN = _samples.DEPLOY_VALUES[_ph.EXECUTION_ROLE_ARN]
# The SDK uploads the source as .../sourcedir.tar.gz; the parity side fills our placeholders the same way.
SOURCE_DIR = "s3://code-bucket/workloads/gpt/sourcedir.tar.gz"
OUTPUT_PATH = "s3://output-bucket/gpt"

FRAMEWORKS = ("pytorch", "tensorflow", "huggingface")
RUN_ID = _samples.RUN_VALUES[_ph.RUN_ID]
FSX_MOUNT = _samples.DEPLOY_VALUES[_ph.FSX_MOUNT_NAME]

# Deploy-time and run-time values, as CloudFormation and the state machine fill them (training/core/samples.py);
# the SDK side of a parity test gets the same ones as estimator arguments.
DEPLOY_VALUES: dict[str, str] = _samples.DEPLOY_VALUES | _samples.RUN_VALUES | {
    _ph.SOURCE_DIR_S3_URI: SOURCE_DIR,
    _ph.SOURCE_DIR_FILE_NAME: SOURCE_DIR.rsplit("/", 1)[-1],
}


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
    import sagemaker.huggingface
    import sagemaker.inputs
    import sagemaker.pytorch
    import sagemaker.telemetry.telemetry_logging
    import sagemaker.tensorflow

    return sagemaker


def _estimator_class(framework: str) -> type:
    sagemaker = _sagemaker()
    classes = {
        "pytorch": sagemaker.pytorch.PyTorch,
        "tensorflow": sagemaker.tensorflow.TensorFlow,
        "huggingface": sagemaker.huggingface.HuggingFace,
    }
    if framework not in classes:
        raise ValueError(f"framework must be one of {', '.join(FRAMEWORKS)}, not {framework!r}")
    return classes[framework]


def _refuse_connect(*args: Any, **kwargs: Any) -> None:
    raise OfflineViolation(f"the SDK tried to open a network connection to {args[1:]!r} during a capture")


@contextmanager
def _offline() -> Iterator[None]:
    """Patch out telemetry and make every socket connection fail while the SDK runs."""
    sagemaker = _sagemaker()
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(
            sagemaker.telemetry.telemetry_logging, "_send_telemetry_request", lambda *a, **k: None,
        ))
        stack.enter_context(mock.patch.object(socket.socket, "connect", _refuse_connect))
        stack.enter_context(mock.patch.object(socket.socket, "connect_ex", _refuse_connect))
        yield


def _session(region: str) -> tuple[Any, Any]:
    """A sagemaker Session on dummy credentials, and a Stubber on its SageMaker client."""
    import boto3
    from botocore.stub import Stubber

    sagemaker = _sagemaker()
    boto_session = boto3.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name=region,
    )

    def refuse(request: Any, **kwargs: Any) -> None:
        raise OfflineViolation(f"the SDK sent an unstubbed AWS request: {request.method} {request.url}")

    boto_session.events.register("before-send", refuse)
    session = sagemaker.session.Session(boto_session=boto_session)
    return session, Stubber(session.sagemaker_client)


def _channel(value: Any) -> Any:
    """Turn a plain channel description into the SDK's input object.

    A string is an S3 URI. A dict with `file_system_id` is a FileSystemInput; with `s3_data` a
    TrainingInput; keys are the SDK's own argument names.
    """
    sagemaker = _sagemaker()
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if "file_system_id" in value:
            return sagemaker.inputs.FileSystemInput(**value)
        return sagemaker.inputs.TrainingInput(**value)
    return value


def capture_create_training_job(
    framework: str,
    *,
    job_name: str,
    inputs: Mapping[str, Any] | str | None = None,
    region: str = REGION,
    **estimator_kwargs: Any,
) -> dict[str, Any]:
    """Run `<Framework>(**estimator_kwargs).fit(inputs, job_name=...)` offline; return the request.

    `estimator_kwargs` are the SDK v2 estimator's own arguments (entry_point, instance_type,
    distribution, hyperparameters, ...). Defaults that would otherwise make the SDK call AWS are
    filled in: `role`, `source_dir` (an S3 tarball, so nothing is uploaded) and `output_path` (so no
    default bucket is created). The result is exactly the CreateTrainingJob parameters, after
    botocore's own parameter validation (the client validates before the stub answers).
    """
    estimator_cls = _estimator_class(framework)
    kwargs = copy.deepcopy(dict(estimator_kwargs))
    kwargs.setdefault("role", ROLE_ARN)
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
        session, stubber = _session(region)
        session.sagemaker_client.meta.events.register("provide-client-params.sagemaker.CreateTrainingJob", record)
        arn = f"arn:aws:sagemaker:{region}:{ACCOUNT}:training-job/{job_name}"
        stubber.add_response("create_training_job", {"TrainingJobArn": arn})
        # Parts of the SDK (TensorBoardApp) make clients from boto3's default session: give them ours.
        with mock.patch("boto3.DEFAULT_SESSION", session.boto_session), stubber:
            estimator = estimator_cls(sagemaker_session=session, **kwargs)
            estimator.fit(inputs=channels, job_name=job_name, wait=False, logs=False)
        stubber.assert_no_pending_responses()
    if len(captured) != 1:
        raise AssertionError(f"expected one CreateTrainingJob call from fit(), saw {len(captured)}")
    return captured[0]


def decoded_hyperparameters(request: Mapping[str, Any]) -> dict[str, Any]:
    """HyperParameters as the in-container toolkit reads them: json.loads each value, raw text if that fails."""
    decoded: dict[str, Any] = {}
    for key, value in request.get("HyperParameters", {}).items():
        try:
            decoded[key] = json.loads(value)
        except ValueError:
            decoded[key] = value
    return decoded
