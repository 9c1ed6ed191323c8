"""`trainctl review`: what a change does, compared by the CDK's own diff engine, with stateful losses loud.

The base is the session's synthesized app (the repository as it is); the head is a copy of the project with three
ordinary changes, synthesized by the same `build_app`. The last test runs the command itself on a small git
repository, as the pull-request workflow does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.compilation.describe import METADATA_KEY
from compiler.facts.summaries import WARNINGS_FILE
from compiler.inputs.project import Project
from stacks.app import build_app
from tests.project import ROOT
from trainctl.cli import main
from trainctl.review.assembly import Assembly, read_assembly
from trainctl.review.changes import permission_changes, workload_changes
from trainctl.review.findings import blocked_exports, losses
from trainctl.review.report import render
from trainctl.review.template_diff import ValueChange, template_diffs

pytestmark = pytest.mark.synth
PACKAGES = ("compiler", "stacks", "platform_constructs", "training")


def project_copy(root: Path, *, code: bool = False) -> Path:
    """The project's settings, specs and training code (and, with `code`, the app's own packages)."""
    root.mkdir(parents=True)
    for name in ("cdk.json", "cdk.context.json", "app.py"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "workloads", root / "workloads")
    for package in PACKAGES if code else ("training",):
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "build"))
    return root


def edit(path: Path, change: Any) -> None:
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data, indent=1))
    else:
        data = yaml.safe_load(path.read_text())
        change(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False))


def environments(data: dict[str, Any]) -> dict[str, Any]:
    return data["context"]["training-platform:environments"]


@pytest.fixture(scope="module")
def changed(synthesized_app: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The review of three changes to dev: a new VPC range, a third node and a fallback type for gpt-smddp."""
    root = project_copy(tmp_path_factory.mktemp("head") / "project")
    edit(root / "cdk.json", lambda d: environments(d)["dev"].update(vpc_cidr="10.21.0.0/16"))
    edit(root / "workloads" / "gpt-smddp.yaml",
         lambda d: (d.update(instance_count=3), d["capacity_retry"].update(fallback_instance_types=["ml.p4de.24xlarge"])))
    outdir = root / "cdk.out"
    build_app(Project(root), outdir=str(outdir), only=["dev"], builtin_validation=False).synth()
    base = read_assembly(Path(synthesized_app.outdir))
    base.templates = {"dev": base.templates["dev"]}
    head = read_assembly(outdir)
    diffs = template_diffs(ROOT, base, head)
    return {"base": base, "head": head, "diffs": diffs}


def test_a_new_vpc_range_is_a_loud_stateful_replacement_and_fails_the_review(changed: dict[str, Any]) -> None:
    report, code = render("base", changed["base"], changed["head"], changed["diffs"], [], [])
    assert code == 1
    lost = {(loss.stack, loss.type) for loss in losses(changed["diffs"])}
    # The file system in Storage imports the subnet: it is replaced with it, though its template does not change.
    assert {("Network", "AWS::EC2::VPC"), ("Network", "AWS::EC2::Subnet"), ("Storage", "AWS::FSx::FileSystem")} <= lost
    loud = report.split("### dev")[0]
    assert "stateful resource(s) would be replaced or removed" in loud
    (subnet,) = [line for line in loud.splitlines() if "(AWS::EC2::Subnet) replaced" in line]
    assert "because CidrBlock changed" in subnet
    # The file system sits in that subnet in another stack: the line says who builds on it.
    assert "Storage" in subnet.split("import it")[0] and "Access" in subnet.split("import it")[0]
    assert "change: replace" in loud and "reason: <why this loss is intended>" in loud  # the entry to copy


def test_acknowledging_each_loss_passes_and_a_stale_acknowledgment_is_reported(changed: dict[str, Any]) -> None:
    lost = losses(changed["diffs"])
    entries = [{"environment": loss.environment, "stack": loss.stack, "resource": loss.resource,
                "change": loss.change, "reason": "moving dev to a new range, its data is scratch"} for loss in lost]
    # The new VPC replaces the security groups in it too, whose IDs the workload stacks import: the deploy stops
    # at the Network stack unless those stacks go first (a new environment, docs/infrastructure-changes.md).
    blocked = blocked_exports(changed["base"], changed["head"], changed["diffs"])
    assert {b.what.split("`")[1] for b in blocked} == {
        "NetworkEndpointSecurityGroup6DEF6240", "NetworkFileSystemSecurityGroupBF77AABC"}
    assert render("base", changed["base"], changed["head"], changed["diffs"], entries, [])[1] == 1
    entries += [{"environment": b.environment, "stack": b.stack, "resource": b.export, "change": "export",
                 "reason": "dev's workload stacks are destroyed first"} for b in blocked]
    stale = {"environment": "dev", "stack": "Storage", "resource": "Gone", "change": "delete", "reason": "old"}
    report, code = render("base", changed["base"], changed["head"], changed["diffs"], [*entries, stale], [])
    assert code == 0
    assert report.count("- acknowledged: dev/") == len(lost) + len(blocked) and "moving dev to a new range" in report
    assert "Gone (delete) matches no change of this revision" in report


def test_workload_changes_show_shape_and_cost_before_and_after_with_fallbacks(changed: dict[str, Any]) -> None:
    rows = workload_changes("dev", changed["base"], changed["head"])
    (row,) = [r for r in rows if r.startswith("| gpt-smddp |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].split("<br>") == [  # each value that changed, before and after; the ceiling follows the count
        "instances: ml.p4d.24xlarge x 2 -> ml.p4d.24xlarge x 3",
        'fallback_instance_types: [] -> ["ml.p4de.24xlarge"]',
        "max_instance_count: 2 -> 3"]
    assert cells[3] == "ml.p4d.24xlarge x 3"
    assert cells[5] == f"{2 * 37.688:,.2f}"  # list price per hour in compiler/facts/data/instance_types.csv, 2 then 3 nodes
    assert cells[6] == f"{3 * 37.688:,.2f}<br>fallback ml.p4de.24xlarge: {3 * 47.11:,.2f}"
    assert len(rows) == 3  # no other workload changed


def test_review_command_on_a_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`trainctl review --base HEAD` in a git repository: synthesizes both revisions itself and exits 1 on a loss."""
    root = project_copy(tmp_path / "repo", code=True)
    edit(root / "cdk.json", lambda d: environments(d).pop("prod"))
    for spec in (root / "workloads").glob("*.yaml"):
        if spec.name != "gpt-finetune-single.yaml":
            spec.unlink()
    (root / "node_modules").symlink_to(ROOT / "node_modules")
    (root / ".gitignore").write_text("node_modules\ncdk.out\nbuild\n")
    for command in (["init", "-q", "-b", "main"], ["add", "-A"],
                    ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base"]):
        subprocess.run(["git", *command], cwd=root, check=True, capture_output=True)
    edit(root / "cdk.json", lambda d: environments(d)["dev"]["fsx"].update(storage_capacity_gib=2400,
                                                                           deployment_type="PERSISTENT_2",
                                                                           per_unit_storage_throughput=125))

    code = main(["--project-dir", str(root), "review"])

    out = capsys.readouterr().out
    assert code == 1, out
    (fsx,) = [line for line in out.splitlines() if line.startswith("- **dev/Storage** `LustreFileSystem")]
    assert "(AWS::FSx::FileSystem) replaced (because " in fsx
    # The deployment type the change made is named, with its values (not only the key the new type brings along).
    assert "LustreConfiguration.DeploymentType changed: SCRATCH_2 -> PERSISTENT_2" in fsx
    assert "| gpt-finetune-single |" not in out  # the workload did not change


def _template(outputs: dict[str, Any] | None = None, imports: Sequence[str] = ()) -> dict[str, Any]:
    resources = {f"Use{i}": {"Type": "AWS::SSM::Parameter", "Properties": {"Value": {"Fn::ImportValue": name}}}
                 for i, name in enumerate(imports)}
    return {"Resources": resources, "Outputs": outputs or {}}


def _export(name: str, value: Any) -> dict[str, Any]:
    return {"Out": {"Value": value, "Export": {"Name": name}}}


GROUP = {"Fn::GetAtt": ["TrainingSecurityGroup", "GroupId"]}


def test_an_export_removed_while_imported_blocks_the_deploy() -> None:
    """What 083721f -> per-workload groups did: the Network stack dropped the shared group's export while the
    Workloads and Access stacks of the base imported it ("cannot be deleted as it is in use")."""
    name = "dev-Network:ExportsOutputGroupId"
    base = Assembly({"dev": {"Network": _template(_export(name, GROUP)),
                                    "Workloads18": _template(imports=[name]), "Access": _template(imports=[name])}})
    head = Assembly({"dev": {"Network": _template(), "Workloads18": _template(), "Access": _template()}})
    [blocked] = blocked_exports(base, head)
    assert blocked.line() == (
        f"- **dev/Network** export `{name}` removed while Access, Workloads18 import it: CloudFormation refuses the "
        "dev/Network update, so the deploy stops there. Keep the export one more release (`Stack.export_value`), "
        "deploy, then remove it")
    report, code = render("abc", base, head, {}, [], [])
    assert code == 1 and "### :no_entry: 1 export(s) in use would be removed or changed" in report
    assert f"  resource: {name}\n  change: export\n" in report  # the entry to copy

    entry = {"environment": "dev", "stack": "Network", "resource": name, "change": "export",
             "reason": "the base never deployed"}
    report, code = render("abc", base, head, {}, [entry], [])
    assert code == 0 and f"- acknowledged: dev/Network export `{name}` removed: the base never deployed" in report
    assert "matches no change" not in report


def test_an_export_changed_while_imported_blocks_and_one_kept_or_unused_does_not() -> None:
    name, unused = "dev-Network:Used", "dev-Network:Unused"
    base = Assembly({"dev": {"Network": _template({**_export(name, GROUP), "Other": {
        "Value": "x", "Export": {"Name": unused}}}), "Workloads18": _template(imports=[name])}})
    changed = Assembly({"dev": {"Network": _template(_export(name, {"Ref": "NewGroup"})),
                                       "Workloads18": _template(imports=[name])}})
    kept = Assembly({"dev": {"Network": _template(_export(name, GROUP)), "Workloads18": _template()}})
    [blocked] = blocked_exports(base, changed)
    assert (blocked.what, blocked.importers) == ("changed", ("Workloads18",))
    assert blocked_exports(base, kept) == []  # the unused export may go; the used one stays as it was
    assert render("abc", base, kept, {}, [], [])[1] == 0


def _policy(*actions: str) -> dict[str, Any]:
    return {"Type": "AWS::IAM::Policy", "Properties": {"PolicyName": "p", "Roles": [{"Ref": "Role"}],
            "PolicyDocument": {"Version": "2012-10-17", "Statement": [
                {"Effect": "Allow", "Action": list(actions), "Resource": "arn:aws:s3:::data/*"}]}}}


def test_permission_changes_list_each_statement_and_rule_added_or_removed() -> None:
    """What issue 24 asked for: a change that widens permissions shows the statements, not 'see the template diff'."""
    role = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {"Statement": [
        {"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": "sagemaker.amazonaws.com"}}]}}}
    group = {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "g", "VpcId": "vpc-1"}}
    rule = {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {
        "GroupId": {"Fn::GetAtt": ["Group", "GroupId"]}, "IpProtocol": "tcp", "FromPort": 988, "ToPort": 988,
        "SourceSecurityGroupId": {"Fn::GetAtt": ["Group", "GroupId"]}, "Description": "Lustre"}}
    base = Assembly({"dev": {"Access": {"Resources": {"Role": role, "Policy": _policy("s3:GetObject"),
                                                             "Group": group}}}})
    head = Assembly({"dev": {"Access": {"Resources": {"Role": role, "Group": group, "Rule": rule,
                                                             "Policy": _policy("s3:GetObject", "s3:PutObject")}}}})
    diffs = template_diffs(ROOT, base, head)
    lines = permission_changes(diffs["dev"])
    statements = lines[lines.index("IAM statements (+ added, - removed):") + 2:]
    assert statements[0] == "| Stack |  | Resource | Effect | Action | Principal | Condition |"
    added = [row for row in statements if row.startswith("| Access | + |")]
    removed = [row for row in statements if row.startswith("| Access | - |")]
    assert any("s3:GetObject<br>s3:PutObject" in row for row in added), statements
    assert any("s3:GetObject |" in row and "PutObject" not in row for row in removed), statements
    assert "Security group rules (+ added, - removed):" in lines
    rules = lines[lines.index("Security group rules (+ added, - removed):") + 2:]
    assert any(row.startswith("| Access | + |") and "988" in row for row in rules), rules
    report, _ = render("abc", base, head, diffs, [], [])
    assert "see the template diff" not in report and "#### Permission changes" in report


def test_no_permission_change_says_so() -> None:
    assert permission_changes({"Access": {"resources": [], "iamStatements": []}}) == [
        "No IAM statement, managed policy attachment or security group rule changes.", ""]


def _file_system(kind: str, storage: int, **more: Any) -> dict[str, Any]:
    return {"Type": "AWS::FSx::FileSystem", "Properties": {
        "FileSystemType": "LUSTRE", "StorageCapacity": storage, "SubnetIds": [{"Ref": "Subnet"}],
        "LustreConfiguration": {"DeploymentType": kind, **more.pop("lustre", {})}, **more}}


def _review(base_resources: dict[str, Any], head_resources: dict[str, Any]) -> tuple[str, int]:
    base = Assembly({"dev": {"Storage": {"Resources": base_resources}}})
    head = Assembly({"dev": {"Storage": {"Resources": head_resources}}})
    return render("abc", base, head, template_diffs(ROOT, base, head), [], [])


def test_a_deployment_type_change_names_its_cause_with_both_values() -> None:
    """Issue 24: SCRATCH_2 -> PERSISTENT_2 was reported "because KmsKeyId changed"; the engine judges top-level
    properties only, so the nested DeploymentType (which replaces the file system) went unnamed."""
    report, code = _review({"Fs": _file_system("SCRATCH_2", 1200)},
                           {"Fs": _file_system("PERSISTENT_2", 2400, KmsKeyId={"Ref": "Key"},
                                               lustre={"PerUnitStorageThroughput": 125})})
    assert code == 1
    (line,) = [x for x in report.splitlines() if "`Fs` (AWS::FSx::FileSystem) replaced" in x]
    assert "LustreConfiguration.DeploymentType changed: SCRATCH_2 -> PERSISTENT_2" in line
    assert 'KmsKeyId changed: none -> {"Ref":"Key"}' in line  # the key a persistent file system takes replaces it too
    assert "StorageCapacity" not in line  # an update in place, not a cause


def test_a_nested_change_that_replaces_is_a_loss_though_the_engine_says_update() -> None:
    """SCRATCH_1 -> SCRATCH_2 changes nothing at the top level that replaces: the CDK's engine calls it an update,
    CloudFormation replaces the file system (LustreConfiguration.DeploymentType, causesReplacement in the spec)."""
    report, code = _review({"Fs": _file_system("SCRATCH_1", 1200)}, {"Fs": _file_system("SCRATCH_2", 1200)})
    assert code == 1
    assert "replaced (because LustreConfiguration.DeploymentType changed: SCRATCH_1 -> SCRATCH_2)" in report


def test_an_update_in_place_shows_the_values_before_and_after() -> None:
    report, code = _review({"Fs": _file_system("PERSISTENT_2", 2400)}, {"Fs": _file_system("PERSISTENT_2", 4800)})
    assert code == 0
    (row,) = [x for x in report.splitlines() if x.startswith("| Fs | FSx::FileSystem | Storage |")]
    assert row.endswith("| changed | StorageCapacity: 2400 -> 4800 | `Fs` |")


def _machine(summary: dict[str, Any]) -> dict[str, Any]:
    return {"Type": "AWS::StepFunctions::StateMachine", "Properties": {"StateMachineName": f"dev-{summary['name']}"},
            "Metadata": {METADATA_KEY: summary}}


def test_a_workload_change_shows_which_hyperparameter_changed_and_how() -> None:
    before = {"name": "demo", "instances": [{"type": "ml.g5.xlarge", "count": 1}], "strategy": "single",
              "hyperparameters": {"lr": 0.1, "epochs": 3, "name": "x"}, "max_run": 3600, "cost_per_hour_usd": 1.5}
    after = {**before, "hyperparameters": {"lr": 0.2, "epochs": 3, "warmup": 10}, "max_run": 7200}
    base = Assembly({"dev": {"Workloads01": {"Resources": {"M": _machine(before)}}}})
    head = Assembly({"dev": {"Workloads02": {"Resources": {"M": _machine(after)}}}})
    [_, _, row] = workload_changes("dev", base, head)
    assert row.split(" | ")[1].split("<br>") == [
        "hyperparameters.lr: 0.1 -> 0.2", "hyperparameters.name: x -> none", "hyperparameters.warmup: none -> 10",
        "max_run: 3600 -> 7200", "stack: Workloads01 -> Workloads02"]


def test_the_platforms_own_state_machines_are_not_workloads() -> None:
    """The job reaper (Runs stack) carries no workload summary; a shard's state machine without one (a base from
    before the summaries) is still a workload, named after its state machine."""
    reaper = {"Type": "AWS::StepFunctions::StateMachine",
              "Properties": {"StateMachineName": "training-job-reaper-dev"}}
    bare = {"Type": "AWS::StepFunctions::StateMachine", "Properties": {"StateMachineName": "dev-old"}}
    summary = {"name": "demo", "instances": [{"type": "ml.g5.xlarge", "count": 1}], "strategy": "single"}
    assembly = Assembly({"dev": {"Runs": {"Resources": {"Reaper": reaper}},
                                 "Workloads01": {"Resources": {"M": _machine(summary), "Old": bare}}}})
    assert sorted(assembly.workloads("dev")) == ["demo", "old"]


def test_a_workload_shards_change_fails_the_review_for_every_state_machine_and_schedule_it_moves(
        synthesized_app: Any, tmp_path: Path) -> None:
    """The real app: dev's workload_shards 64 -> 32 moves every workload to another WorkloadsNN stack, and the old
    stacks leave the app (cdk deploy keeps them, holding the names): each move is named, with the stack to delete."""
    root = project_copy(tmp_path / "project")
    edit(root / "cdk.json", lambda d: environments(d)["dev"].update(workload_shards=32))
    outdir = root / "cdk.out"
    build_app(Project(root), outdir=str(outdir), only=["dev"], builtin_validation=False).synth()
    base = read_assembly(Path(synthesized_app.outdir))
    base.templates = {"dev": base.templates["dev"]}
    head = read_assembly(outdir)
    report, code = render("base", base, head, template_diffs(ROOT, base, head), [], [])
    assert code == 1
    loud = report.split("### dev")[0]
    before = base.workloads("dev")
    moved = {name: before[name].stack for name, placed in head.workloads("dev").items()
             if before[name].stack != placed.stack}
    # all but gpt-smp-v1 (shard 18 of 64 and of 32: compiler/compilation/stack_layout.py), so the loop below checks
    # both a workload that moves and one that stays
    assert set(head.workloads("dev")) - set(moved) == {"gpt-smp-v1"} and moved
    for name in head.workloads("dev"):
        lines = [x for x in loud.splitlines() if f"(AWS::StepFunctions::StateMachine) named `dev-{name}` moves" in x]
        if name not in moved:
            assert lines == []  # it stays where it is: nothing to create
            continue
        (line,) = lines
        assert f"from dev/{moved[name]}" in line and f"--stack-name dev-{moved[name]}`" in line
        assert f"- **dev/{moved[name]}** (workloads: " in loud  # the stack it leaves, listed with its workloads
    schedules = [r["Properties"]["Name"] for t in base.templates["dev"].values() for r in t["Resources"].values()
                 if r["Type"] == "AWS::Scheduler::Schedule"]
    assert schedules  # gpt-finetune-single's in dev
    for name in schedules:
        assert f"(AWS::Scheduler::Schedule) named `{name}` moves" in loud


def test_a_file_system_that_imports_a_replaced_subnet_is_a_replaced_stateful_resource() -> None:
    """The diff engine compares each stack's text: the Storage stack's `SubnetIds` reads the same import before and
    after, yet the subnet behind it is replaced, and a file system's `SubnetIds` cannot change in place. What imports
    it in a property that can (a parameter's value) is only updated."""
    export = {"Out": {"Value": {"Ref": "Subnet"}, "Export": {"Name": "dev-Network:Subnet"}}}

    def network(cidr: str) -> dict[str, Any]:
        return {"Resources": {"Subnet": {"Type": "AWS::EC2::Subnet", "Properties": {
            "VpcId": "vpc-1", "CidrBlock": cidr}}}, "Outputs": export}

    imported = {"Fn::ImportValue": "dev-Network:Subnet"}
    storage = {"Resources": {
        "Fs": {"Type": "AWS::FSx::FileSystem", "Properties": {"FileSystemType": "LUSTRE", "SubnetIds": [imported]}},
        "Note": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": imported}}}}
    base = Assembly({"dev": {"Network": network("10.0.0.0/24"), "Storage": storage}})
    head = Assembly({"dev": {"Network": network("10.0.0.0/23"), "Storage": storage}})
    diffs = template_diffs(ROOT, base, head)
    assert {(loss.stack, loss.resource, loss.impact) for loss in losses(diffs)} == {
        ("Network", "Subnet", "WILL_REPLACE"), ("Storage", "Fs", "WILL_REPLACE")}
    report, code = render("abc", base, head, diffs, [], [])
    assert code == 1
    (line,) = [x for x in report.splitlines() if x.startswith("- **dev/Storage** `Fs`")]
    assert 'SubnetIds changed: {"Fn::ImportValue":"dev-Network:Subnet"} -> a new value (Network replaces Subnet)' in line
    assert "`Note`" not in report.split("### dev")[0]
    same = template_diffs(ROOT, base, base)
    assert losses(same) == [] and same["dev"]["Storage"]["resources"] == []


def _image_copy(tag: str) -> dict[str, Any]:
    source = {"Fn::Join": ["", ["docker://", {"Fn::Sub": f"111111111111.dkr.ecr.us-east-1.${{AWS::URLSuffix}}/assets:{tag}"}]]}
    return {"Type": "Custom::CDKECRDeployment", "Properties": {"ServiceToken": {"Ref": "Fn"}, "SrcImage": source,
                                                               "DestImage": "repo:latest"}}


def test_a_custom_resource_whose_values_change_inside_an_intrinsic_is_changed_with_its_values() -> None:
    """A new training image changes the image copy's SrcImage inside Fn::Join: CloudFormation sends the custom
    resource an Update (its handler copies the new image). The CDK's engine rates a custom type's property change
    NO_CHANGE; the review says changed, and shows the tag before and after."""
    report, code = _review({"Copy": _image_copy("ddf936d7")}, {"Copy": _image_copy("36e232f2")})
    assert code == 0
    (row,) = [x for x in report.splitlines() if x.startswith("| Copy | Custom::CDKECRDeployment | Storage |")]
    assert "| changed |" in row and "NO_CHANGE" not in row
    assert "ddf936d7" in row and "36e232f2" in row


def test_a_changed_value_is_shown_whole_up_to_80_characters_then_by_the_part_that_differs() -> None:
    """A value of up to 80 characters is shown whole; a longer one by the part that differs with 12 characters
    around it; where that part is itself longer than 80 (a definition, a policy), by the property name alone."""
    same = "a" * 79
    assert ValueChange("P", same + "1", same + "2", "no").text() == f"P: {same}1 -> {same}2"  # 80: whole
    assert ValueChange("P", same + "a1", same + "a2", "no").text() == "P: …aaaaaaaaaaaa1 -> …aaaaaaaaaaaa2"  # 81
    tail = "a" * 30
    assert ValueChange("P", "x" * 67 + tail, "y" * 67 + tail, "no").text() == (  # the part: 67 + 12 + "…" = 80
        f"P: {'x' * 67}{'a' * 12}… -> {'y' * 67}{'a' * 12}…")
    assert ValueChange("P", "x" * 68 + tail, "y" * 68 + tail, "no").text() == "P"  # the part: 81
    assert ValueChange("P", None, {"a": 1}, "no").text() == 'P: none -> {"a":1}'


def test_a_spot_workloads_price_is_its_on_demand_ceiling_labelled_so() -> None:
    """Issue 36: no offline source gives the managed spot rate; the review labels the on-demand price a ceiling."""
    summary = {"name": "demo", "instances": [{"type": "ml.g5.2xlarge", "count": 1}], "strategy": "none",
               "cost_per_hour_usd": 1.515, "spot": True, "fallback_cost_per_hour_usd": {"ml.g5.4xlarge": 2.03}}
    base = Assembly({"dev": {"Workloads01": {"Resources": {}}}})
    head = Assembly({"dev": {"Workloads01": {"Resources": {"M": _machine(summary)}}}})
    [_, _, row] = workload_changes("dev", base, head)
    assert row.endswith("| - | ≤ 1.51 spot (on-demand ceiling)<br>fallback ml.g5.4xlarge: ≤ 2.03 spot (on-demand "
                        "ceiling) |")
    report, _ = render("abc", base, head, template_diffs(ROOT, base, head), [], [])
    assert "Spot workloads show the on-demand list price as the most an hour costs" in report
    plain = Assembly({"dev": {"Workloads01": {"Resources": {"M": _machine({**summary, "spot": None})}}}})
    assert "spot" not in workload_changes("dev", base, plain)[2]


def test_the_reviews_warnings_are_those_the_revisions_synth_printed(tmp_path: Path) -> None:
    """The review lists the validation warnings of the working tree's own synth instead of compiling the project a
    second time: those an app.py from before the assembly's record printed (a `warning: ` line each)..."""
    from trainctl.review.revisions import synthesize

    (tmp_path / "app.py").write_text("import sys\nprint('warning: a spec says X', file=sys.stderr)\n"
                                     "print('some other line', file=sys.stderr)\nprint('warning: and Y', file=sys.stderr)\n")
    assert synthesize(tmp_path, tmp_path / "out", "working-tree") == ["a spec says X", "and Y"]


def test_the_reviews_warnings_are_those_synth_recorded_in_the_assembly(tmp_path: Path) -> None:
    """...and those synth recorded beside the manifest, whole (a warning of several lines among them)."""
    from trainctl.review.revisions import synthesize

    (tmp_path / "app.py").write_text(
        "import json, os, sys\nprint('warning: first line only', file=sys.stderr)\n"
        f"open(os.path.join(os.environ['CDK_OUTDIR'], {WARNINGS_FILE!r}), 'w').write("
        "json.dumps({'warnings': ['first line only\\nand its second']}))\n")
    (tmp_path / "out").mkdir()
    assert synthesize(tmp_path, tmp_path / "out", "working-tree") == ["first line only\nand its second"]
