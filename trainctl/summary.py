"""`python -m trainctl summary`: the review summary reviewers paste into pull requests.

Reads a synthesized cloud assembly (`cdk synth` output) rather than re-synthesizing, so the summary shows
what will actually deploy: per environment, each workload's cluster and cost per hour, the stacks with their
resource counts and template sizes, and the cdk-nag verdict from `validation-report.json`. Plain markdown.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.compilation import cost_ceiling, strategies
from compiler.compilation.describe import fallback_costs, is_workload_machine
from compiler.errors import SpecError
from compiler.facts import catalog
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.pipeline import compile_project
from trainctl.common import project_of
from trainctl.schedule_report import summary_lines


@dataclass(frozen=True)
class StackInfo:
    env: str
    name: str
    resources: int
    template_bytes: int
    state_machines: tuple[str, ...]
    workload_machines: tuple[str, ...] = ()  # those of workloads (compiler.compilation.describe.is_workload_machine)


def read_assembly(outdir: Path) -> dict[str, list[StackInfo]]:
    """Stacks of each environment (nested assembly `assembly-<env>`), from their templates."""
    envs: dict[str, list[StackInfo]] = {}
    for folder in sorted(outdir.glob("assembly-*")):
        env = folder.name.removeprefix("assembly-")
        manifest = json.loads((folder / "manifest.json").read_text())
        for artifact_id, artifact in sorted(manifest.get("artifacts", {}).items()):
            if artifact.get("type") != "aws:cloudformation:stack":
                continue
            path = folder / artifact["properties"]["templateFile"]
            template = json.loads(path.read_text())
            stack = artifact.get("displayName", artifact_id)
            machines = tuple(sorted(
                r["Properties"].get("StateMachineName", logical)
                for logical, r in template.get("Resources", {}).items()
                if r.get("Type") == "AWS::StepFunctions::StateMachine"
            ))
            workloads = tuple(sorted(
                r["Properties"].get("StateMachineName", logical)
                for logical, r in template.get("Resources", {}).items()
                if is_workload_machine(stack.split("/")[-1], r)
            ))
            envs.setdefault(env, []).append(StackInfo(
                env=env, name=stack, resources=len(template.get("Resources", {})),
                template_bytes=path.stat().st_size, state_machines=machines, workload_machines=workloads,
            ))
    return envs


def nag_status(outdir: Path) -> str:
    """What cdk-nag said, only claiming "0 unacknowledged findings" when the report shows it."""
    report_path = outdir / "validation-report.json"
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


def _inputs(workload: Workload) -> str:
    parts = []
    for channel in workload.inputs:
        where = f"FSx {channel.directory_path}" if channel.kind == "fsx" else f"S3 {channel.s3_data}"
        parts.append(f"{channel.name}: {where}")
    return "; ".join(parts) or "none"


def money(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.2f}"


def _ceiling(w: Workload) -> str:
    """The per-run cost ceiling and the spec's own worst case (max_run x count x the highest price of its types)."""
    if w.max_run_cost_usd is None:
        return ""
    return (f"<br>ceiling {money(w.max_run_cost_usd)}/run, worst case {money(float(cost_ceiling.worst_case(w)))} "
            f"({w.price_region} prices)")


def workload_rows(names: list[str], workloads: dict[str, Workload], stacks: dict[str, str]) -> list[str]:
    rows = ["| Workload | Stack | Instances | GPUs | Strategy | EFA | Inputs | Est. $/hour |",
            "|---|---|---|---|---|---|---|---|"]
    total: float | None = 0.0
    for name in names:
        w = workloads.get(name)
        if w is None:
            rows.append(f"| {name} | {stacks.get(name, '')} | (no spec in workloads/) | | | | | |")
            continue
        instance = w.instance
        hourly = w.hourly_cost()
        total = None if total is None or hourly is None else total + hourly
        shape = " + ".join(f"{g.instance_type} x {g.instance_count}" for g in w.compute.groups)
        gpus = sum(g.instance.accelerators * g.instance_count for g in w.compute.groups)
        fallbacks = "".join(f"<br>fallback {t}: {money(c)}" for t, c in fallback_costs(w).items())
        rows.append(f"| {name} | {stacks.get(name, '')} | {shape} | {gpus} | {strategies.launch_plan(w).name} "
                    f"| {'on' if instance.has_efa else 'off'} | {_inputs(w)} | {money(hourly)}{fallbacks}"
                    f"{_ceiling(w)} |")
    rows.append(f"| **all at once** | | | | | | | **{money(total)}** |")
    return rows


def render_summary(outdir: Path, workloads: dict[str, dict[str, Workload]], warnings: Sequence[str] = (),
                   environments: dict[str, Environment] | None = None) -> str:
    envs = read_assembly(outdir)
    if not envs:
        raise SpecError([])
    out = [f"## Training platform review summary (`{outdir}`)", ""]
    for env, stacks in envs.items():
        where = {n.removeprefix(f"{env}-"): s.name.split("/")[-1] for s in stacks for n in s.workload_machines}
        names = sorted(where)
        resources = sum(s.resources for s in stacks)
        largest = max(stacks, key=lambda s: s.template_bytes)
        out += [f"### {env}", "", *workload_rows(names, workloads.get(env, {}), where), ""]
        if environments and env in environments:  # whose prices those are (compiler/facts/data/prices)
            out += [f"Prices: {catalog.price_source(environments[env].region)} (n/a where none is verified).", ""]
        if environments and env in environments:  # schedules and the monthly budget (issue 25)
            out += summary_lines(workloads.get(env, {}).values(), environments[env])
        out += [
                f"{len(stacks)} stacks, {resources} resources; largest template {largest.name} "
                f"({largest.template_bytes / 1024:.0f} KiB of CloudFormation's 1 MiB), most resources "
                f"{max(s.resources for s in stacks)} (limit 500).", "",
                "| Stack | Resources | Template KiB | State machines |", "|---|---|---|---|"]
        out += [f"| {s.name} | {s.resources} | {s.template_bytes / 1024:.0f} | {len(s.state_machines)} |"
                for s in stacks]
        out.append("")
    out += ["Prices: SageMaker training on-demand list prices of each environment's region (compiler/facts/data/prices, "
            "written by `trainctl prices`).", "", nag_status(outdir)]
    if warnings:
        out += ["", "#### Warnings", "", *(f"- {w}" for w in warnings)]
    return "\n".join(out)


def _run(args: argparse.Namespace) -> int:
    project = project_of(args)
    outdir = Path(args.cdk_out)
    if not (outdir / "manifest.json").is_file():
        print(f"no cloud assembly in {outdir}: run `npx cdk synth` first (or pass --cdk-out DIR)")
        return 2
    compiled = compile_project(project)  # the pipeline synth ran: the same workloads and warnings
    try:
        print(render_summary(outdir, compiled.loaded.by_environment, compiled.warnings, compiled.environments))
    except SpecError:
        print(f"{outdir} holds no environment assembly (assembly-<env>/): was it synthesized by app.py?")
        return 2
    return 0


def add_commands(subparsers: Any) -> None:
    """Register `summary` on the CLI (trainctl/cli.py)."""
    parser = subparsers.add_parser("summary", help="print the review summary of a synthesized cloud assembly")
    parser.add_argument("--cdk-out", default="cdk.out", help="the cloud assembly folder (default: cdk.out)")
    parser.set_defaults(func=_run)
