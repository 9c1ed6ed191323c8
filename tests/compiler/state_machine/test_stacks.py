"""The synthesized workload stacks: definitions, substitutions, each workload's own roles, logging, notifications,
nag, and the review summary that reads them.

asl-validator runs on every definition without synthesis: test_asl.py.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from compiler import state_machine as sm
from compiler.facts import placeholders as ph
from compiler.facts.summaries import WARNINGS_FILE
from tests.compiler.state_machine.conftest import NAMES, WORKLOADS
from tests.project import ENVIRONMENTS

pytestmark = pytest.mark.synth
ENVS = ("dev", "prod")


@pytest.fixture(scope="module")
def synthesized(synthesized_app) -> dict[str, Any]:
    """The workload stacks of the session's one synthesized app (tests/synth.py); templates by env and stack id."""
    stacks = {env: group.stacks for env, group in synthesized_app.platform.workload_stacks.items()}
    templates = {name: {s.node.id: synthesized_app.templates[name][s.node.id] for s in group}
                 for name, group in stacks.items()}
    return {"outdir": synthesized_app.outdir, "groups": synthesized_app.platform.workload_stacks,
            "templates": templates, "compiled": synthesized_app.platform.compiled}


def machines(synthesized: dict[str, Any], env: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Each workload state machine of an environment by name: (its resource, its stack's resources). The Runs
    stack's one state machine, the job reaper, is tests/platform/test_job_reaper.py's."""
    found = {}
    for stack_id, template in synthesized["templates"][env].items():
        if stack_id == "Runs":
            continue
        for resource in template["Resources"].values():
            if resource["Type"] == "AWS::StepFunctions::StateMachine":
                found[resource["Properties"]["StateMachineName"]] = (resource, template["Resources"])
    return found


def policies_of(resources: dict[str, Any], role_id: str) -> list[dict[str, Any]]:
    """The statements of the inline policies attached to a role of the same template."""
    return [s for r in resources.values() if r["Type"] == "AWS::IAM::Policy" and {"Ref": role_id} in r["Properties"]["Roles"]
            for s in r["Properties"]["PolicyDocument"]["Statement"]]


def job_arn_pattern(env: str, base: str) -> str:
    settings = ENVIRONMENTS[env]
    return rf"arn:aws:sagemaker:{settings.region}:{settings.account}:training-job/{re.escape(base.lower())}-\?{{12}}-\?+"


@pytest.mark.parametrize("env", ENVS)
def test_one_state_machine_per_workload_with_the_pure_definition(synthesized, env: str, specs) -> None:
    found = machines(synthesized, env)
    assert sorted(found) == sorted(sm.state_machine_name(env, n) for n in NAMES)
    if env == "dev":
        for name in NAMES:
            props = found[sm.state_machine_name(env, name)][0]["Properties"]
            assert props["DefinitionString"] == sm.definition_string(sm.build_definition(specs[name]))


@pytest.mark.parametrize("env", ENVS)
def test_every_placeholder_has_a_substitution(synthesized, env: str) -> None:
    for name, (machine, _) in machines(synthesized, env).items():
        props = machine["Properties"]
        needed = sm.deploy_time_names(props["DefinitionString"])
        assert needed == set(props["DefinitionSubstitutions"]), name
        assert not needed & ph.RUN_TIME, "run-time placeholders must be produced by the state machine itself"


@pytest.mark.parametrize("env", ENVS)
def test_each_state_machine_runs_and_passes_only_its_own_jobs_and_role(synthesized, env: str) -> None:
    for name, (machine, resources) in machines(synthesized, env).items():
        props = machine["Properties"]
        assert props["LoggingConfiguration"]["Level"] == "ALL"
        assert props["TracingConfiguration"] == {"Enabled": True}
        role_id = props["RoleArn"]["Fn::GetAtt"][0]
        (trust,) = resources[role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert name in json.dumps(trust["Condition"]["ArnEquals"]["aws:SourceArn"])
        statements = {s["Sid"]: s for s in policies_of(resources, role_id)}
        workload = WORKLOADS[name.removeprefix(f"{env}-")]
        # see below; the stall watchdog's log reads: test_run_loop_role.py
        watch = {"ReadJobLogs"} if workload.stall_watchdog else set()
        assert set(statements) == {"OwnTrainingJobs", "PassOwnExecutionRole", "ListOwnExecutions", *watch}
        base = workload.base_job_name
        arns = statements["OwnTrainingJobs"]["Resource"]
        for arn in arns if isinstance(arns, list) else [arns]:
            assert re.fullmatch(job_arn_pattern(env, base), arn), arn
        assert sorted(statements["OwnTrainingJobs"]["Action"]) == sorted([
            "sagemaker:CreateTrainingJob", "sagemaker:DescribeTrainingJob", "sagemaker:StopTrainingJob",
            "sagemaker:AddTags", "sagemaker:ListTags"])
        passed = statements["PassOwnExecutionRole"]
        assert passed["Condition"] == {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}
        assert passed["Resource"] == props["DefinitionSubstitutions"][ph.EXECUTION_ROLE_ARN]


@pytest.mark.parametrize("env", ENVS)
def test_each_state_machine_may_list_its_own_executions(synthesized, env: str) -> None:
    """The check for another run in progress (compiler/state_machine/concurrency.py) lists the machine's executions."""
    for name, (machine, resources) in machines(synthesized, env).items():
        assert '"Resource":"arn:aws:states:::aws-sdk:sfn:listExecutions"' in machine["Properties"]["DefinitionString"]
        role_id = machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]
        granted = [s for s in policies_of(resources, role_id) if "states:ListExecutions" in json.dumps(s["Action"])]
        assert granted, f"{name}: its role may not list its executions"
        for statement in granted:
            assert name in json.dumps(statement["Resource"]) and "*" not in json.dumps(statement["Resource"]), name


@pytest.mark.parametrize("env", ENVS)
def test_each_execution_role_writes_only_its_own_prefixes_for_its_own_jobs(synthesized, env: str) -> None:
    for name, (machine, resources) in machines(synthesized, env).items():
        workload = WORKLOADS[name.removeprefix(f"{env}-")]
        role_id = machine["Properties"]["DefinitionSubstitutions"][ph.EXECUTION_ROLE_ARN]["Fn::GetAtt"][0]
        (trust,) = resources[role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert trust["Principal"] == {"Service": "sagemaker.amazonaws.com"}
        arns = trust["Condition"]["ArnLike"]["aws:SourceArn"]
        for arn in arns if isinstance(arns, list) else [arns]:
            assert re.fullmatch(job_arn_pattern(env, workload.base_job_name), arn), arn
        statements = {s["Sid"]: s for s in policies_of(resources, role_id)}
        writes = json.dumps(statements["WriteOutput"]["Resource"])
        assert writes.endswith(f'/{workload.name}/*"]]}}') and "Fn::ImportValue" in writes
        assert statements["ListOwnOutputs"]["Condition"] == {"StringLike": {"s3:prefix": [f"{workload.name}/*"]}}
        if workload.checkpoints:
            assert json.dumps(statements["SyncCheckpoints"]["Resource"]).endswith(f'/{workload.name}/*"]]}}')
        for statement in statements.values():  # nothing on '*' but what the shared managed policies hold
            assert statement["Resource"] != "*", statement["Sid"]
        assert "PullImage" in statements and "*" not in json.dumps(statements["PullImage"]["Resource"])


def test_no_role_of_the_runs_stack_but_the_job_reapers_and_no_shared_pass_role(synthesized) -> None:
    for env in ENVS:
        runs = synthesized["templates"][env]["Runs"]["Resources"]
        roles = [k for k, r in runs.items() if r["Type"] == "AWS::IAM::Role"]
        assert len(roles) == 2 and all(k.startswith("JobReaper") for k in roles)  # its own, EventBridge's start
        assert "iam:PassRole" not in json.dumps(runs)


@pytest.mark.parametrize("env", ENVS)
def test_state_machines_may_publish_only_the_platform_run_metrics(synthesized, env: str) -> None:
    runs = synthesized["templates"][env]["Runs"]["Resources"]
    statements = [s for r in runs.values() if r["Type"] == "AWS::IAM::ManagedPolicy"
                  for s in r["Properties"]["PolicyDocument"]["Statement"] if "cloudwatch:PutMetricData" in str(s)]
    assert statements == [{"Sid": "RunMetrics", "Effect": "Allow", "Action": "cloudwatch:PutMetricData",
                           "Resource": "*", "Condition": {"StringEquals": {"cloudwatch:namespace": "TrainingPlatform"}}}]
    for name, (machine, resources) in machines(synthesized, env).items():
        role = resources[machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]]["Properties"]
        assert len(role["ManagedPolicyArns"]) == 4, name  # shared, log delivery, tracing, run metrics


@pytest.mark.parametrize("env", ENVS)
def test_topic_is_encrypted_and_has_the_environment_subscribers(synthesized, env: str) -> None:
    runs = synthesized["templates"][env]["Runs"]["Resources"]
    [topic] = [r for r in runs.values() if r["Type"] == "AWS::SNS::Topic"]
    assert "KmsMasterKeyId" in topic["Properties"]
    subs = [r for r in runs.values() if r["Type"] == "AWS::SNS::Subscription"]
    assert [s["Properties"]["Endpoint"] for s in subs] == list(ENVIRONMENTS[env].notification_emails)
    assert all(s["Properties"]["Protocol"] == "email" for s in subs)
    [group] = [r for r in runs.values() if r["Type"] == "AWS::Logs::LogGroup"]
    assert "KmsKeyId" in group["Properties"]
    assert group["Properties"]["RetentionInDays"] == ENVIRONMENTS[env].log_retention_days


def test_one_code_asset_per_distinct_bundle_and_stack(synthesized) -> None:
    groups = synthesized["groups"]["dev"]
    for shard in groups.shards:
        template = synthesized["templates"]["dev"][shard.node.id]
        uris = {json.dumps(m["Properties"]["DefinitionSubstitutions"][ph.SOURCE_DIR_S3_URI])
                for m in template["Resources"].values() if m["Type"] == "AWS::StepFunctions::StateMachine"
                and ph.SOURCE_DIR_S3_URI in m["Properties"]["DefinitionSubstitutions"]}
        bundles = {(w.code.source_dir, w.code.entry_point_path, w.code.dependencies)
                   for w in (WORKLOADS[n] for n in shard.workloads) if w.code is not None}
        assert len(uris) == len(bundles)


def test_source_file_name_is_the_tarball_object_name(tmp_path: Path) -> None:
    # A network-isolated job finds its code at /opt/ml/input/data/code/<object name>: the name must be the key's.
    import aws_cdk as cdk

    from platform_constructs.source_bundle import SourceBundle
    from stacks.workloads import source_file_name

    tarball = tmp_path / "sourcedir.tar.gz"
    tarball.write_bytes(b"not really a tarball")
    stack = cdk.Stack(cdk.App(), "S", env=cdk.Environment(account="111111111111", region="us-east-1"))
    bundle = SourceBundle(stack, "Source", path=tarball)
    name = source_file_name(bundle)
    assert name == bundle.object_key and name.endswith(".gz") and bundle.asset.asset_hash in name


def test_cdk_nag_has_no_unacknowledged_findings(synthesized) -> None:
    report = json.loads((synthesized["outdir"] / "validation-report.json").read_text())
    assert report["pluginReports"]
    for plugin in report["pluginReports"]:
        assert plugin["violations"] == [], plugin["pluginName"]


def test_review_summary_reads_the_assembly(synthesized, tmp_path: Path) -> None:
    from trainctl.project.summary import render_summary

    copy = tmp_path / "elsewhere" / "cdk.out"  # the assembly alone, far from any project: nothing else is read
    shutil.copytree(synthesized["outdir"], copy)
    text = render_summary(copy)
    assert text == render_summary(synthesized["outdir"]).replace(str(synthesized["outdir"]), str(copy))
    for env in ENVS:
        assert f"### {env}" in text
    torchrun = WORKLOADS["gpt-torchrun-fsx"]
    stack = synthesized["groups"]["dev"].stack_of()["gpt-torchrun-fsx"]
    hourly = 113.07 * torchrun.instance_count  # ml.p5.48xlarge list price in the catalog
    assert (f"| gpt-torchrun-fsx | {stack} | ml.p5.48xlarge x {torchrun.instance_count} | {8 * torchrun.instance_count}"
            f" | torch_distributed | on | train: FSx /datasets/gpt-tokens | {hourly:,.2f}"
            f"<br>fallback ml.p5e.48xlarge: {124.30 * torchrun.instance_count:,.2f}"  # catalog list prices
            f"<br>fallback ml.p4de.24xlarge: {47.11 * torchrun.instance_count:,.2f} |") in text
    assert "AwsSolutions: passed, 0 unacknowledged findings" in text
    assert not [row for row in text.splitlines() if row.startswith("| training-job-reaper")]  # the reaper: no workload
    assert "(no spec in workloads/)" not in text
    runs = synthesized["templates"]["dev"]["Runs"]["Resources"]
    assert f"| dev/Runs | {len(runs)} |" in text
    assert "Prices: us-east-1 list prices as of" in text and "Monthly budget: $2,000.00" in text  # cdk.json's dev
    assert "Warnings" not in text  # the shipped workloads warn of nothing (trainctl validate), and synth recorded so
    assert json.loads((synthesized["outdir"] / WARNINGS_FILE).read_text()) == {"warnings": []}


def test_the_summary_lists_the_warnings_synth_recorded_and_says_when_none_were(synthesized, tmp_path: Path) -> None:
    from trainctl.project.summary import render_summary

    copy = tmp_path / "cdk.out"
    shutil.copytree(synthesized["outdir"], copy)
    (copy / WARNINGS_FILE).write_text(json.dumps({"warnings": ["gpt-smddp: a warning"]}))
    assert render_summary(copy).endswith("#### Warnings\n\n- gpt-smddp: a warning")
    (copy / WARNINGS_FILE).unlink()  # an assembly an older app.py wrote
    assert "Warnings: not recorded in this assembly" in render_summary(copy)


def test_the_summary_of_an_unreadable_assembly_is_a_message(synthesized, tmp_path: Path, capsys) -> None:
    from trainctl.cli import main

    copy = tmp_path / "cdk.out"
    shutil.copytree(synthesized["outdir"], copy)
    next((copy / "assembly-dev").glob("*.template.json")).write_text("{cut short")
    assert main(["summary", "--cdk-out", str(copy)]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # standard output is the summary alone (scripts/synth.sh passes it on)
    assert err.startswith(f"{copy} could not be read as a cloud assembly (JSONDecodeError: ")
    assert err.rstrip().endswith("synthesize it again with `npx cdk synth`")
    for folder in copy.glob("assembly-*"):
        shutil.rmtree(folder)
    assert main(["summary", "--cdk-out", str(copy)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"{copy} holds no environment assembly (assembly-<env>/): was it synthesized by "
                              "app.py?\n")


def test_review_summary_does_not_claim_a_clean_nag_without_a_report(synthesized, tmp_path: Path) -> None:
    from trainctl.common.assembly import nag_status

    copy = tmp_path / "cdk.out"
    shutil.copytree(synthesized["outdir"], copy)
    (copy / "validation-report.json").unlink()
    assert "0 unacknowledged" not in nag_status(copy)
    report = json.loads((synthesized["outdir"] / "validation-report.json").read_text())
    report["pluginReports"][-1]["violations"] = [{"ruleName": "AwsSolutions-S1"}]
    (copy / "validation-report.json").write_text(json.dumps(report))
    assert "AwsSolutions: FAILED, 1 unacknowledged findings" in nag_status(copy)
