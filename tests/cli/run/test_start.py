"""`trainctl start`: the execution input the state machine expects, and the same refusals, before anything starts."""

from __future__ import annotations

import argparse
import json

import pytest

from compiler.compilation.overrides import OverridePolicy
from compiler.compilation.request import TAG_EXECUTION
from tests.cli.conftest import WORKLOAD, executions, run_directly, sagemaker, wait_for_end
from tests.compiler.state_machine.harness import expected_request
from tests.compiler.state_machine.sagemaker_sync import installed
from tests.project import loaded
from trainctl.common import overrides
from trainctl.run import follow, resolve


def policy() -> OverridePolicy:
    return OverridePolicy.of({w.name: w for w in loaded().workloads("dev")}[WORKLOAD], "us-east-1")  # dev's region


def test_start_sends_the_overrides_as_the_state_machine_expects(cli, deployed, sfn, dev) -> None:
    fake = sagemaker()
    with installed(fake):
        result = cli("start", WORKLOAD, "--env", "dev", "-p", "learning_rate=0.0003", "-p", "model=gpt-125m",
                     "-p", "parallelism=ddp", "--instance-count", "1", "--max-run", "3600", "--name", "start-valid")
        assert result.code == 0, result.err
        arn = result.out.strip()
        described = wait_for_end(sfn, arn)
    assert arn == f"arn:aws:states:us-east-1:111111111111:execution:dev-{WORKLOAD}:start-valid"
    given = {"hyperparameters": {"learning_rate": 0.0003, "model": "gpt-125m", "parallelism": "ddp"},
             "instance_count": 1, "max_run": 3600}
    assert json.loads(described["input"]) == given
    assert described["status"] == "SUCCEEDED", described.get("cause")
    # the one job got the compiled request with exactly these overrides
    [request] = fake.calls
    assert request == expected_request(deployed, request["TrainingJobName"], arn, given)
    assert {"Key": TAG_EXECUTION, "Value": arn} in request["Tags"]
    assert f"https://us-east-1.console.aws.amazon.com/states/home?region=us-east-1#/v2/executions/details/{arn}" \
        in result.err
    assert "follow it with `trainctl logs gpt-smddp/start-valid --env dev --follow`" in result.err


def test_start_without_overrides_sends_an_empty_object(cli, deployed, sfn) -> None:
    with installed(sagemaker()):
        result = cli("start", WORKLOAD, "--env", "dev")
        assert result.code == 0, result.err
        described = wait_for_end(sfn, result.out.strip())
    assert described["input"] == "{}"
    assert described["status"] == "SUCCEEDED"
    assert described["name"].count("-") >= 3  # <user>-<date>-<time>-<hex>


def test_a_string_override_stays_text_and_typed_values_are_json(cli, deployed, sfn) -> None:
    with installed(sagemaker()):
        result = cli("start", WORKLOAD, "--env", "dev", "-p", "model=10", "-p", "max_steps=20",
                     "--name", "start-typed")
        assert result.code == 0, result.err
        described = wait_for_end(sfn, result.out.strip())
    assert json.loads(described["input"]) == {"hyperparameters": {"model": "10", "max_steps": 20}}


REFUSED = {
    "count above max_instance_count": (["--instance-count", "3"], {"instance_count": 3}, "count"),
    "max_run above the spec's": (["--max-run", "86401"], {"max_run": 86401}, "max_run"),
    "unknown hyperparameter": (["-p", "dropout=0.1"], {"hyperparameters": {"dropout": 0.1}}, "hp_keys"),
    "wrong type": (["-p", "max_steps=ten"], {"hyperparameters": {"max_steps": "ten"}}, "hp_value_type"),
    "shell text": (["-p", "model=x;cmd;echo"], {"hyperparameters": {"model": "x;cmd;echo"}}, "hp_unsafe.model"),
    "option text": (["-p", "model=--checkpoint_dir=/tmp"], {"hyperparameters": {"model": "--checkpoint_dir=/tmp"}},
                    "hp_unsafe.model"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_locally_with_the_state_machines_own_message(case: str, cli, deployed, sfn) -> None:
    argv, given, key = REFUSED[case]
    before = executions(sfn, deployed)
    result = cli("start", WORKLOAD, "--env", "dev", *argv, "--name", f"refused-{list(REFUSED).index(case)}")
    assert result.code == 1
    assert result.out == ""
    message = policy().messages()[key]
    assert f"refused: {message}" in result.err
    assert "nothing was started" in result.err
    assert executions(sfn, deployed) == before
    # the state machine, given the same input, refuses it with the same words
    ended = run_directly(sfn, deployed, given, f"direct-{list(REFUSED).index(case)}")
    assert (ended["status"], ended["error"], ended["cause"]) == ("FAILED", "InvalidInput", message)


def test_a_value_too_long_for_sagemaker_is_refused_locally(cli, deployed, sfn) -> None:
    long = "x" * 2600
    before = executions(sfn, deployed)
    result = cli("start", WORKLOAD, "--env", "dev", "-p", f"model={long}")
    assert result.code == 1
    assert f"refused: {policy().messages()['hp_value_length']}" in result.err
    assert executions(sfn, deployed) == before
    # the state machine cannot measure strings: SageMaker refuses the request, reported as invalid input
    ended = run_directly(sfn, deployed, {"hyperparameters": {"model": long}}, "direct-too-long")
    assert (ended["status"], ended["error"]) == ("FAILED", "InvalidInput")
    assert ended["cause"].startswith("SageMaker refused the request")


@pytest.mark.parametrize(("argv", "expected"), [
    (["-p", "learning_rate"], "-p 'learning_rate': write NAME=VALUE"),
    (["-p", "model=a", "-p", "model=b"], "-p model: given twice"),
    (["--name", "has space"], "an execution name has 1 to 80 characters"),
    (["--interval", "-1"], "--interval: give a number of seconds from 0 to 3600"),
    (["--interval", "3600.001"], "--interval: give a number of seconds from 0 to 3600"),
    (["--interval", "nan"], "--interval: give a number of seconds from 0 to 3600"),
    (["--interval", "inf"], "--interval: give a number of seconds from 0 to 3600"),
    (["--name", ""], "--name '': an execution name has 1 to 80 characters"),
    (["--name", "x" * 81], "an execution name has 1 to 80 characters"),
    (["--name", "caf\u00e9\u0085"], "an execution name has 1 to 80 characters"),
    (["-p", "max_steps=" + "[" * 101 + "]" * 101], "-p max_steps: the value is nested more than 100 levels deep"),
    (["-p", "max_steps=" + "[" * 5000 + "]" * 5000], "-p max_steps: the value is nested more than 100 levels deep"),
    (["-p", "max_steps=" + '{"a":' * 101 + "1" + "}" * 101], "-p max_steps: the value is nested more than 100 levels"),
    (["-p", "learning_rate=1.8e308"], "-p learning_rate: 1.8e308 is beyond a 64-bit floating-point number's range"),
    (["-p", "learning_rate=[1,-1e999]"], "-p learning_rate: -1e999 is beyond a 64-bit floating-point number's range"),
])
def test_bad_command_lines_are_messages(argv: list[str], expected: str, cli, deployed, sfn) -> None:
    before = executions(sfn, deployed)
    result = cli("start", WORKLOAD, "--env", "dev", *argv)
    assert (result.code, result.out) == (1, "")
    assert expected in result.err
    assert "Traceback" not in result.err
    assert executions(sfn, deployed) == before


def test_an_existing_name_is_refused(cli, deployed, sfn) -> None:
    with installed(sagemaker()):
        first = cli("start", WORKLOAD, "--env", "dev", "--name", "start-twice")
        wait_for_end(sfn, first.out.strip())
        second = cli("start", WORKLOAD, "--env", "dev", "--name", "start-twice", "--max-run", "60")
    assert second.code == 1
    assert "an execution named start-twice already exists" in second.err


@pytest.mark.parametrize("seconds", [0.0, 0.01, 3600.0])
def test_intervals_from_0_to_an_hour_are_taken(seconds: float) -> None:
    follow.check_interval(argparse.Namespace(interval=seconds))  # the boundary the refusals above stop just past


@pytest.mark.parametrize("name", ["x", "x" * 80, "caf\u00e9-run_1.2"])
def test_execution_names_of_1_to_80_characters_are_taken(name: str) -> None:
    """Step Functions StartExecution: a name of 1 to 80 characters; the refusals above are just past each end."""
    resolve.check_execution_name(name)


def test_a_value_nested_100_levels_is_read_and_left_to_the_policy() -> None:
    assert overrides.parse_value("[" * 100 + "]" * 100, "structure") == json.loads("[" * 100 + "]" * 100)
    assert overrides.parse_value('{"a":' * 100 + "1" + "}" * 100, "structure") == json.loads('{"a":' * 100 + "1" + "}" * 100)
    assert overrides.parse_value("null", "any") is None
    assert overrides.parse_value("not json", "integer") == "not json"


def test_the_largest_double_is_a_number_and_python_only_words_stay_text() -> None:
    """RFC 8259's numbers as IEEE 754 doubles hold them (the largest finite one: 1.7976931348623157e308; the
    refusals above are just past it); NaN, Infinity and -Infinity are no JSON values, so they stay text, as any
    other word, and the input `trainctl start` sends or echoes is JSON."""
    assert overrides.parse_value("1.7976931348623157e308", "number") == 1.7976931348623157e308
    assert overrides.parse_value("-1.7976931348623157e308", "number") == -1.7976931348623157e308
    for word in ("NaN", "Infinity", "-Infinity"):
        assert overrides.parse_value(word, "number") == word
    assert overrides.parse_value("[NaN]", "structure") == "[NaN]"
