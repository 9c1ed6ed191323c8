"""The review as one Markdown report: a summary per environment, then what would fail or lose data, first and loud,
each with the acknowledgment that would accept it; then each environment's changes (changes.py), the long ones in
collapsed sections; then the checks. The exit status is 1 while any of the loud ones is not acknowledged.

The report is a list of parts (`Part`): what a reviewer must see (the summary, every failing finding, the workloads)
and details. `Report.fit` gives the same report within a size (a pull-request comment's), leaving out details,
largest first, with a pointer to where the full report is.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from trainctl.common.money import SPOT_NOTE
from trainctl.project.schedule_report import review_lines
from trainctl.review.acknowledgments import ACKNOWLEDGMENTS, acknowledged
from trainctl.review.assembly import Assembly
from trainctl.review.changes import (
    other_changes,
    other_counts,
    permission_changes,
    permission_counts,
    workload_changes,
    workload_counts,
)
from trainctl.review.findings import LOSSY, BlockedExport, Loss, Unretained, blocked_exports, losses, unretained
from trainctl.review.names import NameClash, departed_line, departed_stacks, name_clashes
from trainctl.review.template_diff import ValueChange

Change = Loss | BlockedExport | NameClash | Unretained
C = TypeVar("C", Loss, BlockedExport, NameClash, Unretained)
Entries = list[dict[str, Any]]  # acknowledged-changes.yaml


@dataclass(frozen=True)
class Findings:
    """What a change would lose or break, by kind: stateful losses, exports in use, names still taken, data no
    longer retained."""

    lost: list[Loss]
    blocked: list[BlockedExport]
    clashes: list[NameClash]
    unretained: list[Unretained]

    @classmethod
    def of(cls, base: Assembly, head: Assembly, diffs: dict[str, dict[str, Any]]) -> Findings:
        return cls(losses(diffs), blocked_exports(base, head, diffs), name_clashes(base, head, diffs),
                   unretained(base, head))

    def unacknowledged(self, entries: Entries) -> Findings:
        """The findings no entry of acknowledged-changes.yaml accepts: each one fails the review."""
        return Findings(_open(self.lost, entries), _open(self.blocked, entries), _open(self.clashes, entries),
                        _open(self.unretained, entries))

    def all(self) -> list[Change]:
        return [*self.lost, *self.blocked, *self.clashes, *self.unretained]


def _open(changes: list[C], entries: Entries) -> list[C]:
    return [c for c in changes if acknowledged(c, entries) is None]


@dataclass(frozen=True)
class Part:
    """Lines of the report: always shown (`title` None), or a detail, collapsed under its title, that a report which
    must fit a size may leave out."""

    lines: list[str]
    title: str | None = None

    def markdown(self, *, left_out: str | None = None) -> list[str]:
        if self.title is None:
            return self.lines
        body = [left_out] if left_out is not None else self.lines
        return [f"<details><summary>{html.escape(self.title, quote=False)}</summary>", "", *body, "", "</details>", ""]


@dataclass
class Report:
    parts: list[Part] = field(default_factory=list)
    status: int = 0

    def full(self) -> str:
        return "\n".join(line for part in self.parts for line in part.markdown()) + "\n"

    def fit(self, limit: int, elsewhere: str) -> str:
        """The report in at most `limit` bytes (GitHub counts a comment's characters, and bytes are never fewer):
        details left out, largest first, each saying where it is (`elsewhere`, e.g. a link to the full report); if
        what must be seen is still too long, cut at a line, closing a code fence or details block left open."""
        note = f"Left out here to fit a comment: {elsewhere}"
        left_out: set[int] = set()
        by_size = sorted((i for i, p in enumerate(self.parts) if p.title is not None),
                         key=lambda i: -sum(_size(line) + 1 for line in self.parts[i].lines))

        def text() -> str:
            return "\n".join(line for i, part in enumerate(self.parts)
                             for line in part.markdown(left_out=note if i in left_out else None)) + "\n"

        out = text()
        for index in by_size:
            if _size(out) <= limit:
                return out
            left_out.add(index)
            out = text()
        if _size(out) <= limit:
            return out
        cut = f"\n**The report is cut here to fit a comment.** {elsewhere}\n"
        closing = "\n```" + "\n</details>" * 8  # the most a cut can leave open, and more
        room = out.encode()[:max(limit - _size(cut) - _size(closing), 0)].decode(errors="ignore")
        kept = room[:max(room.rfind("\n"), 0)]
        return kept + _close(kept) + cut


def _size(text: str) -> int:
    return len(text.encode())


def _close(kept: str) -> str:
    """What ends the code fence and the details blocks a cut left open, so the note after it renders as text."""
    lines = kept.splitlines()
    fence = "\n```" if sum(line.lstrip().startswith("```") for line in lines) % 2 else ""
    opened = sum(line.count("<details>") for line in lines) - sum(line.count("</details>") for line in lines)
    return fence + "\n</details>" * max(opened, 0)


def render(base_ref: str, base: Assembly, head: Assembly, diffs: dict[str, dict[str, Any]],
           entries: Entries, warnings: list[str]) -> tuple[str, int]:
    """The full report, and the review's exit status (1 while a finding is not acknowledged)."""
    report = build(base_ref, base, head, diffs, entries, warnings)
    return report.full(), report.status


def build(base_ref: str, base: Assembly, head: Assembly, diffs: dict[str, dict[str, Any]],
          entries: Entries, warnings: list[str]) -> Report:
    """The report's parts and the review's exit status."""
    found = Findings.of(base, head, diffs)
    open_ = found.unacknowledged(entries)
    envs = sorted(set(base.templates) | set(head.templates))
    loud = [*_blocked_exports(open_.blocked), *_name_clashes(open_.clashes, base), *_departed_stacks(base, head),
            *_unretained(open_.unretained), *_losses(open_.lost, base), *_acknowledged(found, entries)]
    if not found.lost:
        loud += ["No stateful resource (file system, bucket, key, repository, log group, VPC, subnet) is replaced or "
                 "removed.", ""]
    parts = [Part([f"## Infrastructure review against `{base_ref[:12]}`", "", *_verdict(open_),
                   *_summary(envs, base, head, diffs), *loud])]
    for env in envs:
        parts += _environment(env, base, head, diffs)
    parts += _checks(head, [*warnings, *_unmatched(entries, found)])
    return Report(parts, 1 if open_.all() else 0)


def _verdict(open_: Findings) -> list[str]:
    count = len(open_.all())
    if count:
        return [f"**:no_entry: {count} finding(s) below fail the review until fixed or acknowledged in "
                f"`{ACKNOWLEDGMENTS}`.**", ""]
    return ["Nothing in this change fails the review.", ""]


def _summary(envs: list[str], base: Assembly, head: Assembly, diffs: dict[str, dict[str, Any]]) -> list[str]:
    """One row per environment: what its workloads, resources and permissions do."""
    rows = ["| Environment | Workloads | Other resources | Permissions |", "|---|---|---|---|"]
    for env in envs:
        state = " (new)" if env not in base.templates else " (removed from the app)" if env not in head.templates else ""
        rows.append(f"| {env}{state} | {workload_counts(env, base, head)} | {other_counts(diffs.get(env, {}))} "
                    f"| {permission_counts(diffs.get(env, {}))} |")
    return [*rows, ""]


def _yaml(changes: Sequence[Change]) -> list[str]:
    """The acknowledgments that would accept `changes`, as a YAML block to paste."""
    return ["```yaml", *"".join(c.acknowledgment() for c in changes).splitlines(), "```"]


def _blocked_exports(stuck: list[BlockedExport]) -> list[str]:
    if not stuck:
        return []
    return [f"### :no_entry: {len(stuck)} export(s) in use would be removed or changed: the deploy fails", "",
            *[b.line() for b in stuck], "", "If no deployed stack imports it (say, the base never deployed), "
            f"acknowledge it in `{ACKNOWLEDGMENTS}` with the reason:", "", *_yaml(stuck), ""]


def _name_clashes(taken: list[NameClash], base: Assembly) -> list[str]:
    if not taken:
        return []
    return [f"### :no_entry: {len(taken)} named resource(s) would be created while the name is taken: the deploy "
            "fails", "", *[c.line(base) for c in taken], "", "Once the old one goes first as said, acknowledge each in "
            f"`{ACKNOWLEDGMENTS}` with how:", "", *_yaml(taken), ""]


def _departed_stacks(base: Assembly, head: Assembly) -> list[str]:
    departed = departed_stacks(base, head)
    if not departed:
        return []
    return [f"### :warning: {len(departed)} stack(s) leave the app and stay deployed", "",
            *[departed_line(env, stack, base, head) for env, stack in departed], ""]


def _unretained(exposed: list[Unretained]) -> list[str]:
    if not exposed:
        return []
    return [f"### :warning: {len(exposed)} stateful resource(s) would no longer be retained", "",
            *[u.line() for u in exposed], "", f"If that is intended, acknowledge each in `{ACKNOWLEDGMENTS}`:", "",
            *_yaml(exposed), ""]


def _losses(unacknowledged: list[Loss], base: Assembly) -> list[str]:
    if not unacknowledged:
        return []
    return [f"### :rotating_light: {len(unacknowledged)} stateful resource(s) would be replaced or removed", "",
            "Data in them would be lost or left behind. If this is intended, acknowledge each one in "
            f"`{ACKNOWLEDGMENTS}` at the root of the repository with the reason, e.g.:", "",
            *[_loss_line(loss, base) for loss in unacknowledged], "", *_yaml(unacknowledged), ""]


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


def _acknowledged(found: Findings, entries: Entries) -> list[str]:
    """One line per acknowledged finding with its reason (exports, names, retention, then losses), closing the list."""
    described: list[tuple[Change, str]] = [
        *((b, f"{b.environment}/{b.stack} export `{b.export}` {b.what}") for b in found.blocked),
        *((c, f"{c.environment}/{c.stack} `{c.resource}` named `{c.name}`") for c in found.clashes),
        *((u, f"{u.environment}/{u.stack} `{u.resource}` no longer retained") for u in found.unretained),
        *((loss, f"{loss.environment}/{loss.stack} `{loss.resource}` ({loss.type}) {LOSSY[loss.impact]}")
          for loss in found.lost)]
    lines = [f"- acknowledged: {text}: {match['reason']}" for item, text in described
             if (match := acknowledged(item, entries)) is not None]
    return [*lines, ""] if lines else []


def _unmatched(entries: Entries, found: Findings) -> list[str]:
    """A warning for each acknowledgment no finding of this revision needs (left over from a merged change)."""
    changes = found.all()
    return [f"{ACKNOWLEDGMENTS}: {entry['environment']}/{entry['stack']} {entry['resource']} ({entry['change']}) "
            "matches no change of this revision; remove it once the change is merged"
            for entry in entries if not any(acknowledged(change, [entry]) for change in changes)]


def _environment(env: str, base: Assembly, head: Assembly, diffs: dict[str, dict[str, Any]]) -> list[Part]:
    """One environment's changes: workloads, schedules and budget, then (collapsed) the other resources, the
    permissions, and where each workload lives."""
    stacks = diffs.get(env, {})
    where = {name: placed.stack for name, placed in head.workloads(env).items()}
    before, after = base.workloads(env), head.workloads(env)
    spot = any(placed.summary.spot for name in set(before) | set(after) if before.get(name) != after.get(name)
               for placed in (before.get(name), after.get(name)) if placed is not None)
    return [Part([f"### {env}", "", "#### Workloads", "", *workload_changes(env, base, head), "",
                  *([SPOT_NOTE, ""] if spot else []), "#### Schedules and monthly budget", "",
                  *review_lines(base.templates.get(env, {}), head.templates.get(env, {})), ""]),
            Part(["#### Other resource changes", "", *other_changes(stacks, env, base, head)],
                 f"Other resource changes in {env}: {other_counts(stacks)}"),
            Part(["#### Permission changes", "", *permission_changes(stacks)],
                 f"Permission changes in {env}: {permission_counts(stacks)}"),
            Part(["#### Where each workload lives", "",
                  ", ".join(f"{name}: {stack}" for name, stack in sorted(where.items())) or "no workloads"],
                 f"Where each workload lives in {env}")]


def _checks(head: Assembly, warnings: list[str]) -> list[Part]:
    parts = [Part(["### Checks", "", f"- cdk-nag (this revision): {head.nag or 'no validation report'}", ""])]
    if warnings:
        parts.append(Part([f"- warning: {w}" for w in warnings], f"{len(warnings)} warning(s) of validation"))
    return parts
