"""What a change would lose or break: stateful resources replaced or removed, exports in use removed or changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from trainctl.review.assembly import Assembly
from trainctl.review.template_diff import ValueChange, value_changes

# Resources that hold data or identity: replacing or removing one loses what is in it (or breaks what points at it).
STATEFUL_TYPES = frozenset({
    "AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::FSx::FileSystem", "AWS::FSx::DataRepositoryAssociation",
    "AWS::S3::Bucket", "AWS::KMS::Key", "AWS::KMS::Alias", "AWS::ECR::Repository", "AWS::Logs::LogGroup",
    "AWS::EFS::FileSystem", "AWS::SNS::Topic", "AWS::DynamoDB::Table", "AWS::SecretsManager::Secret",
})
LOSSY = {"WILL_REPLACE": "replaced", "MAY_REPLACE": "may be replaced", "WILL_DESTROY": "deleted",
         "WILL_ORPHAN": "removed from the stack (left behind, no longer managed)"}


@dataclass(frozen=True)
class Loss:
    """A stateful resource a change replaces or removes."""

    environment: str
    stack: str
    resource: str
    type: str
    impact: str
    causes: tuple[ValueChange, ...]  # the changes that replace it (none for a removal)

    @property
    def change(self) -> str:
        return "replace" if "REPLACE" in self.impact else "delete"

    def acknowledgment(self) -> str:
        return yaml.safe_dump([{"environment": self.environment, "stack": self.stack, "resource": self.resource,
                                "change": self.change, "reason": "<why this loss is intended>"}], sort_keys=False)


def losses(diffs: Mapping[str, Mapping[str, Any]]) -> list[Loss]:
    found = []
    for env, stacks in sorted(diffs.items()):
        for stack, diff in sorted(stacks.items()):
            for change in diff["resources"]:
                if change["type"] in STATEFUL_TYPES and change["impact"] in LOSSY:
                    causes = tuple(c for c in value_changes(change) if c.replaces != "no")
                    found.append(Loss(env, stack, change["id"], change["type"], change["impact"], causes))
    return found


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
    what: str  # "removed", "changed" or "changed (`<id>`, <type>, is replaced: a new ID)"
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


def _referenced(value: Any) -> set[str]:
    """The logical IDs an export's value reads (`Ref`, `Fn::GetAtt`, inside any other function)."""
    if isinstance(value, list):
        return set().union(*(_referenced(v) for v in value)) if value else set()
    if not isinstance(value, dict):
        return set()
    found = set()
    for key, inner in value.items():
        if key == "Ref" and isinstance(inner, str):
            found.add(inner)
        elif key == "Fn::GetAtt" and isinstance(inner, list) and inner:
            found.add(str(inner[0]))
        else:
            found |= _referenced(inner)
    return found


def _replaced_unflagged(stack_diff: Mapping[str, Any] | None) -> dict[str, str]:
    """Logical ID -> type of the resources a stack's change replaces that are no loss (a security group, a policy):
    the values they export change at deploy though the template's text does not."""
    return {c["id"]: c["type"] for c in (stack_diff or {}).get("resources", [])
            if c["impact"] in ("WILL_REPLACE", "MAY_REPLACE") and c["type"] not in STATEFUL_TYPES}


def blocked_exports(base: Assembly, head: Assembly,
                    diffs: Mapping[str, Mapping[str, Any]] | None = None) -> list[BlockedExport]:
    """Exports the change removes or changes while a stack of the base imports them: CloudFormation refuses to delete
    or update an export in use ("Export ... cannot be deleted as it is in use by ..."), and the exporting stack
    deploys before its importers, so the deploy stops there. The fix is two deploys: keep the export (AWS CDK
    `Stack.export_value`) until the importers no longer use it, then remove it.

    With `diffs`, an export whose text stays but whose resource is replaced (a new ID) counts as changed too, unless
    that resource is a loss (the loss's line names its importers already)."""
    blocked = []
    for env in sorted(base.templates):
        before, after = _exports(base.templates[env]), _exports(head.templates.get(env, {}))
        for name, (stack, value) in sorted(before.items()):
            what = "removed" if name not in after else "changed"
            if name in after and after[name][1] == value:
                replaced = _replaced_unflagged((diffs or {}).get(env, {}).get(stack))
                hit = sorted(_referenced(value) & set(replaced))
                if not hit:
                    continue
                what = f"changed (`{hit[0]}`, {replaced[hit[0]]}, is replaced: a new ID)"
            users = tuple(base.stacks_importing(env, name, besides=stack))
            if users:
                blocked.append(BlockedExport(env, stack, name, what, users))
    return blocked


RETAINED = ("Retain", "RetainExceptOnCreate", "Snapshot")  # DeletionPolicy values that keep the data


@dataclass(frozen=True)
class Unretained:
    """A stateful resource whose data a stack deletion (or its removal from the template) kept and now deletes: its
    DeletionPolicy goes from Retain or Snapshot to Delete (`production: false`, `removal_policy: destroy`)."""

    environment: str
    stack: str
    resource: str
    type: str
    before: str
    change = "retention"

    def line(self) -> str:
        return (f"- **{self.environment}/{self.stack}** `{self.resource}` ({self.type}): DeletionPolicy "
                f"{self.before} -> Delete: deleting the stack, or removing the resource later, deletes its data")

    def acknowledgment(self) -> str:
        return yaml.safe_dump([{"environment": self.environment, "stack": self.stack, "resource": self.resource,
                                "change": self.change, "reason": "<why its data may be deleted with the stack>"}],
                              sort_keys=False)


def unretained(base: Assembly, head: Assembly) -> list[Unretained]:
    """Stateful resources kept in both revisions whose DeletionPolicy stops retaining their data."""
    found = []
    for env in sorted(set(base.templates) & set(head.templates)):
        for stack in sorted(set(base.templates[env]) & set(head.templates[env])):
            after = head.templates[env][stack].get("Resources") or {}
            for resource, old in sorted((base.templates[env][stack].get("Resources") or {}).items()):
                new = after.get(resource)
                if new is None or old.get("Type") not in STATEFUL_TYPES or new.get("Type") != old.get("Type"):
                    continue
                before = str(old.get("DeletionPolicy", "Delete"))
                if before in RETAINED and new.get("DeletionPolicy", "Delete") == "Delete":
                    found.append(Unretained(env, stack, resource, str(old["Type"]), before))
    return found
