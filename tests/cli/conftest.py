"""The CLI against moto: one shipped workload's real state machine, created where `trainctl` looks for it.

cdk.json puts dev in account 111111111111, us-east-1. moto picks the account of each request from the
`MOTO_ACCOUNT_ID` environment variable first (then an `x-moto-account-id` header, then the access key), and that is
the one mechanism that also reaches the calls moto's Step Functions interpreter makes from its own threads (with
fixed keys): so the whole package runs with MOTO_ACCOUNT_ID set to dev's account, and STS answers with it, which is
what `trainctl.common.aws.session` checks.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.loaders import JSONFileLoader
from moto import mock_aws
from moto.sagemaker.models import FakeTrainingJob

from compiler import state_machine as sm
from compiler.inputs.environments import Environment
from tests.cli.cloud import CloudSageMaker, starts_like_sagemaker
from tests.compiler.state_machine.harness import Deployed, type_requests
from tests.compiler.state_machine.sagemaker_sync import Outcome, installed
from tests.project import ENVIRONMENTS, ROOT, loaded
from trainctl.cli import main

logging.getLogger("moto.stepfunctions").setLevel(logging.CRITICAL)

DEV = ENVIRONMENTS["dev"]
WORKLOAD = "gpt-smddp"  # 2 x ml.p4d.24xlarge (max 2), two capacity relaunches: two hosts' logs, a relaunch to see
NOT_DEPLOYED = "gpt-smp-v1"  # deploys to dev, but the tests never create its state machine


def _parsed_once(load_file: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    cache: dict[str, Any] = {}

    def cached(self: Any, file_path: str) -> Any:
        if file_path not in cache:
            cache[file_path] = load_file(self, file_path)
        return cache[file_path]

    return cached


@pytest.fixture(scope="package")
def aws() -> Iterator[None]:
    """moto for the whole package, in dev's account, with no profile or config of the machine in the way."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOTO_ACCOUNT_ID", DEV.account)
        for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
            patch.delenv(name, raising=False)
        patch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
        patch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
        patch.setattr(FakeTrainingJob, "__init__", starts_like_sagemaker(FakeTrainingJob.__init__))
        # Every command makes a new boto3 session (one a process, as a user runs it), and every session parses
        # botocore's JSON models again: most of a command's time here. The files do not change: parse each once.
        patch.setattr(JSONFileLoader, "load_file", _parsed_once(JSONFileLoader.load_file))
        with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
            yield


@pytest.fixture(scope="package")
def deployed(aws) -> Deployed:
    """The workload's state machine as synth builds it, named and placed as `trainctl` computes."""
    workload = {w.name: w for w in loaded().workloads(DEV.name)}[WORKLOAD]
    machine = Deployed(sm.spec_for(workload, DEV), type_requests(workload, DEV))
    assert machine.arn == (f"arn:aws:states:{DEV.region}:{DEV.account}:stateMachine:"
                           f"{sm.state_machine_name(DEV.name, WORKLOAD)}")
    return machine


@pytest.fixture
def dev() -> Environment:
    return DEV


@dataclass
class Result:
    code: int
    out: str
    err: str


class Cli:
    """`trainctl` as a user runs it (`trainctl.cli.main`), its output captured."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, *argv: str) -> Result:
        code = main(["--project-dir", str(ROOT), *argv])
        out, err = self.capsys.readouterr()
        return Result(code, out, err)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    capsys.readouterr()
    return Cli(capsys)


@pytest.fixture
def sfn(aws) -> Any:
    return boto3.client("stepfunctions", region_name=DEV.region)


def sagemaker(*script: Outcome) -> CloudSageMaker:
    return CloudSageMaker(script=list(script), region=DEV.region, account=DEV.account)


def wait_for_end(sfn: Any, arn: str, timeout: float = 30) -> dict[str, Any]:
    """Wait for moto's interpreter to finish the execution (it runs in its own thread)."""
    deadline = time.monotonic() + timeout
    while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
        assert time.monotonic() < deadline, "execution did not end"
        time.sleep(0.02)  # mostly idle: polling without a pause would take the interpreter's time
    return described


def executions(sfn: Any, machine: Deployed) -> list[str]:
    return [e["name"] for e in sfn.list_executions(stateMachineArn=machine.arn, maxResults=1000)["executions"]]


def run_directly(sfn: Any, machine: Deployed, given: Any, name: str) -> dict[str, Any]:
    """Start the state machine itself with an input (no CLI in between) and return its end."""
    with installed(sagemaker()):
        arn = sfn.start_execution(stateMachineArn=machine.arn, name=name, input=json.dumps(given))["executionArn"]
        return wait_for_end(sfn, arn)


def printed(text: str) -> Callable[[], bool]:
    """Whether `trainctl` has written `text` to standard error yet (capsys's buffer, read from another thread)."""
    return lambda: text in sys.stderr.getvalue()  # type: ignore[attr-defined]


def interrupt_when(condition: Callable[[], bool], taken: Callable[[], bool]) -> threading.Thread:
    """Ctrl-C in the main thread (where `trainctl` runs) once `condition()` holds, as a user would press it, and again
    every 5 s until `taken()` holds (at most 10 times). Python can lose a KeyboardInterrupt: one raised inside a
    finalizer (`__del__`, a weakref callback), which the garbage collector may run at any point of the main thread, is
    only reported ("Exception ignored in"). One press was lost once in a full run, and the followed run never ended.

    Use through the `ctrl_c` fixture, which makes sure SIGINT raises KeyboardInterrupt in this process.
    """
    import _thread

    def press() -> None:
        deadline = time.monotonic() + 30
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.01)
        for _ in range(10):
            _thread.interrupt_main()
            answered = time.monotonic() + 5
            while not taken() and time.monotonic() < answered:
                time.sleep(0.01)
            if taken():
                return

    thread = threading.Thread(target=press, daemon=True)
    thread.start()
    return thread


def _follow_answered() -> bool:
    """Whether `trainctl`'s follower has taken a Ctrl-C: it asks, or says it stopped following."""
    return any(text in sys.stderr.getvalue() for text in ("Stop the run too?", "stopped following"))  # type: ignore[attr-defined]


@pytest.fixture
def ctrl_c() -> Iterator[Callable[[Callable[[], bool]], threading.Thread]]:
    """`interrupt_when`, with Python's own SIGINT handler installed for the test.

    A process started in the background by a non-interactive shell inherits SIGINT ignored, and then
    `interrupt_main` does nothing: the followed run would never be interrupted and the test would never end.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield lambda condition: interrupt_when(condition, taken=_follow_answered)
    finally:
        signal.signal(signal.SIGINT, previous)
