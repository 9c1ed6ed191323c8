"""One environment's changes as the report tables them: workloads (shape, strategy and cost before and after), every
other resource change with its values, and the permissions added or removed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.facts.summaries import WorkloadSummary
from trainctl.common.money import money
from trainctl.review.assembly import Assembly
from trainctl.review.findings import LOSSY, STATEFUL_TYPES
from trainctl.review.template_diff import shown, value_changes


def _cost(summary: WorkloadSummary | None) -> str:
    """The cost per hour, then each fallback type's (a capacity relaunch may run on any of them)."""
    if summary is None:
        return "-"
    fallbacks = summary.fallback_cost_per_hour_usd or {}
    return money(summary.cost_per_hour_usd, sign=False) + "".join(f"<br>fallback {t}: {money(c, sign=False)}"
                                                                 for t, c in fallbacks.items())


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
