"""`trainctl start --follow` and `trainctl logs`: job status, every host's logs in time order, the run's outcome."""

from __future__ import annotations

import io
import re

from tests.cli.cloud import expected_log
from tests.cli.conftest import WORKLOAD, printed, sagemaker, wait_for_end
from tests.compiler.state_machine.sagemaker_sync import Outcome, capacity_error, fails, installed
from trainctl.common.aws import Clients
from trainctl.run.follow import Follower, JobWatch, LogLine, LogTail
from trainctl.run.history import Launch

JOB = re.compile(rf"{WORKLOAD}-[0-9a-f]{{12}}-\d")
OOM = "AlgorithmError: ExecuteUserScriptError: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"


def unmarked(out: str) -> list[str]:
    """Printed log lines without the metric marks."""
    return [re.sub(r"  \[metric [^\]]*\]$", "", line) for line in out.splitlines()]


def lines_with(text: str, err: str) -> list[str]:
    return [line for line in err.splitlines() if text in line]


def test_follow_prints_transitions_and_both_hosts_logs_in_time_order(cli, deployed) -> None:
    fake = sagemaker()
    with installed(fake):
        result = cli("start", WORKLOAD, "--env", "dev", "--name", "follow-ok", "--follow", "--interval", "0")
    assert result.code == 0, result.err
    [job] = [c["TrainingJobName"] for c in fake.created]
    arn, *logs = result.out.splitlines()
    assert arn.endswith(":execution:dev-gpt-smddp:follow-ok")
    # stdout: the ARN, then every line of both hosts, merged by timestamp (each stream was written in one go)
    assert unmarked("\n".join(logs)) == expected_log("complete", "", 2)
    assert {line.split("]")[0] for line in logs} == {"[algo-1", "[algo-2"}
    # the metric lines show what SageMaker reads from them
    assert "[algo-1] step 100 train_loss=3.412 tokens_per_sec=181234.5 step_time_ms=361.2  [metric train:loss=3.412 " \
           "train:tokens_per_sec=181234.5 train:step_time_ms=361.2]" in logs
    assert "[algo-1] step 200 train_loss=2.917 val_loss=3.004  [metric train:loss=2.917 validation:loss=3.004]" in logs
    # stderr: the job with its console link, each status transition once and in order, the outcome
    assert f"job {job} on 2 x ml.p4d.24xlarge" in result.err
    assert f"https://us-east-1.console.aws.amazon.com/sagemaker/home?region=us-east-1#/jobs/{job}" in result.err
    statuses = [line.split(": ", 1)[1].split(" - ")[0] for line in lines_with(f" {job}: ", result.err)
                if re.match(r"\d\d:\d\d:\d\d ", line)]
    assert statuses == ["Starting", "Downloading", "Training", "Uploading", "Completed"]
    assert lines_with(f"job {job}: Completed (billable 1h00m)", result.err)
    assert "run follow-ok SUCCEEDED: job " + job + " Completed after 1 attempt(s), estimated $" in result.err
    assert " at us-east-1 list prices as of " in result.err  # whose prices: the environment's region's (issue 25)


def test_follow_of_a_failing_job_exits_1_with_the_reason(cli, deployed) -> None:
    fake = sagemaker(fails(OOM))
    with installed(fake):
        result = cli("start", WORKLOAD, "--env", "dev", "--name", "follow-fails", "--follow", "--interval", "0")
    assert result.code == 1
    [job] = [c["TrainingJobName"] for c in fake.created]
    assert unmarked("\n".join(result.out.splitlines()[1:])) == expected_log("fail", OOM, 2)
    assert f"job {job}: Failed: {OOM}" in result.err
    assert (f"run follow-fails FAILED: TrainingJobFailed: {WORKLOAD} {job} Failed after 1 attempt(s): {OOM}"
            in result.err)


def test_follow_shows_the_relaunch_after_a_capacity_failure(cli, deployed) -> None:
    fake = sagemaker(capacity_error())
    with installed(fake):
        result = cli("start", WORKLOAD, "--env", "dev", "--name", "follow-relaunch", "--follow", "--interval", "0")
    assert result.code == 0, result.err
    first, second = (c["TrainingJobName"] for c in fake.created)
    assert first.endswith("-0") and second.endswith("-1") and first[:-2] == second[:-2]
    assert f"job {first} on 2 x ml.p4d.24xlarge" in result.err
    assert f"relaunch 1: job {second} on 2 x ml.p4d.24xlarge" in result.err
    assert lines_with(f"job {first}: Failed: CapacityError", result.err)
    assert lines_with(f"job {second}: Completed", result.err)
    assert result.err.index(first + ": Failed") < result.err.index("relaunch 1")
    # the capacity failure left no logs; the relaunch's hosts did
    assert unmarked("\n".join(result.out.splitlines()[1:])) == expected_log("complete", "", 2)
    assert f"run follow-relaunch SUCCEEDED: job {second} Completed after 2 attempt(s)" in result.err


def test_logs_of_a_finished_run_by_arn_by_name_and_latest(cli, deployed, sfn) -> None:
    with installed(sagemaker()):
        started = cli("start", WORKLOAD, "--env", "dev", "--name", "logs-later")
        arn = started.out.strip()
        wait_for_end(sfn, arn)
    expected = expected_log("complete", "", 2)
    for run in ([arn], [f"{WORKLOAD}/logs-later", "--env", "dev"], [WORKLOAD, "--env", "dev"]):
        result = cli("logs", *run)
        assert result.code == 0, result.err
        assert unmarked(result.out) == expected
        assert "run logs-later (SUCCEEDED)" in result.err
    followed = cli("logs", arn, "--follow", "--interval", "0")
    assert followed.code == 0
    assert unmarked(followed.out) == expected
    assert "run logs-later SUCCEEDED" in followed.err


def test_ctrl_c_without_a_terminal_leaves_the_run_going_and_stop_ends_it(cli, deployed, sfn, monkeypatch, ctrl_c) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    fake = sagemaker(Outcome("running"))
    with installed(fake):
        ctrl_c(printed("Training - Training image download completed"))
        result = cli("start", WORKLOAD, "--env", "dev", "--name", "ctrl-c-leave", "--follow", "--interval", "0.01")
        arn = result.out.splitlines()[0]
        assert result.code == 130
        assert ("stopped following; the run goes on: stop it with `trainctl stop gpt-smddp/ctrl-c-leave --env dev`, "
                "follow it again with `trainctl logs gpt-smddp/ctrl-c-leave --env dev --follow`") in result.err
        assert sfn.describe_execution(executionArn=arn)["status"] == "RUNNING"
        assert lines_with("Training - Training image download completed", result.err)
        # what was read is printed, held lines included, in time order
        shown, expected = unmarked("\n".join(result.out.splitlines()[1:])), expected_log("running", "", 2)
        assert shown == [line for line in expected if line in shown]
        stopped = cli("stop", WORKLOAD, "--env", "dev")  # its one running run
        assert (stopped.code, stopped.out.strip()) == (0, arn)
        assert "the environment's job reaper stops its training job" in stopped.err
        ended = wait_for_end(sfn, arn)
    assert ended["status"] == "ABORTED"
    again = cli("stop", arn)
    assert again.code == 0
    assert "already ended (ABORTED): nothing to stop" in again.err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_ctrl_c_at_a_terminal_asks_and_stops_the_run(cli, deployed, sfn, monkeypatch, ctrl_c) -> None:
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    fake = sagemaker(Outcome("running"))
    with installed(fake):
        ctrl_c(printed("Training - Training image download completed"))
        result = cli("start", WORKLOAD, "--env", "dev", "--name", "ctrl-c-stop", "--follow", "--interval", "0.01")
        arn = result.out.splitlines()[0]
        assert result.code == 130
        assert "Stop the run too? Its training job is stopped with it. [y/N]" in result.err
        assert f"stopping {arn}" in result.err
        ended = wait_for_end(sfn, arn)
    assert ended["status"] == "ABORTED"


def test_ctrl_c_at_a_terminal_answered_no_leaves_it(cli, deployed, sfn, monkeypatch, ctrl_c) -> None:
    monkeypatch.setattr("sys.stdin", Terminal("\n"))
    fake = sagemaker(Outcome("running"))
    with installed(fake):
        ctrl_c(printed("Training - Training image download completed"))
        result = cli("start", WORKLOAD, "--env", "dev", "--name", "ctrl-c-no", "--follow", "--interval", "0.01")
        arn = result.out.splitlines()[0]
        assert result.code == 130
        assert "left running: stop it with `trainctl stop gpt-smddp/ctrl-c-no --env dev`" in result.err
        assert sfn.describe_execution(executionArn=arn)["status"] == "RUNNING"
        assert cli("stop", f"{WORKLOAD}/ctrl-c-no", "--env", "dev").code == 0
        assert wait_for_end(sfn, arn)["status"] == "ABORTED"


def test_lines_wait_for_every_host_then_come_in_time_order(aws, dev) -> None:
    """A host whose stream appears late still gets its earlier lines printed first; a silent host delays no one
    longer than the hold."""
    now = [0.0]
    tail = LogTail(Clients(dev, None), hold=5, clock=lambda: now[0])
    fake, job = sagemaker(), "tail-test-job"
    fake.write_logs(job, {"algo-2": [(10, "b1"), (30, "b2")]})
    assert tail.poll(job, hosts=2, complete=False) == []  # algo-1 has logged nothing yet: all of algo-2 waits
    fake.write_logs(job, {"algo-1": [(5, "a1"), (20, "a2")]})
    ready = tail.poll(job, hosts=2, complete=False)
    assert [(line.host, line.message) for line in ready] == [("algo-1", "a1"), ("algo-2", "b1"), ("algo-1", "a2")]
    now[0] = 4.9
    assert tail.poll(job, hosts=2, complete=False) == []  # b2 (t=30) is later than all algo-1 has logged
    now[0] = 5.0
    assert [line.message for line in tail.poll(job, hosts=2, complete=False)] == ["b2"]  # held long enough
    fake.write_logs(job + "-2", {"algo-1": [(1, "c1")]})
    assert [line.message for line in tail.poll(job + "-2", hosts=2, complete=True)] == ["c1"]  # the job is over


HOSTILE = "AlgorithmError: \x1b]0;owned\x07\x1b[2J\rRuntimeError: \u202eok"


def test_a_hostile_failure_reason_is_shown_escaped_never_obeyed(cli, deployed) -> None:
    """Probe (issue 35): a job's FailureReason (its code writes /opt/ml/output/failure) with an OSC title change, a
    screen clear, a carriage return and a bidi override reaches stderr with each control escaped."""
    fake = sagemaker(fails(HOSTILE))
    with installed(fake):
        result = cli("start", WORKLOAD, "--env", "dev", "--name", "follow-hostile", "--follow", "--interval", "0")
    assert result.code == 1
    [job] = [c["TrainingJobName"] for c in fake.created]
    shown = "AlgorithmError: \\x1b]0;owned\\x07\\x1b[2J\\rRuntimeError: \\u202eok"
    assert f"job {job}: Failed: {shown}" in result.err
    assert f"run follow-hostile FAILED: TrainingJobFailed: {WORKLOAD} {job} Failed after 1 attempt(s): {shown}" \
           in result.err
    assert not any(c in result.err + result.out for c in "\x1b\x07\r\u202e")


def test_a_log_line_of_several_lines_prints_each_with_its_host_and_escaped() -> None:
    """A line may hold newlines (one CloudWatch event): each printed line carries the host that wrote it, so a forged
    `[algo-2]` shows as algo-1's, and its controls are escaped."""
    out = io.StringIO()
    follower = Follower(None, None, "arn", interval=0, out=out, err=io.StringIO())  # type: ignore[arg-type]
    watch = JobWatch(Launch("job-0", "ml.p4d.24xlarge", 2), attempt=1)
    follower._emit(watch, [LogLine(1, "algo-1", "step 1\n[algo-2] all good\x1b[8m hidden\n\tdone")])
    assert out.getvalue().splitlines() == ["[algo-1] step 1", "[algo-1] [algo-2] all good\\x1b[8m hidden",
                                           "[algo-1] \tdone"]
