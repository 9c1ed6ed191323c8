"""`trainctl review`: a named resource created while its name is still taken, and stacks that leave the app.

CloudFormation creates before it deletes, and `cdk deploy` never deletes a stack that left the app, so a state
machine `dev-demo` that moves from Workloads58 to Workloads26 (a `workload_shards` change) fails to create while
Workloads58 still holds the name; a named resource that must be replaced cannot be replaced at all (CloudFormation
User Guide, "Name type"). These templates are small hand-written ones; tests/cli/test_review.py reviews a real
`workload_shards` change of the synthesized app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.project import ROOT
from trainctl.review.acknowledgments import load_acknowledgments
from trainctl.review.assembly import Assembly
from trainctl.review.errors import ReviewError
from trainctl.review.names import departed_stacks, name_clashes
from trainctl.review.report import render
from trainctl.review.template_diff import template_diffs


def _machine(name: str, kind: str = "STANDARD") -> dict[str, Any]:
    return {"Type": "AWS::StepFunctions::StateMachine",
            "Properties": {"StateMachineName": name, "StateMachineType": kind, "DefinitionString": "{}",
                           "RoleArn": "arn:aws:iam::111111111111:role/r"}}


def _schedule(name: str) -> dict[str, Any]:
    return {"Type": "AWS::Scheduler::Schedule", "Properties": {"Name": name, "ScheduleExpression": "rate(1 day)"}}


def _review(base: Assembly, head: Assembly, entries: list[dict[str, Any]] | None = None) -> tuple[str, int]:
    return render("abc", base, head, template_diffs(ROOT, base, head), entries or [], [])


def _names(resources: dict[str, Any]) -> dict[str, list[str]]:
    template = {"Resources": resources}
    return template_diffs(ROOT, Assembly({"dev": {"S": template}}), Assembly({"dev": {"S": template}}))["dev"]["S"][
        "names"]["new"]


def test_a_name_is_one_the_service_spec_makes_unique_in_the_account_and_only_a_literal() -> None:
    """From the spec's primary identifiers and ARN templates: a state machine's name is in its ARN, a schedule's is
    its identifier, a budget's is nested; a topic's display name, an inline policy's name (per role) and a DNS
    firewall rule group's name (its ARN holds a generated ID) are not unique names."""
    assert _names({
        "M": _machine("dev-demo"), "S": _schedule("dev-demo"),
        "B": {"Type": "AWS::Budgets::Budget", "Properties": {"Budget": {"BudgetName": "dev-training"}}},
        "T": {"Type": "AWS::SNS::Topic", "Properties": {"DisplayName": "x"}},
        "P": {"Type": "AWS::IAM::Policy", "Properties": {"PolicyName": "demoPolicy"}},
        "G": {"Type": "AWS::Route53Resolver::FirewallRuleGroup", "Properties": {"Name": "training-dev-jobs"}},
        "J": {"Type": "AWS::StepFunctions::StateMachine", "Properties": {"StateMachineName": {"Fn::Join": ["-", ["a"]]}}},
    }) == {"M": ["AWS::StepFunctions::StateMachine", "dev-demo"], "S": ["AWS::Scheduler::Schedule", "dev-demo"],
           "B": ["AWS::Budgets::Budget", "dev-training"]}


def test_a_workload_moved_out_of_a_stack_that_leaves_the_app_fails_until_acknowledged() -> None:
    base = Assembly({"dev": {"Workloads58": {"Resources": {"M": _machine("dev-demo"), "S": _schedule("dev-demo")}},
                             "Workloads18": {"Resources": {"O": _machine("dev-other")}}}},
                    stack_names={"dev": {"Workloads58": "dev-Workloads58", "Workloads18": "dev-Workloads18"}})
    head = Assembly({"dev": {"Workloads26": {"Resources": {"M": _machine("dev-demo"), "S": _schedule("dev-demo")}},
                             "Workloads18": {"Resources": {"O": _machine("dev-other")}}}})
    clashes = name_clashes(base, head, template_diffs(ROOT, base, head))
    assert [(c.stack, c.resource, c.name, c.old_stack, c.old_stack_leaves) for c in clashes] == [
        ("Workloads26", "S", "dev-demo", "Workloads58", True), ("Workloads26", "M", "dev-demo", "Workloads58", True)]
    report, code = _review(base, head)
    assert code == 1
    assert "### :no_entry: 2 named resource(s) would be created while the name is taken: the deploy fails" in report
    (line,) = [x for x in report.splitlines() if x.startswith("- **dev/Workloads26** `M`")]
    assert "named `dev-demo` moves from dev/Workloads58 `M`" in line
    assert "aws cloudformation delete-stack --stack-name dev-Workloads58" in line
    assert "  resource: M\n  change: name\n" in report  # the entry to copy
    (departed,) = [x for x in report.splitlines() if x.startswith("- **dev/Workloads58**")]
    assert "(workloads: demo)" in departed and "state machine of demo" not in departed  # it moved

    entries = [{"environment": "dev", "stack": "Workloads26", "resource": r, "change": "name",
                "reason": "dev-Workloads58 deleted before the deploy"} for r in ("M", "S")]
    report, code = _review(base, head, entries)
    assert code == 0
    assert "- acknowledged: dev/Workloads26 `M` named `dev-demo`: dev-Workloads58 deleted before the deploy" in report
    assert "matches no change" not in report


def test_a_move_between_stacks_that_both_stay_says_to_deploy_the_old_one_first() -> None:
    base = Assembly({"dev": {"Workloads01": {"Resources": {"M": _machine("dev-demo"), "K": _machine("dev-keep")}},
                             "Workloads02": {"Resources": {"O": _machine("dev-other")}}}})
    head = Assembly({"dev": {"Workloads01": {"Resources": {"K": _machine("dev-keep")}},
                             "Workloads02": {"Resources": {"O": _machine("dev-other"), "M": _machine("dev-demo")}}}})
    report, code = _review(base, head)
    assert code == 1
    (line,) = [x for x in report.splitlines() if "named `dev-demo`" in x]
    assert "Deploy `'dev/Workloads01'` alone first" in line
    assert departed_stacks(base, head) == [] and "leave the app" not in report


def test_a_new_logical_id_for_the_same_name_in_one_stack_clashes_and_a_new_name_does_not() -> None:
    base = Assembly({"dev": {"Workloads01": {"Resources": {"Old": _machine("dev-demo")}}}})
    same_name = Assembly({"dev": {"Workloads01": {"Resources": {"New": _machine("dev-demo")}}}})
    new_name = Assembly({"dev": {"Workloads01": {"Resources": {"New": _machine("dev-demo-v2")}}}})
    report, code = _review(base, same_name)
    assert code == 1 and "CloudFormation creates the new resource before it deletes the old one" in report
    assert _review(base, new_name)[1] == 0  # a rename: a new name, nothing taken


def test_replacing_a_named_resource_fails_and_replacing_it_under_a_new_name_does_not() -> None:
    """StateMachineType cannot change in place (the service spec the diff engine reads): with the name kept,
    CloudFormation refuses the replacement."""
    base = Assembly({"dev": {"Workloads01": {"Resources": {"M": _machine("dev-demo")}}}})
    head = Assembly({"dev": {"Workloads01": {"Resources": {"M": _machine("dev-demo", "EXPRESS")}}}})
    renamed = Assembly({"dev": {"Workloads01": {"Resources": {"M": _machine("dev-demo-2", "EXPRESS")}}}})
    report, code = _review(base, head)
    assert code == 1 and "named `dev-demo` would be replaced: CloudFormation cannot replace" in report
    assert _review(base, renamed)[1] == 0
    unchanged = Assembly({"dev": {"Workloads01": {"Resources": {"M": _machine("dev-demo")}}}})
    assert _review(base, unchanged)[1] == 0


def test_a_removed_workloads_stack_is_reported_with_the_commands_that_delete_it() -> None:
    base = Assembly({"dev": {"Workloads58": {"Resources": {"M": _machine("dev-demo"), "S": _schedule("dev-demo")}},
                             "Workloads18": {"Resources": {"O": _machine("dev-other")}}}},
                    stack_names={"dev": {"Workloads58": "dev-Workloads58"}})
    head = Assembly({"dev": {"Workloads18": {"Resources": {"O": _machine("dev-other")}}}})
    report, code = _review(base, head)
    assert code == 0  # nothing fails: the stack just stays; the report says so first
    assert "### :warning: 1 stack(s) leave the app and stay deployed" in report
    (line,) = [x for x in report.splitlines() if x.startswith("- **dev/Workloads58**")]
    assert "(workloads: demo)" in line and "`cdk deploy` does not delete a stack" in line
    assert ("`aws cloudformation delete-stack --stack-name dev-Workloads58`, then "
            "`aws cloudformation wait stack-delete-complete --stack-name dev-Workloads58`") in line
    assert line.endswith("the state machine of demo stays, and its schedule still starts runs")


def test_an_acknowledgment_of_a_name_is_accepted_and_an_unknown_change_refused(tmp_path: Path) -> None:
    (tmp_path / "acknowledged-changes.yaml").write_text(
        "- {environment: dev, stack: Workloads26, resource: M, change: name, reason: old stack deleted first}\n")
    assert load_acknowledgments(tmp_path)[0]["change"] == "name"
    (tmp_path / "acknowledged-changes.yaml").write_text(
        "- {environment: dev, stack: Workloads26, resource: M, change: move, reason: old stack deleted first}\n")
    with pytest.raises(ReviewError, match="name for a name still taken"):
        load_acknowledgments(tmp_path)


@pytest.mark.parametrize(("text", "starts"), [
    ("- [environment, stack, resource, change, reason]\n", "acknowledged-changes.yaml: each entry needs environment"),
    ("- 5\n", "acknowledged-changes.yaml: each entry needs environment"),
    ("- {environment: dev\n", "acknowledged-changes.yaml: is not valid YAML: "),
    ("- {environment: dev, stack: S, resource: M, change: name, reason: r, environment: prod}\n",
     "acknowledged-changes.yaml: line 1, column 70: key 'environment' appears twice in the same mapping"),
    ("- &a {environment: dev}\n", "acknowledged-changes.yaml: line 1: anchors (&a) are not allowed"),
])
def test_an_acknowledgments_file_read_as_strictly_as_a_spec(tmp_path: Path, text: str, starts: str) -> None:
    """Not a traceback for an entry that is no mapping, not the last of two equal keys taken in silence."""
    (tmp_path / "acknowledged-changes.yaml").write_text(text)
    with pytest.raises(ReviewError) as info:
        load_acknowledgments(tmp_path)
    assert str(info.value).startswith(starts), str(info.value)


def _group(description: str) -> dict[str, Any]:
    return {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": description, "VpcId": "vpc-1"}}


def test_an_imported_export_of_a_replaced_resource_blocks_though_its_text_stays() -> None:
    """A security group's description cannot change in place: the group is replaced, its ID (the export's value)
    changes at deploy, and CloudFormation refuses to update an export another stack imports. The template's export
    reads `{"Ref": "Group"}` before and after, so only the replacement tells."""
    export = {"Out": {"Value": {"Fn::GetAtt": ["Group", "GroupId"]}, "Export": {"Name": "dev-Network:Group"}}}
    importer = {"Resources": {"Use": {"Type": "AWS::SSM::Parameter",
                                      "Properties": {"Value": {"Fn::ImportValue": "dev-Network:Group"}}}}}

    def assembly(description: str, *, imported: bool = True) -> Assembly:
        stacks = {"Network": {"Resources": {"Group": _group(description)}, "Outputs": export}}
        return Assembly({"dev": {**stacks, **({"Workloads18": importer} if imported else {})}})

    base, head = assembly("jobs"), assembly("training jobs")
    report, code = _review(base, head)
    assert code == 1
    assert ("export `dev-Network:Group` changed (`Group`, AWS::EC2::SecurityGroup, is replaced: a new ID) while "
            "Workloads18 import it") in report
    assert _review(base, assembly("jobs"))[1] == 0  # nothing replaced
    assert _review(assembly("jobs", imported=False), assembly("training jobs", imported=False))[1] == 0  # unused


def _bucket(policy: str | None) -> dict[str, Any]:
    return {"Type": "AWS::S3::Bucket", "Properties": {}, **({"DeletionPolicy": policy} if policy else {})}


def test_data_no_longer_retained_fails_until_acknowledged() -> None:
    """prod's buckets retain their data when the stack goes (`production: true`); a change to `removal_policy:
    destroy` updates nothing now but makes a later stack deletion delete the data."""
    base = Assembly({"prod": {"Storage": {"Resources": {"Data": _bucket("Retain"), "Logs": _bucket("Snapshot"),
                                                         "Scratch": _bucket(None), "Kept": _bucket("Retain")}}}})
    head = Assembly({"prod": {"Storage": {"Resources": {"Data": _bucket("Delete"), "Logs": _bucket(None),
                                                         "Scratch": _bucket(None), "Kept": _bucket("Retain")}}}})
    report, code = _review(base, head)
    assert code == 1 and "### :warning: 2 stateful resource(s) would no longer be retained" in report
    assert ("- **prod/Storage** `Data` (AWS::S3::Bucket): DeletionPolicy Retain -> Delete: deleting the stack, or "
            "removing the resource later, deletes its data") in report
    assert "`Logs` (AWS::S3::Bucket): DeletionPolicy Snapshot -> Delete" in report
    assert "`Scratch`" not in report and "`Kept`" not in report
    entries = [{"environment": "prod", "stack": "Storage", "resource": r, "change": "retention",
                "reason": "prod is being retired"} for r in ("Data", "Logs")]
    report, code = _review(base, head, entries)
    assert code == 0 and "- acknowledged: prod/Storage `Data` no longer retained: prod is being retired" in report
    assert _review(head, base)[1] == 0  # starting to retain is always fine


def test_retain_except_on_create_retains_the_data() -> None:
    """`removal_policy: retain` writes RetainExceptOnCreate ("behaves like Retain for stack operations, except for the
    stack operation that initially created the resource": CloudFormation User Guide, "DeletionPolicy attribute"), so
    a deployed prod moving from Retain to it keeps its data, and leaving it for Delete does not."""
    def storage(policy: str) -> Assembly:
        return Assembly({"prod": {"Storage": {"Resources": {"Data": _bucket(policy)}}}})

    assert _review(storage("Retain"), storage("RetainExceptOnCreate"))[1] == 0
    report, code = _review(storage("RetainExceptOnCreate"), storage("Delete"))
    assert code == 1 and "`Data` (AWS::S3::Bucket): DeletionPolicy RetainExceptOnCreate -> Delete" in report


def test_a_comment_file_in_a_folder_that_does_not_exist_stops_the_review_before_any_synthesis(tmp_path: Path,
                                                                                             capsys) -> None:
    from trainctl.cli import main

    comment = tmp_path / "missing" / "comment.md"
    assert main(["--project-dir", str(ROOT), "review", "--base", "no-such-ref", "--comment", str(comment)]) == 2
    assert capsys.readouterr() == ("", f"review stopped: --comment {comment}: its folder does not exist\n")
