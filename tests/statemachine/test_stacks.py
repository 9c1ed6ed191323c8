"""The synthesized workload stacks: definitions, substitutions, IAM scope, logging, notifications, nag, ASL."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.statemachine.conftest import NAMES, WORKLOADS
from compiler import placeholders as ph
from compiler import state_machine as sm

pytestmark = pytest.mark.synth
ROOT = Path(__file__).resolve().parents[2]
VALIDATE_ASL = Path(__file__).with_name("validate_asl.js")


def validate_asl(definitions: dict[str, Any]) -> dict[str, Any]:
    """asl-validator's verdict on each definition, from one Node process."""
    done = subprocess.run(["node", str(VALIDATE_ASL)], input=json.dumps(definitions), capture_output=True,
                          text=True, cwd=ROOT, check=True, timeout=300)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def synthesized(synthesized_app) -> dict[str, Any]:
    """The workload stacks of the session's one synthesized app (tests/synth.py); templates by env and stack id."""
    stacks = synthesized_app.workload_stacks
    templates = {name: {s.node.id: synthesized_app.templates[name][s.node.id] for s in group}
                 for name, group in stacks.items()}
    return {"outdir": synthesized_app.outdir, "stacks": stacks, "templates": templates}


def machines(synthesized: dict[str, Any], env: str) -> dict[str, dict[str, Any]]:
    """State machine resources of an environment by state machine name."""
    found = {}
    for template in synthesized["templates"][env].values():
        for resource in template["Resources"].values():
            if resource["Type"] == "AWS::StepFunctions::StateMachine":
                found[resource["Properties"]["StateMachineName"]] = resource
    return found


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_one_state_machine_per_workload_with_the_pure_definition(synthesized, env: str, specs) -> None:
    found = machines(synthesized, env)
    assert sorted(found) == sorted(sm.state_machine_name(env, n) for n in NAMES)
    if env == "dev":
        for name in NAMES:
            props = found[sm.state_machine_name(env, name)]["Properties"]
            assert props["DefinitionString"] == sm.definition_string(sm.build_definition(specs[name]))


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_every_placeholder_has_a_substitution(synthesized, env: str) -> None:
    for name, machine in machines(synthesized, env).items():
        props = machine["Properties"]
        needed = sm.deploy_time_names(props["DefinitionString"])
        assert needed == set(props["DefinitionSubstitutions"]), name
        assert not needed & ph.RUN_TIME, "run-time placeholders must be produced by the state machine itself"


def test_logging_tracing_and_role(synthesized) -> None:
    for template in synthesized["templates"]["dev"].values():
        resources = template["Resources"]
        for machine in (r for r in resources.values() if r["Type"] == "AWS::StepFunctions::StateMachine"):
            props = machine["Properties"]
            assert props["LoggingConfiguration"]["Level"] == "ALL"
            assert props["TracingConfiguration"] == {"Enabled": True}
            role = resources[props["RoleArn"]["Fn::GetAtt"][0]]["Properties"]
            [statement] = role["Policies"][0]["PolicyDocument"]["Statement"]
            base = WORKLOADS[props["StateMachineName"].removeprefix("dev-")].base_job_name
            for arn in statement["Resource"]:
                assert re.fullmatch(rf"arn:aws:sagemaker:us-east-1:111111111111:training-job/{re.escape(base)}"
                                    r"-\?{12}-\?+", arn), arn
            assert "*" not in json.dumps(statement["Resource"])
            assert sorted(statement["Action"]) == sorted([
                "sagemaker:CreateTrainingJob", "sagemaker:DescribeTrainingJob", "sagemaker:StopTrainingJob",
                "sagemaker:AddTags", "sagemaker:ListTags"])


def test_shared_policy_passes_only_the_execution_role_to_sagemaker(synthesized) -> None:
    runs = synthesized["templates"]["dev"]["Runs"]["Resources"]
    [policy] = [r for r in runs.values() if r["Type"] == "AWS::IAM::ManagedPolicy"]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    [passrole] = [s for s in statements if s["Action"] == "iam:PassRole"]
    assert passrole["Condition"] == {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}
    assert "Fn::ImportValue" in json.dumps(passrole["Resource"])  # the Access stack's execution role
    for statement in statements:
        if statement["Resource"] == "*":
            assert all(a.startswith(("logs:", "xray:")) for a in statement["Action"])


@pytest.mark.parametrize(("env", "emails"), [("dev", 0), ("prod", 1)])
def test_topic_is_encrypted_and_has_the_environment_subscribers(synthesized, env: str, emails: int) -> None:
    runs = synthesized["templates"][env]["Runs"]["Resources"]
    [topic] = [r for r in runs.values() if r["Type"] == "AWS::SNS::Topic"]
    assert "KmsMasterKeyId" in topic["Properties"]
    subs = [r for r in runs.values() if r["Type"] == "AWS::SNS::Subscription"]
    assert len(subs) == emails and all(s["Properties"]["Protocol"] == "email" for s in subs)
    [group] = [r for r in runs.values() if r["Type"] == "AWS::Logs::LogGroup"]
    assert "KmsKeyId" in group["Properties"]


def test_source_tarball_is_one_asset_per_stack(synthesized) -> None:
    for stack_id, template in synthesized["templates"]["dev"].items():
        if stack_id == "Runs":
            continue
        uris = {json.dumps(m["Properties"]["DefinitionSubstitutions"]["SourceDirS3Uri"])
                for m in template["Resources"].values() if m["Type"] == "AWS::StepFunctions::StateMachine"}
        reads = [r for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"]
        assert len(reads) == len(uris) >= 1


def test_source_file_name_is_the_tarball_object_name(tmp_path) -> None:
    # A network-isolated job finds its code at /opt/ml/input/data/code/<object name>: the name must be the key's.
    import aws_cdk as cdk
    from aws_cdk import aws_s3_assets as s3_assets

    from stacks.workloads import source_file_name

    tarball = tmp_path / "sourcedir.tar.gz"
    tarball.write_bytes(b"not really a tarball")
    stack = cdk.Stack(cdk.App(), "S", env=cdk.Environment(account="111111111111", region="us-east-1"))
    asset = s3_assets.Asset(stack, "Source", path=str(tarball))
    name = source_file_name(asset)
    assert name == asset.s3_object_key and name.endswith(".gz") and asset.asset_hash in name


def test_cdk_nag_has_no_unacknowledged_findings(synthesized) -> None:
    report = json.loads((synthesized["outdir"] / "validation-report.json").read_text())
    for plugin in report["pluginReports"]:
        assert plugin["violations"] == [], plugin["pluginName"]


def test_asl_validator_accepts_every_synthesized_definition(synthesized) -> None:
    definitions = {}
    for env in ("dev", "prod"):
        for name, machine in machines(synthesized, env).items():
            props = machine["Properties"]
            text = props["DefinitionString"]
            definitions[name] = json.loads(text)
            # What Step Functions receives: substitutions filled with values of the right shape.
            values = {k: f"arn:aws:sns:us-east-1:123456789012:x-{k}" for k in props["DefinitionSubstitutions"]}
            definitions[name + " (substituted)"] = json.loads(sm.substitute_definition(text, values))
    # A control: the validator must reject a definition with a dangling transition.
    broken = json.loads(json.dumps(next(iter(definitions.values()))))
    broken["States"]["Read input"]["Next"] = "No such state"
    definitions["control"] = broken
    results = validate_asl(definitions)
    assert not results.pop("control")["isValid"]
    assert {k: v["errors"] for k, v in results.items() if not v["isValid"]} == {}
    assert len(results) == 4 * len(NAMES)


def test_review_summary_reads_the_assembly(synthesized) -> None:
    from trainctl.summary import render_summary

    text = render_summary(synthesized["outdir"], dict(WORKLOADS))
    for env in ("dev", "prod"):
        assert f"### {env}" in text
    torchrun = WORKLOADS["gpt-torchrun-fsx"]
    hourly = 113.07 * torchrun.instance_count  # ml.p5.48xlarge list price in the catalog
    assert (f"| gpt-torchrun-fsx | ml.p5.48xlarge x {torchrun.instance_count} | {8 * torchrun.instance_count} "
            f"| torch_distributed | on | train: FSx /datasets/gpt-tokens | {hourly:,.2f} |") in text
    assert "AwsSolutions: passed, 0 unacknowledged findings" in text
    runs = sum(1 for _ in synthesized["templates"]["dev"])
    assert f"| dev/Runs | {len(synthesized['templates']['dev']['Runs']['Resources'])} |" in text
    assert runs >= 2


def test_review_summary_does_not_claim_a_clean_nag_without_a_report(synthesized, tmp_path) -> None:
    import shutil

    from trainctl.summary import nag_status

    copy = tmp_path / "cdk.out"
    shutil.copytree(synthesized["outdir"], copy)
    (copy / "validation-report.json").unlink()
    assert "0 unacknowledged" not in nag_status(copy)
    report = json.loads((synthesized["outdir"] / "validation-report.json").read_text())
    report["pluginReports"][-1]["violations"] = [{"ruleName": "AwsSolutions-S1"}]
    (copy / "validation-report.json").write_text(json.dumps(report))
    assert "AwsSolutions: FAILED, 1 unacknowledged findings" in nag_status(copy)
