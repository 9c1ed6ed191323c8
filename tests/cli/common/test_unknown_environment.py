"""Every command that takes `--env` answers a name cdk.json does not declare the same way: one line naming the
environments there, exit status 2 (wrong usage, as argparse answers a wrong argument), nothing on standard output,
and nothing looked up or started."""

from __future__ import annotations

import pytest

from tests.cli.conftest import WORKLOAD

MESSAGE = "unknown environment 'staging'; cdk.json declares dev, prod\n"


@pytest.mark.parametrize("argv", [
    ["start", WORKLOAD], ["runs", WORKLOAD], ["logs", WORKLOAD], ["stop", WORKLOAD],
    ["render", WORKLOAD], ["lookup-zones"], ["preflight"], ["smoke"],
])
def test_an_unknown_environment_is_one_line_and_a_usage_error(cli, argv: list[str]) -> None:
    result = cli(*argv, "--env", "staging")
    assert (result.code, result.out, result.err) == (2, "", MESSAGE)
