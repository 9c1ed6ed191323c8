"""Every problem is one message that says what to do, exit status 1, nothing on standard output, no traceback."""

from __future__ import annotations

import pytest

from tests.cli.conftest import NOT_DEPLOYED, WORKLOAD

DEV_ARN = f"arn:aws:states:us-east-1:111111111111:execution:dev-{WORKLOAD}:no-such-run"


def refused(result, *expected: str) -> None:
    assert (result.code, result.out) == (1, ""), result.err
    assert "Traceback" not in result.err
    for text in expected:
        assert text in result.err


@pytest.mark.parametrize("command", [["start"], ["runs"], ["logs"], ["stop"]])
def test_a_workload_that_is_not_deployed_gets_the_deploy_hint(command: list[str], cli, deployed) -> None:
    refused(cli(*command, NOT_DEPLOYED, "--env", "dev"),
            f"workload {NOT_DEPLOYED} is not deployed to dev: there is no state machine dev-{NOT_DEPLOYED} in account "
            "111111111111, us-east-1. Deploy it with `npx cdk deploy 'dev/*'`")


def test_credentials_of_another_account_get_the_aws_module_message(cli, deployed, monkeypatch) -> None:
    monkeypatch.setenv("MOTO_ACCOUNT_ID", "999999999999")
    refused(cli("start", WORKLOAD, "--env", "dev"),
            "the credentials are for account 999999999999, but environment dev is account 111111111111 (cdk.json); "
            "switch profile (--profile or AWS_PROFILE)")


def test_dev_credentials_for_prod_are_refused(cli, deployed) -> None:
    refused(cli("runs", WORKLOAD, "--env", "prod"),
            "the credentials are for account 111111111111, but environment prod is account 222222222222")


def test_no_credentials(cli, deployed, monkeypatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    refused(cli("runs", WORKLOAD, "--env", "dev"),
            "no AWS credentials found; configure them for account 111111111111 (environment dev)")


def test_an_unknown_profile(cli, deployed) -> None:
    refused(cli("stop", DEV_ARN, "--profile", "nope"), "no AWS profile named 'nope'")


@pytest.mark.parametrize(("argv", "expected"), [
    (["runs", "gpt-smdp", "--env", "dev"], "no such workload; did you mean 'gpt-smddp'?"),
    (["logs", f"{WORKLOAD}/no-such-run", "--env", "dev"],
     f"{DEV_ARN}: no such execution of {WORKLOAD} in dev; list recent runs"),
    (["logs", DEV_ARN], "no such execution"),
    (["stop", DEV_ARN], "no such execution"),
    (["logs", WORKLOAD], "is not an execution ARN: name the environment too, e.g. `--env dev`"),
    (["logs", DEV_ARN, "--env", "prod"], "but environment prod is account 222222222222, us-west-2"),
    (["logs", "arn:aws:states:eu-west-1:333333333333:execution:x:y"],
     "no environment in cdk.json is account 333333333333 in eu-west-1"),
    (["stop", "arn:aws:states:us-east-1:111111111111:stateMachine:dev-x"], "is not a Step Functions execution ARN"),
    (["logs", f"{WORKLOAD}/bad:name", "--env", "dev"], "an execution name has 1 to 80 characters"),
])
def test_problems_are_messages(argv: list[str], expected: str, cli, deployed) -> None:
    refused(cli(*argv), expected)


def test_execution_not_found_says_where_to_look(cli, deployed) -> None:
    refused(cli("logs", f"{WORKLOAD}/never-started", "--env", "dev"),
            f"list recent runs with `trainctl runs {WORKLOAD} --env dev`")
