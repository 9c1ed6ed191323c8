"""One environment's changes as the report tables them: workloads (shape, strategy and cost before and after), every
other resource change with its values, and the permissions added or removed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.facts.summaries import WorkloadSummary
from trainctl.common.money import hourly_cell
from trainctl.review.assembly import Assembly
from trainctl.review.findings import LOSSY, STATEFUL_TYPES
from trainctl.review.template_diff import shown, value_changes


def _cost(summary: WorkloadSummary | None) -> str:
    """The cost per hour, then each fallback type's (a capacity relaunch may run on any of them)."""
    return "-" if summary is None else hourly_cell(summary)


# What a workload change shows, in this order (its cost has columns of its own; gpus and efa follow the instances).
COMPARED = ("instances", "fallback_instance_types", "image", "strategy", "hyperparameters", "inputs", "max_run",
            "max_instance_count", "spot")


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


WORDS = {"WILL_CREATE": "added", "WILL_UPDATE": "changed", "WILL_REPLACE": "replaced", "MAY_REPLACE": "may be replaced",
         "WILL_DESTROY": "removed", "WILL_ORPHAN": "orphaned"}


def kind(resource_type: str) -> str:
    """A resource type as a reviewer reads it: `IAM::Role` (AWS's own prefix left out), `Custom::AWS` as it is."""
    return resource_type.removeprefix("AWS::")


def _others(stacks: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(stack, change) of every resource change but the stateful losses, which the report lists first."""
    return [(stack, change) for stack, diff in sorted(stacks.items()) for change in diff["resources"]
            if not (change["type"] in STATEFUL_TYPES and change["impact"] in LOSSY)]


def other_counts(stacks: Mapping[str, Any]) -> str:
    """`57 added (12 IAM::Role, 12 StepFunctions::StateMachine, ...), 2 changed`: the other changes in one line."""
    by_word: dict[str, dict[str, int]] = {}
    for _, change in _others(stacks):
        kinds = by_word.setdefault(WORDS.get(change["impact"], change["impact"]), {})
        kinds[kind(change["type"])] = kinds.get(kind(change["type"]), 0) + 1
    parts = []
    for word, kinds in by_word.items():
        top = sorted(kinds.items(), key=lambda item: (-item[1], item[0]))
        shown = ", ".join(f"{n} {k}" for k, n in top[:4]) + (", ..." if len(top) > 4 else "")
        parts.append(f"{sum(kinds.values())} {word} ({shown})")
    return "; ".join(parts) or "none"


def other_changes(stacks: Mapping[str, Any], env: str = "", base: Assembly | None = None,
                  head: Assembly | None = None) -> list[str]:
    """Every resource change but the losses (listed first), each by the name its construct has in the app (the
    workload first, for a workload's resources) and its kind, then its stack, the change, each changed value with its
    old and new value, and the logical ID last."""
    rows = ["| Resource | Kind | Stack | Change | Values | Logical ID |", "|---|---|---|---|---|---|"]
    for stack, change in sorted(_others(stacks), key=lambda item: (item[0], _name(env, item[0], item[1]["id"],
                                                                                  base, head))):
        values = [_cell(c.text()) + (" (replaces it)" if c.replaces == "yes" else "")
                  for c in value_changes(change)] + [_cell(o) for o in change["other"]]
        rows.append(f"| {_cell(_name(env, stack, change['id'], base, head))} | {kind(change['type'])} | {stack} "
                    f"| {WORDS.get(change['impact'], change['impact'])} | {'<br>'.join(values)} | `{change['id']}` |")
    rows += [f"| (IAM) | | {stack} | **permissions broadened** | see the permission changes | |"
             for stack, diff in sorted(stacks.items()) if diff.get("permissionsBroadened")]
    return rows if len(rows) > 2 else ["No other resource changes."]


def _name(env: str, stack: str, resource: str, base: Assembly | None, head: Assembly | None) -> str:
    """The resource's construct path (`gpt-smddp/ExecutionRole`) in the revision that has it, else its logical ID."""
    for side in (head, base):
        path = side.path(env, stack, resource) if side is not None else None
        if path:
            return path
    return resource


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


PERMISSION_TABLES = {"iamStatements": "IAM statements", "managedPolicies": "Managed policy attachments",
                     "securityGroupRules": "Security group rules"}
_COUNTED = {"iamStatements": "IAM statements", "managedPolicies": "managed policy attachments",
            "securityGroupRules": "security group rules"}


def permission_counts(stacks: Mapping[str, Any]) -> str:
    """`14 IAM statements, 6 security group rules` added or removed (a table's rows below its header); `none`."""
    counts = {label: sum(max(len(diff.get(key) or []) - 1, 0) for diff in stacks.values())
              for key, label in _COUNTED.items()}
    return ", ".join(f"{n} {label}" for label, n in counts.items() if n) or "none"


def workload_counts(env: str, base: Assembly, head: Assembly) -> str:
    """`2 added, 1 changed`: the environment's workload changes in one line; `none`."""
    before, after = base.workloads(env), head.workloads(env)
    counts = {"added": len(set(after) - set(before)), "removed": len(set(before) - set(after)),
              "changed": sum(1 for name in set(before) & set(after) if before[name] != after[name])}
    return ", ".join(f"{n} {word}" for word, n in counts.items() if n) or "none"


def permission_changes(stacks: Mapping[str, Any]) -> list[str]:
    """The IAM statements, managed-policy attachments and security group rules a change adds (+) or removes (-)."""
    out = []
    for key, title in PERMISSION_TABLES.items():
        table = summary_tables(stacks, key)
        if table:
            out += [f"{title} (+ added, - removed):", "", *table, ""]
    return out or ["No IAM statement, managed policy attachment or security group rule changes.", ""]
