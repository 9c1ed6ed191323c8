"""The review as one Markdown report: losses first and loud, then each environment's changes, then the checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.facts.summaries import WorkloadSummary
from trainctl.review.acknowledgments import ACKNOWLEDGMENTS, acknowledged
from trainctl.review.assembly import Assembly
from trainctl.review.findings import (
    LOSSY,
    STATEFUL_TYPES,
    BlockedExport,
    Loss,
    Unretained,
    blocked_exports,
    losses,
    unretained,
)
from trainctl.review.names import NameClash, departed_line, departed_stacks, name_clashes
from trainctl.review.template_diff import ValueChange, shown, value_changes
from trainctl.schedule_report import review_lines


def _money(value: Any) -> str:
    return "n/a" if value is None else f"{value:,.2f}"


def _cost(summary: WorkloadSummary | None) -> str:
    """The cost per hour, then each fallback type's (a capacity relaunch may run on any of them)."""
    if summary is None:
        return "-"
    fallbacks = summary.fallback_cost_per_hour_usd or {}
    return _money(summary.cost_per_hour_usd) + "".join(f"<br>fallback {t}: {_money(c)}" for t, c in fallbacks.items())


# What a workload change shows, in this order (its cost has columns of its own; gpus and efa follow the instances).
COMPARED = ("instances", "fallback_instance_types", "image", "strategy", "hyperparameters", "inputs", "max_run",
            "max_instance_count")


def summary_changes(old: WorkloadSummary, new: WorkloadSummary) -> list[str]:
    """`field: old -> new` for each compared field that changed; a hyperparameter (or other mapping) by its key."""
    found = []
    for name in COMPARED:
        before, after = getattr(old, name), getattr(new, name)
        if before == after:
            continue
        if name == "instances":
            found.append(f"instances: {old.shape} -> {new.shape}")
        elif isinstance(before, dict) and isinstance(after, dict):
            found += [f"{name}.{key}: {shown(before.get(key))} -> {shown(after.get(key))}"
                      for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]
        else:
            found.append(f"{name}: {shown(before)} -> {shown(after)}")
    return found


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
        elif old.summary.instances is None:
            what = "changed (the base revision predates workload summaries: compared by name only)"
        else:
            moved = [f"stack: {old.stack} -> {new.stack}"] if old.stack != new.stack else []
            what = "<br>".join(_cell(c) for c in [*summary_changes(old.summary, new.summary), *moved]) or "definition"
        current = new or old
        assert current is not None  # one of them is there: the name came from one of them
        rows.append(f"| {name} | {what} | {current.stack} | {current.summary.shape} | {current.summary.strategy or ''} "
                    f"| {_cost(old.summary if old else None)} | {_cost(new.summary if new else None)} |")
    return rows if len(rows) > 2 else ["No workload changes."]


def other_changes(stacks: Mapping[str, Any]) -> list[str]:
    """Every resource change but the losses (listed first), each changed value with its old and new value."""
    words = {"WILL_CREATE": "added", "WILL_UPDATE": "changed", "WILL_REPLACE": "replaced",
             "MAY_REPLACE": "may be replaced", "WILL_DESTROY": "removed", "WILL_ORPHAN": "orphaned"}
    rows = ["| Stack | Resource | Type | Change | Values |", "|---|---|---|---|---|"]
    for stack, diff in sorted(stacks.items()):
        for change in diff["resources"]:
            if change["type"] in STATEFUL_TYPES and change["impact"] in LOSSY:
                continue
            values = [_cell(c.text()) + (" (replaces it)" if c.replaces == "yes" else "")
                      for c in value_changes(change)] + [_cell(o) for o in change["other"]]
            rows.append(f"| {stack} | {change['id']} | {change['type']} | {words.get(change['impact'], change['impact'])} "
                        f"| {'<br>'.join(values)} |")
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


def _cause(change: ValueChange) -> str:
    """`KmsKeyId changed: none -> {...}`; the values left out where they are long."""
    return f"{change.path} changed{change.text()[len(change.path):]}"


def _loss_line(loss: Loss, base: Assembly) -> str:
    why = f" (because {'; '.join(_cause(c) for c in loss.causes)})" if loss.causes else ""
    line = f"- **{loss.environment}/{loss.stack}** `{loss.resource}` ({loss.type}) {LOSSY[loss.impact]}{why}"
    users = base.importers(loss.environment, loss.stack, loss.resource)
    if users:
        line += (f"; stacks {', '.join(users)} import it, and CloudFormation will not replace a value another stack "
                 "imports: what they build on it (a file system in the subnet, say) goes with it")
    return line


def render(base_ref: str, base: Assembly, head: Assembly, diffs: dict[str, dict[str, Any]],
           entries: list[dict[str, Any]], warnings: list[str]) -> tuple[str, int]:
    lost = losses(diffs)
    unacknowledged = [loss for loss in lost if acknowledged(loss, entries) is None]
    out = [f"## Infrastructure review against `{base_ref[:12]}`", ""]
    blocked = blocked_exports(base, head, diffs)
    stuck = [b for b in blocked if acknowledged(b, entries) is None]
    if stuck:
        out += [f"### :no_entry: {len(stuck)} export(s) in use would be removed or changed: the deploy fails", "",
                *[b.line() for b in stuck], "", "If no deployed stack imports it (say, the base never deployed), "
                f"acknowledge it in `{ACKNOWLEDGMENTS}` with the reason:", "",
                "```yaml", *"".join(b.acknowledgment() for b in stuck).splitlines(), "```", ""]
    clashes = name_clashes(base, head, diffs)
    taken = [c for c in clashes if acknowledged(c, entries) is None]
    if taken:
        out += [f"### :no_entry: {len(taken)} named resource(s) would be created while the name is taken: the deploy "
                "fails", "", *[c.line(base) for c in taken], "", "Once the old one goes first as said, acknowledge each in "
                f"`{ACKNOWLEDGMENTS}` with how:", "",
                "```yaml", *"".join(c.acknowledgment() for c in taken).splitlines(), "```", ""]
    departed = departed_stacks(base, head)
    if departed:
        out += [f"### :warning: {len(departed)} stack(s) leave the app and stay deployed", "",
                *[departed_line(env, stack, base, head) for env, stack in departed], ""]
    kept = unretained(base, head)
    exposed = [u for u in kept if acknowledged(u, entries) is None]
    if exposed:
        out += [f"### :warning: {len(exposed)} stateful resource(s) would no longer be retained", "",
                *[u.line() for u in exposed], "", f"If that is intended, acknowledge each in `{ACKNOWLEDGMENTS}`:", "",
                "```yaml", *"".join(u.acknowledgment() for u in exposed).splitlines(), "```", ""]
    if unacknowledged:
        out += [f"### :rotating_light: {len(unacknowledged)} stateful resource(s) would be replaced or removed", "",
                "Data in them would be lost or left behind. If this is intended, acknowledge each one in "
                f"`{ACKNOWLEDGMENTS}` at the root of the repository with the reason, e.g.:", ""]
        out += [_loss_line(loss, base) for loss in unacknowledged]
        out += ["", "```yaml", *"".join(loss.acknowledgment() for loss in unacknowledged).splitlines(), "```", ""]
    described: list[tuple[BlockedExport | NameClash | Unretained, str]] = [
        *((b, f"{b.environment}/{b.stack} export `{b.export}` {b.what}") for b in blocked),
        *((c, f"{c.environment}/{c.stack} `{c.resource}` named `{c.name}`") for c in clashes),
        *((u, f"{u.environment}/{u.stack} `{u.resource}` no longer retained") for u in kept)]
    for item, text in described:
        match = acknowledged(item, entries)
        if match is not None:
            out.append(f"- acknowledged: {text}: {match['reason']}")
    for entry in entries:
        changes: list[Loss | BlockedExport | NameClash | Unretained] = [*lost, *blocked, *clashes, *kept]
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
                "#### Other resource changes", "", *other_changes(diffs.get(env, {})), "",
                "#### Permission changes", "", *permission_changes(diffs.get(env, {})),
                "#### Where each workload lives", ""]
        where = {name: placed.stack for name, placed in head.workloads(env).items()}
        out += [", ".join(f"{name}: {stack}" for name, stack in sorted(where.items())) or "no workloads", ""]
    out += ["### Checks", "", f"- cdk-nag (this revision): {head.nag or 'no validation report'}"]
    out += [f"- warning: {w}" for w in warnings]
    return "\n".join(out) + "\n", 1 if unacknowledged or stuck or taken or exposed else 0
