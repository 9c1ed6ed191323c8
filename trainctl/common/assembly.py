"""The one reader of a synthesized cloud assembly (`cdk synth`'s output, cdk.out): each environment's nested assembly
`assembly-<env>`, its manifest's stacks with their templates, the metadata the platform's resources carry (the
workloads' summaries among them), the compile's warnings and the cdk-nag verdict. `summary`, `review` and
`preflight` all read cdk.out through it, so they read it the same way.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.compilation.describe import METADATA_KEY, is_workload_machine
from compiler.facts.summaries import WARNINGS_FILE, WorkloadSummary

STACK_ARTIFACT = "aws:cloudformation:stack"
NAG_REPORT = "validation-report.json"


@dataclass(frozen=True)
class Stack:
    """One stack of an environment's assembly, as its manifest lists it, with its template."""

    stack_name: str  # the CloudFormation stack name, e.g. `dev-Runs` (the manifest's default: the artifact ID)
    template: dict[str, Any]
    display_name: str = ""  # the construct path, e.g. `dev/Runs`
    template_bytes: int = 0  # the template file's size (CloudFormation takes at most 1 MiB)
    paths: Mapping[str, str] = field(default_factory=dict)  # logical ID -> construct path in the stack (`paths_of`)
    region: str = ""  # the region of the stack's environment (`aws://<account>/<region>` in the manifest)

    @property
    def name(self) -> str:
        """The stack's own name in the app, without the environment's Stage: `Runs`."""
        return (self.display_name or self.stack_name).split("/")[-1]

    @property
    def resource_map(self) -> dict[str, dict[str, Any]]:
        """Logical ID -> resource."""
        resources: dict[str, dict[str, Any]] = self.template.get("Resources", {})
        return resources

    def resources(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.resource_map.values() if r.get("Type") == kind]

    def workload_machines(self) -> list[tuple[str, dict[str, Any]]]:
        """(logical ID, resource) of each workload's state machine (compiler.compilation.describe.is_workload_machine)."""
        return [(logical, r) for logical, r in self.resource_map.items() if is_workload_machine(self.name, r)]


def is_assembly(outdir: Path) -> bool:
    """Whether `outdir` holds a cloud assembly (its top-level manifest)."""
    return (outdir / "manifest.json").is_file()


def environment_names(outdir: Path) -> list[str]:
    """The environments synthesized into `outdir`, sorted: one nested assembly `assembly-<env>` each."""
    return [folder.name.removeprefix("assembly-") for folder in sorted(outdir.glob("assembly-*"))]


def environment_stacks(outdir: Path, env: str) -> list[Stack]:
    """The stacks of one environment, sorted by artifact ID; a missing or unreadable file raises as it is (OSError,
    ValueError, KeyError, TypeError) for the caller to say what that means to it."""
    folder = outdir / f"assembly-{env}"
    manifest = json.loads((folder / "manifest.json").read_text())
    found = []
    for artifact_id, artifact in sorted(manifest.get("artifacts", {}).items()):
        if artifact.get("type") != STACK_ARTIFACT:
            continue
        properties = artifact["properties"]
        raw = (folder / properties["templateFile"]).read_bytes()
        found.append(Stack(stack_name=properties.get("stackName", artifact_id), template=json.loads(raw),
                           display_name=artifact.get("displayName", artifact_id), template_bytes=len(raw),
                           paths=paths_of(folder, artifact),
                           region=str(artifact.get("environment", "")).rsplit("/", 1)[-1]))
    return found


def paths_of(folder: Path, artifact: Mapping[str, Any]) -> dict[str, str]:
    """Each resource's construct path inside its stack (`gpt-smddp/ExecutionRole`), the name its author gave it, from
    the `aws:cdk:logicalId` entries of the stack's metadata (the manifest's own, or its `additionalMetadataFile`);
    a construct's default child `Resource` is left out. Empty when the assembly records none."""
    entries: dict[str, Any] = dict(artifact.get("metadata") or {})
    extra = artifact.get("additionalMetadataFile")
    if extra:
        with contextlib.suppress(OSError, ValueError):  # a name without its path reads as its logical ID
            entries |= json.loads((folder / extra).read_text())
    prefix = f"/{artifact.get('displayName', '')}/"
    found = {}
    for path, items in entries.items():
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("type") == "aws:cdk:logicalId" and isinstance(item.get("data"), str):
                found[item["data"]] = path.removeprefix(prefix).removesuffix("/Resource")
    return found


def read_stacks(outdir: Path) -> dict[str, list[Stack]]:
    """Every environment's stacks: environment -> its stacks (`environment_stacks`); one without a stack is left out."""
    return {env: stacks for env in environment_names(outdir) if (stacks := environment_stacks(outdir, env))}


@dataclass(frozen=True)
class Placed:
    """A workload's summary (its state machine's template metadata) and the stack that holds the state machine."""

    stack: str
    summary: WorkloadSummary


def workload_summaries(env: str, templates: Mapping[str, Mapping[str, Any]]) -> dict[str, Placed]:
    """The workloads of one environment (stack name -> template), by name: a state machine from before the summaries
    is named by its StateMachineName, with an empty summary."""
    found = {}
    for stack, template in templates.items():
        for resource in template.get("Resources", {}).values():
            if not is_workload_machine(stack, resource):
                continue
            summary = WorkloadSummary.of(resource.get("Metadata", {}).get(METADATA_KEY))
            name = summary.name or str(resource["Properties"].get("StateMachineName", "")).removeprefix(f"{env}-")
            found[name] = Placed(stack, summary)
    return found


def read_warnings(outdir: Path) -> list[str] | None:
    """What the compile pipeline warned of when the app synthesized `outdir` (WARNINGS_FILE, which app.py writes
    beside the manifest); None where the assembly holds no record of it."""
    try:
        warnings = json.loads((outdir / WARNINGS_FILE).read_text())["warnings"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return [str(w) for w in warnings] if isinstance(warnings, list) else None


def metadata(templates: Iterable[Mapping[str, Any]], kind: str, key: str) -> list[dict[str, Any]]:
    """The metadata entry `key` of every resource of type `kind` that carries one, over several templates (the facts
    the platform's constructs record, e.g. a schedule's or a budget's)."""
    return [dict(r["Metadata"][key]) for t in templates for r in t.get("Resources", {}).values()
            if r.get("Type") == kind and key in r.get("Metadata", {})]


def nag_status(outdir: Path) -> str:
    """What cdk-nag said, only claiming "0 unacknowledged findings" when the report shows it."""
    report_path = outdir / NAG_REPORT
    if not report_path.is_file():
        return "cdk-nag: no validation-report.json in this cloud assembly (was it synthesized by this app?)"
    report = json.loads(report_path.read_text())
    lines = []
    for plugin in report.get("pluginReports", []):
        open_findings = len(plugin.get("violations", []))
        acknowledged = len(plugin.get("suppressedViolations", []))
        verdict = "passed" if plugin.get("conclusion") == "success" and open_findings == 0 else "FAILED"
        lines.append(f"{plugin.get('pluginName')}: {verdict}, {open_findings} unacknowledged findings, "
                     f"{acknowledged} acknowledged with a reason")
    return "; ".join(lines) if lines else "cdk-nag: the report lists no plugin"
