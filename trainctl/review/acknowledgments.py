"""`acknowledged-changes.yaml`: the losses and blocked exports a change means to make, each with its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler.inputs.spec_yaml import SpecYamlError, load_spec_text
from trainctl.review.errors import ReviewError
from trainctl.review.findings import BlockedExport, Loss, Unretained
from trainctl.review.names import NameClash

ACKNOWLEDGMENTS = "acknowledged-changes.yaml"
# What an acknowledgment may acknowledge: a stateful loss, an export in use, a name still taken (names.py), data no
# longer retained.
CHANGES = ("replace", "delete", "export", "name", "retention")


def load_acknowledgments(project: Path) -> list[dict[str, Any]]:
    path = project / ACKNOWLEDGMENTS
    if not path.is_file():
        return []
    try:  # read as strictly as a spec: it is reviewed as one
        entries = load_spec_text(path.read_text(encoding="utf-8")) or []
    except (SpecYamlError, UnicodeDecodeError) as error:
        raise ReviewError(f"{ACKNOWLEDGMENTS}: {error}") from None
    if not isinstance(entries, list):
        raise ReviewError(f"{ACKNOWLEDGMENTS} must be a list of acknowledgments")
    for entry in entries:
        missing = {"environment", "stack", "resource", "change", "reason"} - set(entry if isinstance(entry, dict) else {})
        if missing or not str(entry.get("reason", "")).strip() or entry.get("change") not in CHANGES:
            raise ReviewError(f"{ACKNOWLEDGMENTS}: each entry needs environment, stack, resource, change (replace, "
                              f"delete, export for an export in use, name for a name still taken, retention for data no longer "
                              f"retained) and a reason; found {entry!r}")
    return entries


def acknowledged(loss: Loss | BlockedExport | NameClash | Unretained, entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    for entry in entries:
        if (entry["environment"], entry["stack"], entry["resource"], entry["change"]) == (
                loss.environment, loss.stack, loss.resource, loss.change):
            return entry
    return None
