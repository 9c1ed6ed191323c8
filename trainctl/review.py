"""`trainctl review [--base REF]`: what a change does to every environment, as one Markdown report.

It synthesizes the base revision (default: the merge base with the main branch) in a temporary git worktree and the
working tree, both offline (no credentials: `app.py` reads the cached lookups), then compares every stack's template
with the CDK's own diff engine (`@aws-cdk/cloudformation-diff`, through `template_diff.js`), which knows which
property changes replace a resource. The report lists, per environment: stateful resources replaced or removed
first and loud; workloads added, changed or removed (from the workload summary each state machine carries in its
template metadata) with their cost per hour before and after; every other resource change; the IAM statements,
managed-policy attachments and security group rules added or removed; the validation and cdk-nag findings; and
which stack holds which workload.

Exit status: 0, or 1 when a stateful resource (file system, bucket, key, repository, log group, VPC, subnet, ...)
would be replaced or removed and `acknowledged-changes.yaml` does not acknowledge it, or when an export another stack
imports would be removed or changed (the deploy would fail); 2 when a revision cannot be synthesized.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compiler.describe import METADATA_KEY
from compiler.project import Project
from trainctl.common import project_of
from trainctl.schedule_report import review_lines

ACKNOWLEDGMENTS = "acknowledged-changes.yaml"
CHANGES = ("replace", "delete", "export")  # what an acknowledgment may acknowledge
MAIN_BRANCHES = ("origin/main", "main", "origin/master", "master")
# Resources that hold data or identity: replacing or removing one loses what is in it (or breaks what points at it).
STATEFUL_TYPES = frozenset({
    "AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::FSx::FileSystem", "AWS::FSx::DataRepositoryAssociation",
    "AWS::S3::Bucket", "AWS::KMS::Key", "AWS::KMS::Alias", "AWS::ECR::Repository", "AWS::Logs::LogGroup",
    "AWS::EFS::FileSystem", "AWS::SNS::Topic", "AWS::DynamoDB::Table", "AWS::SecretsManager::Secret",
})
LOSSY = {"WILL_REPLACE": "replaced", "MAY_REPLACE": "may be replaced", "WILL_DESTROY": "deleted",
         "WILL_ORPHAN": "removed from the stack (left behind, no longer managed)"}


class ReviewError(RuntimeError):
    """A revision that cannot be checked out or synthesized; the message says which and why."""


# ------------------------------------------------------------------------------------------------- revisions


def git(project: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=project, capture_output=True, text=True)
    if done.returncode != 0:
        raise ReviewError(f"git {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def default_base(project: Path) -> str:
    """The merge base of HEAD with the main branch (the first of origin/main, main, origin/master, master)."""
    for branch in MAIN_BRANCHES:
        try:
            git(project, "rev-parse", "--verify", "--quiet", branch)
        except ReviewError:
            continue
        return git(project, "merge-base", "HEAD", branch)
    raise ReviewError("no main branch found to compare with; pass --base REF (a commit or a branch)")


@contextmanager
def worktree(project: Path, ref: str) -> Iterator[Path]:
    """The revision `ref` checked out in a temporary worktree (removed afterwards)."""
    commit = git(project, "rev-parse", "--verify", f"{ref}^{{commit}}")
    with tempfile.TemporaryDirectory(prefix="review-") as tmp:
        path = Path(tmp) / "base"
        git(project, "worktree", "add", "--detach", str(path), commit)
        try:
            yield path
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=project, capture_output=True)


def synthesize(tree: Path, outdir: Path, label: str) -> None:
    """Run the revision's own app.py offline, with this checkout's interpreter and packages.

    The CDK's built-in CloudFormation validation is off here (`CDK_VALIDATION=false`, about 4 s per synth): a
    review compares templates; cdk-nag still runs, and the tests lint every template with cfn-lint and checkov.
    """
    env = {**os.environ, "CDK_OUTDIR": str(outdir), "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
           "SAGEMAKER_SUPPRESS_V2_WARNING": "1", "AWS_EC2_METADATA_DISABLED": "true", "CDK_VALIDATION": "false"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "app.py"], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise ReviewError(f"the {label} revision does not synthesize:\n{tail}")


# ------------------------------------------------------------------------------------------------- assemblies


@dataclass
class Assembly:
    """The stacks of one synthesized revision: environment -> stack name -> template."""

    templates: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    nag: str = ""

    def importers(self, env: str, stack: str, resource: str) -> list[str]:
        """The stacks that import a value of `resource` (exported by `stack`): CloudFormation will not replace an
        exported value while another stack uses it, so their deploys are part of the change."""
        outputs = self.templates.get(env, {}).get(stack, {}).get("Outputs", {})
        exports = set()
        for output in outputs.values():
            value, name = output.get("Value"), (output.get("Export") or {}).get("Name")
            if name and (value == {"Ref": resource} or (isinstance(value, dict) and
                                                         (value.get("Fn::GetAtt") or [None])[0] == resource)):
                exports.add(name)
        return sorted(other for other, template in self.templates.get(env, {}).items()
                      if other != stack and any(f'{{"Fn::ImportValue": "{name}"}}' in json.dumps(template)
                                                for name in exports))

    def workloads(self, env: str) -> dict[str, dict[str, Any]]:
        """Workload summaries (template metadata of the state machines), with the stack that holds each."""
        found = {}
        for stack, template in self.templates.get(env, {}).items():
            for resource in template.get("Resources", {}).values():
                if resource.get("Type") != "AWS::StepFunctions::StateMachine":
                    continue
                summary = dict(resource.get("Metadata", {}).get(METADATA_KEY) or {})
                name = summary.get("name") or str(resource["Properties"].get("StateMachineName", "")).removeprefix(f"{env}-")
                found[name] = {**summary, "stack": stack}
        return found


def read_assembly(outdir: Path) -> Assembly:
    assembly = Assembly()
    for folder in sorted(outdir.glob("assembly-*")):
        env = folder.name.removeprefix("assembly-")
        manifest = json.loads((folder / "manifest.json").read_text())
        for artifact_id, artifact in manifest.get("artifacts", {}).items():
            if artifact.get("type") != "aws:cloudformation:stack":
                continue
            name = artifact.get("displayName", artifact_id).split("/")[-1]
            template = json.loads((folder / artifact["properties"]["templateFile"]).read_text())
            assembly.templates.setdefault(env, {})[name] = template
    report = outdir / "validation-report.json"
    if report.is_file():
        from trainctl.summary import nag_status

        assembly.nag = nag_status(outdir)
    return assembly


def template_diffs(project: Path, base: Assembly, head: Assembly) -> dict[str, dict[str, Any]]:
    """Every stack's differences, from the CDK's diff engine: environment -> stack -> diff."""
    pairs = {}
    for env in sorted(set(base.templates) | set(head.templates)):
        for stack in sorted(set(base.templates.get(env, {})) | set(head.templates.get(env, {}))):
            pairs[f"{env}/{stack}"] = {"old": base.templates.get(env, {}).get(stack),
                                       "new": head.templates.get(env, {}).get(stack)}
    script = Path(__file__).with_name("template_diff.js")
    node_env = {**os.environ, "NODE_PATH": str(project / "node_modules")}
    done = subprocess.run(["node", str(script)], input=json.dumps(pairs), capture_output=True, text=True,
                          env=node_env, cwd=project)
    if done.returncode != 0:
        raise ReviewError(f"the template diff failed (is `npm ci` done?): {done.stderr.strip()[-2000:]}")
    result: dict[str, dict[str, Any]] = {}
    for key, diff in json.loads(done.stdout).items():
        env_name, stack = key.split("/", 1)
        result.setdefault(env_name, {})[stack] = diff
    return result


# ------------------------------------------------------------------------------------------------- acknowledgments


@dataclass(frozen=True)
class Loss:
    """A stateful resource a change replaces or removes."""

    environment: str
    stack: str
    resource: str
    type: str
    impact: str
    properties: tuple[str, ...]

    @property
    def change(self) -> str:
        return "replace" if "REPLACE" in self.impact else "delete"

    def acknowledgment(self) -> str:
        return yaml.safe_dump([{"environment": self.environment, "stack": self.stack, "resource": self.resource,
                                "change": self.change, "reason": "<why this loss is intended>"}], sort_keys=False)


def load_acknowledgments(project: Path) -> list[dict[str, Any]]:
    path = project / ACKNOWLEDGMENTS
    if not path.is_file():
        return []
    entries = yaml.safe_load(path.read_text()) or []
    if not isinstance(entries, list):
        raise ReviewError(f"{ACKNOWLEDGMENTS} must be a list of acknowledgments")
    for entry in entries:
        missing = {"environment", "stack", "resource", "change", "reason"} - set(entry or {})
        if missing or not str(entry.get("reason", "")).strip() or entry.get("change") not in CHANGES:
            raise ReviewError(f"{ACKNOWLEDGMENTS}: each entry needs environment, stack, resource, change (replace, "
                              f"delete, or export for an export in use) and a reason; found {entry!r}")
    return entries


def acknowledged(loss: Loss | BlockedExport, entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    for entry in entries:
        if (entry["environment"], entry["stack"], entry["resource"], entry["change"]) == (
                loss.environment, loss.stack, loss.resource, loss.change):
            return entry
    return None


# ------------------------------------------------------------------------------------------------- the report


def losses(diffs: Mapping[str, Mapping[str, Any]]) -> list[Loss]:
    found = []
    for env, stacks in sorted(diffs.items()):
        for stack, diff in sorted(stacks.items()):
            for change in diff["resources"]:
                if change["type"] in STATEFUL_TYPES and change["impact"] in LOSSY:
                    lossy = tuple(p for p, impact in change["properties"].items() if "REPLACE" in impact)
                    found.append(Loss(env, stack, change["id"], change["type"], change["impact"], lossy))
    return found


def _money(value: Any) -> str:
    return "n/a" if value is None else f"{value:,.2f}"


def _shape(summary: Mapping[str, Any]) -> str:
    return " + ".join(f"{i['type']} x {i['count']}" for i in summary.get("instances", [])) or "?"


def _cost(summary: Mapping[str, Any] | None) -> str:
    """The cost per hour, then each fallback type's (a capacity relaunch may run on any of them)."""
    if summary is None:
        return "-"
    fallbacks = summary.get("fallback_cost_per_hour_usd") or {}
    return _money(summary.get("cost_per_hour_usd")) + "".join(
        f"<br>fallback {t}: {_money(c)}" for t, c in fallbacks.items())


def workload_changes(env: str, base: Assembly, head: Assembly) -> list[str]:
    before, after = base.workloads(env), head.workloads(env)
    rows = ["| Workload | Change | Stack | Instances | Strategy | $/hour before | $/hour after |",
            "|---|---|---|---|---|---|---|"]
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if old is None:
            what = "added"
        elif new is None:
            what = "removed"
        elif "instances" not in old:
            what = "changed (the base revision predates workload summaries: compared by name only)"
        else:
            what = ", ".join(k for k in ("instances", "fallback_instance_types", "image", "strategy", "hyperparameters",
                                         "inputs", "max_run", "max_instance_count", "stack")
                             if old.get(k) != new.get(k)) or "definition"
        current = new or old or {}
        rows.append(f"| {name} | {what} | {current.get('stack', '')} | {_shape(current)} | {current.get('strategy', '')} "
                    f"| {_cost(old)} | {_cost(new)} |")
    return rows if len(rows) > 2 else ["No workload changes."]


def other_changes(env: str, stacks: Mapping[str, Any]) -> list[str]:
    rows = ["| Stack | Resource | Type | Change | Properties |", "|---|---|---|---|---|"]
    for stack, diff in sorted(stacks.items()):
        for change in diff["resources"]:
            if change["type"] in STATEFUL_TYPES and change["impact"] in LOSSY:
                continue
            words = {"WILL_CREATE": "added", "WILL_UPDATE": "changed", "WILL_REPLACE": "replaced",
                     "MAY_REPLACE": "may be replaced", "WILL_DESTROY": "removed", "WILL_ORPHAN": "orphaned"}
            props = ", ".join(sorted(change["properties"]) + change["other"])
            rows.append(f"| {stack} | {change['id']} | {change['type']} | {words.get(change['impact'], change['impact'])} "
                        f"| {props} |")
        if diff.get("permissionsBroadened"):
            rows.append(f"| {stack} | (IAM) | | **permissions broadened** | see the permission changes below |")
    return rows if len(rows) > 2 else ["No other resource changes."]


def _cell(text: Any) -> str:
    """A table cell of the diff engine's summary as Markdown: its line breaks as <br>, pipes escaped."""
    return str(text).strip().replace("|", "\\|").replace("\n", "<br>")


def summary_tables(stacks: Mapping[str, Any], key: str) -> list[str]:
    """One Markdown table of the diff engine's summary `key` (iamStatements, managedPolicies, securityGroupRules)
    over every stack of an environment, with the stack as the first column; [] when nothing changed."""
    header: list[str] | None = None
    rows = []
    for stack, diff in sorted(stacks.items()):
        table = diff.get(key) or []
        if len(table) < 2:
            continue
        header = header or ["Stack", "", *table[0][1:]]
        rows += [f"| {stack} | {' | '.join(_cell(c) for c in row)} |" for row in table[1:]]
    if header is None:
        return []
    return [f"| {' | '.join(header)} |", "|" + "---|" * len(header), *rows]


def permission_changes(stacks: Mapping[str, Any]) -> list[str]:
    """The IAM statements, managed-policy attachments and security group rules a change adds (+) or removes (-)."""
    out = []
    for key, title in (("iamStatements", "IAM statements"), ("managedPolicies", "Managed policy attachments"),
                       ("securityGroupRules", "Security group rules")):
        table = summary_tables(stacks, key)
        if table:
            out += [f"{title} (+ added, - removed):", "", *table, ""]
    return out or ["No IAM statement, managed policy attachment or security group rule changes.", ""]


def _loss_line(loss: Loss, base: Assembly) -> str:
    why = f" (because {', '.join(loss.properties)} changed)" if loss.properties else ""
    line = f"- **{loss.environment}/{loss.stack}** `{loss.resource}` ({loss.type}) {LOSSY[loss.impact]}{why}"
    users = base.importers(loss.environment, loss.stack, loss.resource)
    if users:
        line += (f"; stacks {', '.join(users)} import it, and CloudFormation will not replace a value another stack "
                 "imports: what they build on it (a file system in the subnet, say) goes with it")
    return line


def _exports(templates: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    """Export name -> (exporting stack, exported value) over one environment's templates."""
    found = {}
    for stack, template in templates.items():
        for output in template.get("Outputs", {}).values():
            name = (output.get("Export") or {}).get("Name")
            if isinstance(name, str):
                found[name] = (stack, output.get("Value"))
    return found


@dataclass(frozen=True)
class BlockedExport:
    """An export the change removes or changes while stacks of the base import it."""

    environment: str
    stack: str
    export: str
    what: str  # "removed" | "changed"
    importers: tuple[str, ...]
    change = "export"

    @property
    def resource(self) -> str:
        return self.export

    def line(self) -> str:
        return (f"- **{self.environment}/{self.stack}** export `{self.export}` {self.what} while "
                f"{', '.join(self.importers)} import it: CloudFormation refuses the {self.environment}/{self.stack} "
                "update, so the deploy stops there. Keep the export one more release (`Stack.export_value`), deploy, "
                "then remove it")

    def acknowledgment(self) -> str:
        return yaml.safe_dump([{"environment": self.environment, "stack": self.stack, "resource": self.export,
                                "change": self.change, "reason": "<why no deployed stack imports it>"}],
                              sort_keys=False)


def blocked_exports(base: Assembly, head: Assembly) -> list[BlockedExport]:
    """Exports the change removes or changes while a stack of the base imports them: CloudFormation refuses to delete
    or update an export in use ("Export ... cannot be deleted as it is in use by ..."), and the exporting stack
    deploys before its importers, so the deploy stops there. The fix is two deploys: keep the export (AWS CDK
    `Stack.export_value`) until the importers no longer use it, then remove it."""
    blocked = []
    for env in sorted(base.templates):
        before, after = _exports(base.templates[env]), _exports(head.templates.get(env, {}))
        for name, (stack, value) in sorted(before.items()):
            if name in after and after[name][1] == value:
                continue
            users = tuple(sorted(other for other, template in base.templates[env].items()
                                 if other != stack and f'{{"Fn::ImportValue": "{name}"}}' in json.dumps(template)))
            if users:
                blocked.append(BlockedExport(env, stack, name, "removed" if name not in after else "changed", users))
    return blocked


def render(base_ref: str, base: Assembly, head: Assembly, diffs: dict[str, dict[str, Any]],
           entries: list[dict[str, Any]], warnings: list[str]) -> tuple[str, int]:
    lost = losses(diffs)
    unacknowledged = [loss for loss in lost if acknowledged(loss, entries) is None]
    out = [f"## Infrastructure review against `{base_ref[:12]}`", ""]
    blocked = blocked_exports(base, head)
    stuck = [b for b in blocked if acknowledged(b, entries) is None]
    if stuck:
        out += [f"### :no_entry: {len(stuck)} export(s) in use would be removed or changed: the deploy fails", "",
                *[b.line() for b in stuck], "", "If no deployed stack imports it (say, the base never deployed), "
                f"acknowledge it in `{ACKNOWLEDGMENTS}` with the reason:", "",
                "```yaml", *"".join(b.acknowledgment() for b in stuck).splitlines(), "```", ""]
    if unacknowledged:
        out += [f"### :rotating_light: {len(unacknowledged)} stateful resource(s) would be replaced or removed", "",
                "Data in them would be lost or left behind. If this is intended, acknowledge each one in "
                f"`{ACKNOWLEDGMENTS}` at the root of the repository with the reason, e.g.:", ""]
        out += [_loss_line(loss, base) for loss in unacknowledged]
        out += ["", "```yaml", *"".join(loss.acknowledgment() for loss in unacknowledged).splitlines(), "```", ""]
    for b in blocked:
        match = acknowledged(b, entries)
        if match is not None:
            out.append(f"- acknowledged: {b.environment}/{b.stack} export `{b.export}` {b.what}: {match['reason']}")
    for entry in entries:
        changes: list[Loss | BlockedExport] = [*lost, *blocked]
        if not any(acknowledged(change, [entry]) for change in changes):
            warnings = [*warnings, f"{ACKNOWLEDGMENTS}: {entry['environment']}/{entry['stack']} {entry['resource']} "
                        f"({entry['change']}) matches no change of this revision; remove it once the change is merged"]
    for loss in lost:
        match = acknowledged(loss, entries)
        if match is not None:
            out.append(f"- acknowledged: {loss.environment}/{loss.stack} `{loss.resource}` ({loss.type}) "
                       f"{LOSSY[loss.impact]}: {match['reason']}")
    if out[-1] != "":
        out.append("")  # the acknowledged lines end their list
    if not lost:
        out += ["No stateful resource (file system, bucket, key, repository, log group, VPC, subnet) is replaced or "
                "removed.", ""]
    for env in sorted(set(base.templates) | set(head.templates)):
        out += [f"### {env}", "", "#### Workloads", "", *workload_changes(env, base, head), "",
                "#### Schedules and monthly budget", "",
                *review_lines(base.templates.get(env, {}), head.templates.get(env, {})), "",
                "#### Other resource changes", "", *other_changes(env, diffs.get(env, {})), "",
                "#### Permission changes", "", *permission_changes(diffs.get(env, {})),
                "#### Where each workload lives", ""]
        where = {name: s["stack"] for name, s in head.workloads(env).items()}
        out += [", ".join(f"{name}: {stack}" for name, stack in sorted(where.items())) or "no workloads", ""]
    out += ["### Checks", "", f"- cdk-nag (this revision): {head.nag or 'no validation report'}"]
    out += [f"- warning: {w}" for w in warnings]
    return "\n".join(out) + "\n", 1 if unacknowledged or stuck else 0


def review(args: argparse.Namespace) -> int:
    project = project_of(args)
    root = project.root
    try:
        base_ref = args.base or default_base(root)
        entries = load_acknowledgments(root)
        with tempfile.TemporaryDirectory(prefix="review-out-") as tmp:
            print(f"synthesizing the base revision {base_ref[:12]} and the working tree ...", file=sys.stderr,
                  flush=True)
            with worktree(root, base_ref) as tree, ThreadPoolExecutor(max_workers=2) as pool:
                # Two processes at once: each is mostly the CDK's own start-up and synthesis.
                jobs = [pool.submit(synthesize, tree, Path(tmp) / "base", "base"),
                        pool.submit(synthesize, root, Path(tmp) / "head", "working-tree")]
                for job in jobs:
                    job.result()
            base, head = read_assembly(Path(tmp) / "base"), read_assembly(Path(tmp) / "head")
            diffs = template_diffs(root, base, head)
    except ReviewError as error:
        print(f"review stopped: {error}", file=sys.stderr)
        return 2
    warnings = _validation_warnings(project)
    report, code = render(base_ref, base, head, diffs, entries, warnings)
    sys.stdout.write(report)
    return code


def _validation_warnings(project: Project) -> list[str]:
    from compiler.pipeline import compile_project

    try:
        return compile_project(project).warnings
    except Exception as error:  # the synth above already passed; report rather than fail the review
        return [f"could not list validation warnings: {error}"]


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="compare the working tree with a base revision: a Markdown report for pull requests")
    p.add_argument("--base", default=None, help="commit or branch to compare with (default: the merge base with the "
                   "main branch)")
    p.set_defaults(func=review)
