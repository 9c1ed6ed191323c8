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
        """`path: old -> new`, or `path` alone where a value is longer than `limit` (a definition, a policy)."""
        old, new = shown(self.old), shown(self.new)
        return self.path if max(len(old), len(new)) > limit else f"{self.path}: {old} -> {new}"


def shown(value: Any) -> str:
    """A template value as the report shows it: text as is, `none` where absent, anything else as compact JSON."""
    if value is None:
        return "none"
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def value_changes(change: Mapping[str, Any]) -> list[ValueChange]:
    """The changed values of one resource change of `template_diffs` (none for a resource added or removed)."""
    return [ValueChange(c["path"], c["old"], c["new"], c["replaces"]) for c in change.get("changes", [])]
