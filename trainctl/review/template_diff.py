"""Every stack's differences, from the CDK's own diff engine (`@aws-cdk/cloudformation-diff`, template_diff.js),
which knows which property changes replace a resource, with each changed value down to the nested property."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainctl.review.assembly import Assembly
from trainctl.review.errors import ReviewError


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


@dataclass(frozen=True)
class ValueChange:
    """One changed value of a resource: `LustreConfiguration.DeploymentType`, SCRATCH_2 -> PERSISTENT_2."""

    path: str
    old: Any
    new: Any
    replaces: str  # "yes", "maybe" or "no": whether CloudFormation replaces the resource for it

    def text(self, limit: int = 80) -> str:
        """`path: old -> new`; where a value is longer than `limit`, only the part that differs with a little around
        it (an image tag inside Fn::Join), or `path` alone where even that is longer (a definition, a policy)."""
        old, new = shown(self.old), shown(self.new)
        if max(len(old), len(new)) <= limit:
            return f"{self.path}: {old} -> {new}"
        old_part, new_part = differing(old, new)
        return self.path if max(len(old_part), len(new_part)) > limit else f"{self.path}: {old_part} -> {new_part}"


def differing(old: str, new: str, context: int = 12) -> tuple[str, str]:
    """The parts of two texts between what they share at the start and the end, `context` characters wider, with
    "…" where text was left out."""
    start = _shared(old, new)
    end = _shared(old[start:][::-1], new[start:][::-1])
    begin = max(start - context, 0)

    def part(text: str) -> str:
        stop = min(len(text) - end + context, len(text))
        return ("…" if begin else "") + text[begin:stop] + ("…" if stop < len(text) else "")

    return part(old), part(new)


def _shared(a: str, b: str) -> int:
    """How many characters two texts share at their start."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def shown(value: Any) -> str:
    """A template value as the report shows it: text as is, `none` where absent, anything else as compact JSON."""
    if value is None:
        return "none"
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def value_changes(change: Mapping[str, Any]) -> list[ValueChange]:
    """The changed values of one resource change of `template_diffs` (none for a resource added or removed)."""
    return [ValueChange(c["path"], c["old"], c["new"], c["replaces"]) for c in change.get("changes", [])]
