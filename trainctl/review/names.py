"""What a change asks CloudFormation to create under a name that is still taken, and the stacks `cdk deploy` leaves.

CloudFormation creates a resource's new version before it deletes the old one, within a stack update and across
stacks alike (a stack deploys on its own, and `cdk deploy` never deletes a stack that left the app). A resource with
an explicit name (a state machine's `StateMachineName`, a schedule's `Name`) therefore cannot:

- be replaced: "If you specify a name, you can't perform updates that require replacement of this resource"
  (CloudFormation User Guide, "Name type");
- move to another logical ID or another stack while the old one holds the name: a create handler fails with
  `AlreadyExists` when the resource exists (CloudFormation CLI, "Resource type handler contracts"). What moves
  workloads between stacks: `workload_shards` (compiler/compilation/stack_layout.py).

A name here is one the service spec says must be unique in the account and region (template_diff.js, `nameProperties`:
its physical ID or part of its ARN, such as `StateMachineName` or a schedule's `Name`), given as a literal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from trainctl.review.assembly import Assembly

REPLACED = ("WILL_REPLACE", "MAY_REPLACE")


def _named(stacks: Mapping[str, Any], side: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(type, name) -> (stack, logical ID) over one environment's stack diffs, before (`old`) or after (`new`)."""
    found = {}
    for stack, diff in sorted(stacks.items()):
        for logical_id, (kind, name) in sorted((diff.get("names") or {}).get(side, {}).items()):
            found[(kind, name)] = (stack, logical_id)
    return found


@dataclass(frozen=True)
class NameClash:
    """A named resource the change creates while its name is still taken: by the resource it moves from (another
    logical ID or another stack), or by itself when the change replaces it."""

    environment: str
    stack: str  # where the change creates it
    resource: str  # its logical ID there
    type: str
    name: str
    old_stack: str
    old_resource: str
    old_stack_leaves: bool  # the old stack is no longer in the app: `cdk deploy` leaves it as it is
    change = "name"

    @property
    def replaced(self) -> bool:
        return (self.old_stack, self.old_resource) == (self.stack, self.resource)

    def line(self, base: Assembly) -> str:
        env, where = self.environment, f"**{self.environment}/{self.stack}** `{self.resource}` ({self.type})"
        if self.replaced:
            return (f"- {where} named `{self.name}` would be replaced: CloudFormation cannot replace a resource with "
                    "an explicit name. Change its name in the same change, or delete it in one deploy and create it "
                    "in the next")
        line = f"- {where} named `{self.name}` moves from {env}/{self.old_stack} `{self.old_resource}`: "
        if self.old_stack_leaves:
            return line + (f"{env}/{self.old_stack} leaves the app and `cdk deploy` leaves it deployed, holding the "
                           f"name, so the create fails. Delete it first ({delete_stack(base, env, self.old_stack)}), "
                           "then deploy")
        if self.old_stack == self.stack:
            return line + ("CloudFormation creates the new resource before it deletes the old one, so the create "
                           "fails. Remove it in one deploy and add it back in the next")
        return line + (f"the create fails while {env}/{self.old_stack} still holds it. Deploy "
                       f"`'{env}/{self.old_stack}'` alone first (it deletes the old one), then the rest")

    def acknowledgment(self) -> str:
        return yaml.safe_dump([{"environment": self.environment, "stack": self.stack, "resource": self.resource,
                                "change": self.change, "reason": "<how the old one goes first>"}], sort_keys=False)


def name_clashes(base: Assembly, head: Assembly, diffs: Mapping[str, Mapping[str, Any]]) -> list[NameClash]:
    """Named resources that move to another logical ID or stack, and named resources the change replaces."""
    found = []
    for env in sorted(set(base.templates) & set(head.templates)):
        stacks = diffs.get(env, {})
        before, after = _named(stacks, "old"), _named(stacks, "new")
        for (kind, name), (stack, logical_id) in sorted(after.items()):
            old = before.get((kind, name))
            if old is not None and old != (stack, logical_id):
                found.append(NameClash(env, stack, logical_id, kind, name, *old,
                                       old_stack_leaves=old[0] not in head.templates[env]))
        for stack, diff in sorted(stacks.items()):
            names = diff.get("names") or {}
            for change in diff["resources"]:
                named = names.get("new", {}).get(change["id"])
                if change["impact"] in REPLACED and named is not None and named == names.get("old", {}).get(change["id"]):
                    found.append(NameClash(env, stack, change["id"], change["type"], named[1], stack, change["id"],
                                           old_stack_leaves=False))
    return found


def departed_stacks(base: Assembly, head: Assembly) -> list[tuple[str, str]]:
    """(environment, stack) of the base that the change no longer synthesizes: `cdk deploy` does not delete a stack
    that left the app, so whatever it holds (a removed workload's state machine and schedule) stays deployed."""
    return [(env, stack) for env in sorted(base.templates) for stack in sorted(base.templates[env])
            if stack not in head.templates.get(env, {})]


def delete_stack(base: Assembly, env: str, stack: str) -> str:
    """The commands that delete a stack the app no longer has (`cdk destroy` finds only the app's own stacks)."""
    name = base.stack_name(env, stack)
    return (f"`aws cloudformation delete-stack --stack-name {name}`, then "
            f"`aws cloudformation wait stack-delete-complete --stack-name {name}`")


def departed_line(env: str, stack: str, base: Assembly, head: Assembly) -> str:
    """What a stack that leaves the app held, and how to delete it."""
    machines = sorted(name for name, placed in base.workloads(env).items() if placed.stack == stack)
    what = f" (workloads: {', '.join(machines)})" if machines else ""
    gone = [name for name in machines if name not in head.workloads(env)]
    scheduled = any(r.get("Type") == "AWS::Scheduler::Schedule"
                    for r in (base.templates[env][stack].get("Resources") or {}).values())
    keeps = (f"; until then {'the state machines' if len(gone) > 1 else 'the state machine'} of {', '.join(gone)} "
             f"{'stay' if len(gone) > 1 else 'stays'}" + (", and its schedule still starts runs" if scheduled else "")
             if gone else "")
    return (f"- **{env}/{stack}**{what} leaves the app: `cdk deploy` does not delete a stack, so it stays deployed as "
            f"it is. Delete it: {delete_stack(base, env, stack)}{keeps}")
