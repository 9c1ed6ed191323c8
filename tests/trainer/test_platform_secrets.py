"""The trainer's start reads the workload's secrets from Secrets Manager into its environment, and never prints them.

The job's environment holds only `TRAINING_PLATFORM_SECRET_ARN_<NAME>` (compiler/facts/secret_refs.py); moto's Secrets
Manager stands in for AWS (botocore builds and signs the real requests), and botocore's Stubber for its errors.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
from collections.abc import Iterator
from types import ModuleType

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from compiler.facts import secret_refs
from tests.trainer.conftest import TRAINING_DIR

REGION = "us-east-1"
VALUE = "hf_" + "Q" * 34  # a token-shaped value, to look for in everything printed
OTHER = "s3cr3t-pa55word-not-printed"


def _load() -> ModuleType:
    """training/platform_secrets as the job imports it: a top-level package beside train.py."""
    spec = importlib.util.spec_from_file_location("platform_secrets", TRAINING_DIR / "platform_secrets" / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Two secrets in moto's Secrets Manager; returns name -> ARN."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(key, "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        client = boto3.client("secretsmanager", region_name=REGION)
        arns = {"HF_TOKEN": client.create_secret(Name="hf-token", SecretString=VALUE)["ARN"],
                "DB_PASSWORD": client.create_secret(Name="db", SecretBinary=OTHER.encode())["ARN"]}
        yield arns


def test_the_prefix_is_the_compilers() -> None:
    assert _load().ENV_PREFIX == secret_refs.ENV_PREFIX


def test_resolve_sets_each_named_secret_and_prints_names_only(aws: dict[str, str],
                                                              capfd: pytest.CaptureFixture[str]) -> None:
    environ = {secret_refs.variable(name): arn for name, arn in aws.items()} | {"PATH": "/usr/bin"}
    names = _load().resolve(environ)
    assert names == ["DB_PASSWORD", "HF_TOKEN"]
    assert environ["HF_TOKEN"] == VALUE and environ["DB_PASSWORD"] == OTHER  # SecretBinary as UTF-8 text
    out, err = capfd.readouterr()
    assert "HF_TOKEN" in err and VALUE not in out + err and OTHER not in out + err


def test_without_secrets_nothing_is_called_and_nothing_printed(capfd: pytest.CaptureFixture[str]) -> None:
    def no_client(region: str) -> None:
        raise AssertionError("no secrets: no client")

    environ = {"PATH": "/usr/bin"}
    assert _load().resolve(environ, client_for=no_client) == []
    assert environ == {"PATH": "/usr/bin"} and capfd.readouterr() == ("", "")


def test_a_refused_read_names_the_secret_and_the_code_not_a_value() -> None:
    module = _load()
    arn = f"arn:aws:secretsmanager:{REGION}:111111111111:secret:hf-token-AbCdEf"
    client = boto3.client("secretsmanager", region_name=REGION, aws_access_key_id="a", aws_secret_access_key="b")
    with Stubber(client) as stub:
        stub.add_client_error("get_secret_value", service_error_code="AccessDeniedException",
                              service_message=f"not allowed, see {VALUE}", expected_params={"SecretId": arn})
        with pytest.raises(module.SecretsError) as error:
            module.resolve({secret_refs.variable("HF_TOKEN"): arn}, client_for=lambda region: client)
    message = str(error.value)
    assert "HF_TOKEN" in message and arn in message and "AccessDeniedException" in message
    assert VALUE not in message and error.value.__cause__ is None and error.value.__suppress_context__


def test_the_trainers_start_resolves_secrets_before_the_trainer_runs(aws: dict[str, str],
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capfd: pytest.CaptureFixture[str]) -> None:
    """train.py as SageMaker runs it: secrets are in os.environ when gptlm's main starts, and never printed."""
    import gptlm.launch
    import gptlm.shutdown

    seen: dict[str, str | None] = {}

    def main(argv: list[str]) -> int:
        seen.update(HF_TOKEN=__import__("os").environ.get("HF_TOKEN"), argv=" ".join(argv))
        return 0

    monkeypatch.setattr(gptlm.launch, "main", main)
    monkeypatch.setattr(gptlm.shutdown, "exit_process", lambda run, argv: run(argv))  # not os._exit in pytest
    monkeypatch.setenv(secret_refs.variable("HF_TOKEN"), aws["HF_TOKEN"])
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(sys, "argv", ["train.py", "--model", "tiny"])
    platform_secrets = _load()
    monkeypatch.setitem(sys.modules, "platform_secrets", platform_secrets)
    runpy.run_path(str(TRAINING_DIR / "train.py"), run_name="__main__")
    assert seen == {"HF_TOKEN": VALUE, "argv": "--model tiny"}
    out, err = capfd.readouterr()
    assert VALUE not in out + err


def test_the_trainers_start_stops_with_exit_code_2_when_a_secret_cannot_be_read(
        monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    with mock_aws():
        missing = f"arn:aws:secretsmanager:{REGION}:123456789012:secret:gone-AbCdEf"
        monkeypatch.setenv(secret_refs.variable("HF_TOKEN"), missing)
        monkeypatch.setitem(sys.modules, "platform_secrets", _load())
        with pytest.raises(SystemExit) as exit_:
            runpy.run_path(str(TRAINING_DIR / "train.py"), run_name="__main__")
    assert exit_.value.code == 2
    assert "error: reading secret HF_TOKEN" in capfd.readouterr().err


def test_another_entry_point_gets_the_resolver_beside_it_through_dependencies() -> None:
    """`dependencies: [../training/platform_secrets]` (the SDK's meaning: the folder beside the entry point) puts
    `import platform_secrets` in reach of an entry point with its own source_dir, such as the smoke test's."""
    from compiler.inputs import sourcedir

    bundle = sourcedir.scan(TRAINING_DIR / "smoke", TRAINING_DIR / "smoke" / "smoke.py",
                            (TRAINING_DIR / "platform_secrets",), TRAINING_DIR.parent)
    assert not bundle.problems
    names = {entry.arcname for entry in bundle.entries}
    assert {"smoke.py", "platform_secrets/__init__.py"} <= names
