"""`python -m trainctl summary`: the review summary reviewers paste into pull requests.

Reads a synthesized cloud assembly (`cdk synth` output) rather than re-synthesizing, so the summary shows
what will actually deploy: per environment, each workload's cluster and cost per hour, the stacks with their
resource counts and template sizes, and the cdk-nag verdict from `validation-report.json`. Plain markdown.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from compiler.compilation import cost_ceiling, strategies
from compiler.compilation.describe import fallback_costs
from compiler.errors import SpecError
from compiler.facts import catalog
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.pipeline import Compiled, compile_project
from trainctl.common.assembly import Stack, is_assembly, nag_status, read_stacks
from trainctl.common.lookup import project_of
from trainctl.common.money import SPOT_NOTE, hourly, money
from trainctl.project.schedule_report import summary_lines


def _inputs(workload: Workload) -> str:
    parts = []
    for channel in workload.inputs:
        where = f"FSx {channel.directory_path}" if channel.kind == "fsx" else f"S3 {channel.s3_data}"
        parts.append(f"{channel.name}: {where}")
    return "; ".join(parts) or "none"


def _ceiling(w: Workload, region: str) -> str:
    """The per-run cost ceiling and the spec's own worst case (max_run x count x the highest price of its types)."""
    if w.max_run_cost_usd is None:
        return ""
    worst = float(cost_ceiling.worst_case(w, region))
    return (f"<br>ceiling {money(w.max_run_cost_usd, sign=False)}/run, worst case {money(worst, sign=False)} "
            f"({region} prices)")


def workload_rows(names: list[str], workloads: dict[str, Workload], stacks: dict[str, str], region: str) -> list[str]:
    """The environment's workloads, priced at the list prices of its region."""
    rows = ["| Workload | Stack | Instances | GPUs | Strategy | EFA | Inputs | Est. $/hour |",
            "|---|---|---|---|---|---|---|---|"]
    total: float | None = 0.0
    for name in names:
        w = workloads.get(name)
        if w is None:
            rows.append(f"| {name} | {stacks.get(name, '')} | (no spec in workloads/) | | | | | |")
            continue
        instance = w.instance
        rate = w.hourly_cost(region)
        total = None if total is None or rate is None else total + rate
        shape = " + ".join(f"{g.instance_type} x {g.instance_count}" for g in w.compute.groups)
        gpus = sum(g.instance.accelerators * g.instance_count for g in w.compute.groups)
        spot = w.use_spot_instances
        fallbacks = "".join(f"<br>fallback {t}: {hourly(c, spot=spot)}" for t, c in fallback_costs(w, region).items())
        rows.append(f"| {name} | {stacks.get(name, '')} | {shape} | {gpus} | {strategies.launch_plan(w).name} "
                    f"| {'on' if instance.has_efa else 'off'} | {_inputs(w)} | {hourly(rate, spot=spot)}{fallbacks}"
                    f"{_ceiling(w, region)} |")
    rows.append(f"| **all at once** | | | | | | | **{money(total, sign=False)}** |")
    return rows


def render_summary(outdir: Path, compiled: Compiled) -> str:
    """The review summary of a synthesized assembly, with the workloads and warnings of the compile synth ran."""
    envs = read_stacks(outdir)
    if not envs:
        raise SpecError([])
    out = [f"## Training platform review summary (`{outdir}`)", ""]
    for env, stacks in envs.items():
        workloads = {c.name: c.workload for c in compiled.workloads(env)}
        out += _environment_lines(env, stacks, workloads, compiled.environments.get(env))
    warnings = compiled.warnings
    out += ["Prices: SageMaker training on-demand list prices of each environment's region (compiler/facts/data/prices, "
            f"written by `trainctl prices`). {SPOT_NOTE}", "", nag_status(outdir)]
    if warnings:
        out += ["", "#### Warnings", "", *(f"- {w}" for w in warnings)]
    return "\n".join(out)


def _machine_name(logical_id: str, resource: dict[str, Any]) -> str:
    return str(resource["Properties"].get("StateMachineName", logical_id))


def _environment_lines(env: str, stacks: list[Stack], workloads: dict[str, Workload],
                       environment: Environment | None) -> list[str]:
    """One environment's part: its workloads, whose prices, its schedules and budget, and its stacks' sizes."""
    where = {_machine_name(logical, r).removeprefix(f"{env}-"): s.name for s in stacks
             for logical, r in s.workload_machines()}
    region = environment.region if environment is not None else catalog.REFERENCE_REGION
    out = [f"### {env}", "", *workload_rows(sorted(where), workloads, where, region), ""]
    if environment is not None:  # whose prices those are (compiler/facts/data/prices); schedules and budget (issue 25)
        out += [f"Prices: {catalog.price_source(environment.region)} (n/a where none is verified).", ""]
        out += summary_lines(workloads.values(), environment)
    return [*out, *_stack_lines(stacks), ""]


def _stack_lines(stacks: list[Stack]) -> list[str]:
    """The stacks' sizes against CloudFormation's limits, and one row per stack."""
    largest = max(stacks, key=lambda s: s.template_bytes)
    out = [f"{len(stacks)} stacks, {sum(len(s.resource_map) for s in stacks)} resources; largest template "
           f"{largest.display_name} ({largest.template_bytes / 1024:.0f} KiB of CloudFormation's 1 MiB), most "
           f"resources {max(len(s.resource_map) for s in stacks)} (limit 500).", "",
           "| Stack | Resources | Template KiB | State machines |", "|---|---|---|---|"]
    return out + [f"| {s.display_name} | {len(s.resource_map)} | {s.template_bytes / 1024:.0f} | "
                  f"{len(s.resources('AWS::StepFunctions::StateMachine'))} |" for s in stacks]


def _run(args: argparse.Namespace) -> int:
    project = project_of(args)
    outdir = Path(args.cdk_out)
    if not is_assembly(outdir):
        print(f"no cloud assembly in {outdir}: run `npx cdk synth` first (or pass --cdk-out DIR)")
        return 2
    compiled = compile_project(project)  # the pipeline synth ran: the same workloads and warnings
    try:
        print(render_summary(outdir, compiled))
    except SpecError:
        print(f"{outdir} holds no environment assembly (assembly-<env>/): was it synthesized by app.py?")
        return 2
    return 0


def add_commands(subparsers: Any) -> None:
    """Register `summary` on the CLI (trainctl/cli.py)."""
    parser = subparsers.add_parser("summary", help="print the review summary of a synthesized cloud assembly")
    parser.add_argument("--cdk-out", default="cdk.out", help="the cloud assembly folder (default: cdk.out)")
    parser.set_defaults(func=_run)
