"""`trainctl runs` and `trainctl stop`: the table of recent runs, and stopping the one meant."""

from __future__ import annotations

import dataclasses
import re
import time

from compiler import state_machine as sm
from compiler.facts import catalog
from tests.cli.conftest import WORKLOAD, sagemaker, wait_for_end
from tests.compiler.state_machine.sagemaker_sync import Outcome, capacity_error, fails, installed

HEADER = ["NAME", "STATUS", "STARTED (UTC)", "DURATION", "JOBS", "INSTANCES", "EST. COST"]


def rows(out: str) -> list[dict[str, str]]:
    header, *lines = out.splitlines()
    assert re.split(r"\s{2,}", header) == HEADER
    return [dict(zip(HEADER, re.split(r"\s{2,}", line), strict=True)) for line in lines]


def wait_for_jobs(fake, count: int) -> None:
    deadline = time.monotonic() + 30
    while len(fake.created) < count:
        assert time.monotonic() < deadline, "no job was created"
        time.sleep(0.01)


def test_runs_lists_status_jobs_instances_and_cost_newest_first(cli, deployed, sfn) -> None:
    with installed(sagemaker(fails("AlgorithmError: exit code 1"))):
        failed = cli("start", WORKLOAD, "--env", "dev", "--name", "runs-failed").out.strip()
        wait_for_end(sfn, failed)
    with installed(sagemaker()) as fake:
        succeeded = cli("start", WORKLOAD, "--env", "dev", "--name", "runs-ok").out.strip()
        wait_for_end(sfn, succeeded)
        ok_job = fake.created[0]["TrainingJobName"]
    fake = sagemaker(Outcome("running"), Outcome("running"))
    with installed(fake):
        running = cli("start", WORKLOAD, "--env", "dev", "--name", "runs-running").out.strip()
        wait_for_jobs(fake, 1)
        result = cli("runs", WORKLOAD, "--env", "dev", "--limit", "3")

        # A second run while one is in progress ends at once (the spec does not allow concurrent runs) ...
        refused = cli("start", WORKLOAD, "--env", "dev", "--name", "runs-refused").out.strip()
        ended = wait_for_end(sfn, refused)
        assert ended["status"] == "FAILED" and ended["error"] == "AlreadyRunning", ended
        assert ended["cause"] == (f"another run of {WORKLOAD} is in progress ({running}); one run at a time: wait "
                                  "for it, or stop it with trainctl stop, then start again"), ended
        assert len(fake.created) == 1  # ... without creating a job

        # ... unless it does: two running, and `stop WORKLOAD` will not guess which one.
        side_by_side = sm.substitute_definition(sm.definition_string(sm.build_definition(
            dataclasses.replace(deployed.spec, concurrent_runs=True))), deployed.values)
        sfn.update_state_machine(stateMachineArn=deployed.arn, definition=side_by_side)
        try:
            second = cli("start", WORKLOAD, "--env", "dev", "--name", "runs-running-2").out.strip()
            wait_for_jobs(fake, 2)
            ambiguous = cli("stop", WORKLOAD, "--env", "dev")
        finally:
            sfn.update_state_machine(stateMachineArn=deployed.arn, definition=deployed.text)
        assert ambiguous.code == 1
        assert (f"2 runs of {WORKLOAD} in dev are running ({WORKLOAD}/runs-running-2, {WORKLOAD}/runs-running); "
                "name one as WORKLOAD/NAME") in ambiguous.err
        for arn in (running, second):
            assert cli("stop", arn).code == 0
            assert wait_for_end(sfn, arn)["status"] == "ABORTED"

    assert result.code == 0, result.err
    table = rows(result.out)
    assert [r["NAME"] for r in table] == ["runs-running", "runs-ok", "runs-failed"]
    by_name = {r["NAME"]: r for r in table}
    rate = catalog.hourly_cost("ml.p4d.24xlarge", 2, "us-east-1")  # dev's region
    assert rate is not None
    assert by_name["runs-ok"]["STATUS"] == "SUCCEEDED"
    assert by_name["runs-ok"]["JOBS"] == ok_job
    assert by_name["runs-ok"]["INSTANCES"] == "2 x ml.p4d.24xlarge"
    assert by_name["runs-ok"]["EST. COST"] == f"${rate * 3600 / 3600:.2f}"  # billable 3600 s
    assert by_name["runs-failed"]["STATUS"] == "FAILED (TrainingJobFailed)"
    assert by_name["runs-failed"]["EST. COST"] == f"${rate * 120 / 3600:.2f}"  # billable 120 s
    assert by_name["runs-running"]["STATUS"] == "RUNNING"
    assert by_name["runs-running"]["EST. COST"] == "-"
    assert "EST. COST: billable time x us-east-1 list prices as of " in result.err  # dev's region (issue 25)
    assert by_name["runs-running"]["DURATION"].endswith("so far")
    assert re.fullmatch(rf"{WORKLOAD}-[0-9a-f]{{12}}-0", by_name["runs-running"]["JOBS"])
    for row in table:
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", row["STARTED (UTC)"])


def test_runs_shows_every_job_of_a_relaunched_run(cli, deployed, sfn) -> None:
    fake = sagemaker(capacity_error())
    with installed(fake):
        arn = cli("start", WORKLOAD, "--env", "dev", "--name", "runs-relaunched").out.strip()
        wait_for_end(sfn, arn)
    result = cli("runs", WORKLOAD, "--env", "dev", "--limit", "1")
    [row] = rows(result.out)
    assert row["NAME"] == "runs-relaunched"
    assert row["JOBS"] == ", ".join(c["TrainingJobName"] for c in fake.created)
    assert row["STATUS"] == "SUCCEEDED"


def test_runs_refuses_a_limit_below_one(cli, deployed) -> None:
    result = cli("runs", WORKLOAD, "--env", "dev", "--limit", "0")
    assert (result.code, result.out) == (1, "")
    assert "--limit" in result.err
