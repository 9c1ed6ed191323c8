"""`trainctl summary`: the review summary reviewers paste into pull requests.

Reads a synthesized cloud assembly (`cdk synth` output) and nothing else: what it shows is what will deploy, even
where a spec changed since. Per environment, each workload's cluster and cost per hour (its state machine's summary
metadata, compiler/compilation/describe.py), its schedules and budget, the stacks with their resource counts and
template sizes; the compile's warnings as synth recorded them beside the manifest, and the cdk-nag verdict from
`validation-report.json`. Plain markdown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from compiler.facts.summaries import WorkloadSummary
from trainctl.common.arguments import path_text
from trainctl.common.assembly import Placed, Stack, is_assembly, nag_status, read_stacks, read_warnings, workload_summaries
from trainctl.common.money import SPOT_NOTE, hourly_cell, money
from trainctl.project.schedule_report import summary_lines


def _ceiling(summary: WorkloadSummary, region: str) -> str:
    """The per-run cost ceiling and the spec's own worst case (max_run x count x the highest price of its types)."""
    if summary.max_run_cost_usd is None:
        return ""
    return (f"<br>ceiling {money(summary.max_run_cost_usd, sign=False)}/run, worst case "
            f"{money(summary.worst_case_run_usd, sign=False)} ({region} prices)")


def workload_rows(placed: dict[str, Placed], region: str) -> list[str]:
    """The environment's workloads, by name, at the list prices of its region their summaries carry."""
    rows = ["| Workload | Stack | Instances | GPUs | Strategy | EFA | Inputs | Est. $/hour |",
            "|---|---|---|---|---|---|---|---|"]
    total: float | None = 0.0
    for name in sorted(placed):
        stack, s = placed[name].stack, placed[name].summary
        if s.instances is None:
            rows.append(f"| {name} | {stack} | (no workload summary: synthesized by an older revision) | | | | | |")
            total = None
            continue
        rate = s.cost_per_hour_usd
        total = None if total is None or rate is None else total + rate
        rows.append(f"| {name} | {stack} | {s.shape} | {s.gpus} | {s.strategy} | {'on' if s.efa else 'off'} "
                    f"| {'; '.join(s.inputs or []) or 'none'} | {hourly_cell(s)}{_ceiling(s, region)} |")
    rows.append(f"| **all at once** | | | | | | | **{money(total, sign=False)}** |")
    return rows


class NoEnvironment(Exception):
    """The folder holds a cloud assembly but no environment's (`assembly-<env>/`)."""


def render_summary(outdir: Path) -> str:
    """The review summary of a synthesized assembly; NoEnvironment where it holds no environment's assembly, and what
    reading a file raises (OSError, ValueError, KeyError, TypeError) where one is unreadable."""
    envs = read_stacks(outdir)
    if not envs:
        raise NoEnvironment(outdir)
    out = [f"## Training platform review summary (`{outdir}`)", ""]
    for env, stacks in envs.items():
        out += _environment_lines(env, stacks)
    out += ["Prices: SageMaker training on-demand list prices of each environment's region (compiler/facts/data/prices, "
            f"written by `trainctl prices`). {SPOT_NOTE}", "", nag_status(outdir)]
    warnings = read_warnings(outdir)
    if warnings is None:
        out += ["", "Warnings: not recorded in this assembly (synthesized by an older revision of app.py)."]
    elif warnings:
        out += ["", "#### Warnings", "", *(f"- {w}" for w in warnings)]
    return "\n".join(out)


def _environment_lines(env: str, stacks: list[Stack]) -> list[str]:
    """One environment's part: its workloads, whose prices, its schedules and budget, and its stacks' sizes."""
    templates = {s.name: s.template for s in stacks}
    placed = workload_summaries(env, templates)
    region = next((s.region for s in stacks if s.region), "")
    out = [f"### {env}", "", *workload_rows(placed, region), ""]
    sources = sorted({p.summary.prices for p in placed.values() if p.summary.prices})
    if sources:  # whose prices those are (compiler/facts/data/prices)
        out += [f"Prices: {'; '.join(sources)} (n/a where none is verified).", ""]
    out += summary_lines(templates, env)
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
    outdir = Path(args.cdk_out)
    if not is_assembly(outdir):
        print(f"no cloud assembly in {outdir}: run `npx cdk synth` first (or pass --cdk-out DIR)", file=sys.stderr)
        return 2
    try:
        print(render_summary(outdir))
    except NoEnvironment:
        print(f"{outdir} holds no environment assembly (assembly-<env>/): was it synthesized by app.py?",
              file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError, TypeError) as error:  # a file cut short or edited by hand
        print(f"{outdir} could not be read as a cloud assembly ({type(error).__name__}: {error}): synthesize it again "
              "with `npx cdk synth`", file=sys.stderr)
        return 2
    return 0


def add_commands(subparsers: Any) -> None:
    """Register `summary` on the CLI (trainctl/cli.py)."""
    parser = subparsers.add_parser("summary", help="print the review summary of a synthesized cloud assembly")
    parser.add_argument("--cdk-out", default="cdk.out", type=path_text, help="the cloud assembly folder (default: cdk.out)")
    parser.set_defaults(func=_run)
