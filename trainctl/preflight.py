"""`trainctl preflight --env ENV`: what only the account can show, checked before a deploy (issue 22).

With credentials for the environment's account, read-only and free (Describe/List/Get/Validate calls only): whose
credentials these are, the CDK bootstrap, names the stacks would create that already exist, Docker for the image
build, SageMaker training quotas for every workload, VPC and FSx limits, and every state-machine definition through
Step Functions' own validation. One Markdown table on standard output (check, result, detail or fix); exit status 1
when any check fails, 0 otherwise. An AWS error or missing credentials is a failed row with the fix, never a
traceback. Checks live in `trainctl/preflight_checks/`, one function each.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.errors import SpecError
from trainctl.common import project_of

if TYPE_CHECKING:
    from trainctl.preflight_checks.base import Check, Context, Result

# Checks that talk to AWS; they skip when the credentials check failed (wrong account: nothing there is ours).
AWS_CHECKS = ("cdk_bootstrap", "bootstrap_image_repository", "existing_resources", "environment_stacks",
              "sagemaker_log_group", "training_quotas", "network_limits", "fsx_limits", "definitions",
              "missing_training_job", "cost_allocation_tags")


def checks() -> list[Check]:
    """Every check, in the table's order (imported here: boto3 loads only when preflight runs)."""
    from trainctl.preflight_checks import account, costs, definitions, docker, existing, quotas

    return [account.credentials, account.cdk_bootstrap, account.bootstrap_image_repository,
            existing.existing_resources, existing.environment_stacks, existing.sagemaker_log_group, docker.docker,
            quotas.training_quotas, quotas.network_limits, quotas.fsx_limits, definitions.definitions,
            definitions.missing_training_job, costs.cost_allocation_tags]


def run_check(check: Check, ctx: Context) -> list[Result]:
    """One check's rows; an AWS error (or any other) becomes a failed row naming it, never a traceback."""
    from botocore.exceptions import BotoCoreError, ClientError

    from trainctl.preflight_checks import FAIL, SKIP, Result

    label = check.__name__.replace("_", "-")
    if check.__name__ in AWS_CHECKS and not ctx.credentials_ok:
        return [Result(label, SKIP, "needs credentials of the environment's account (see credentials)")]
    try:
        return check(ctx)
    except (BotoCoreError, ClientError) as error:
        return [Result(label, FAIL, f"AWS refused or failed: {error}; give the credentials the read-only actions "
                       "README \"Preflight\" lists")]
    except Exception as error:  # one broken check must not hide the others' results
        return [Result(label, FAIL, f"the check stopped: {type(error).__name__}: {error}")]


def table(rows: Sequence[Result]) -> str:
    """The Markdown table (a `|` in a detail is escaped so each row stays one row)."""
    lines = ["| Check | Result | Detail / fix |", "| --- | --- | --- |"]
    for row in rows:
        detail = row.detail.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {row.check} | {row.status.upper()} | {detail} |")
    return "\n".join(lines)


def context(args: argparse.Namespace) -> Context:
    """The checks' context: the environment, its compiled workloads (the pipeline validate runs) and AWS access."""
    from compiler.pipeline import compile_project, project_images
    from trainctl.preflight_checks import Aws, Context

    project = project_of(args)
    env = project.environments()[args.env]
    cdk_out = Path(args.cdk_out) if args.cdk_out else project.root / "cdk.out"
    ctx = Context(env=env, project=project, aws=Aws(env, args.profile), cdk_out=cdk_out)
    try:
        ctx.images = project_images(project, {env.name: env})
        ctx.compiled = compile_project(project).workloads(env.name)
    except SpecError as error:
        first = f", first: {error.problems[0]}" if error.problems else ""
        ctx.compile_error = f"{len(error.problems)} problem(s){first}"
    return ctx


def preflight(args: argparse.Namespace) -> int:
    """Run every check, print the table, exit 1 on any failure."""
    from trainctl.preflight_checks import FAIL

    envs = project_of(args).environments()
    if args.env not in envs:
        print(f"unknown environment '{args.env}'; cdk.json declares {', '.join(envs)}", file=sys.stderr)
        return 2
    ctx = context(args)
    rows = [row for check in checks() for row in run_check(check, ctx)]
    print(table(rows))
    failed = sum(1 for r in rows if r.status == FAIL)
    counts = ", ".join(f"{sum(1 for r in rows if r.status == s)} {s}" for s in ("pass", "fail", "skip"))
    print(f"preflight {ctx.env.name}: {counts}", file=sys.stderr)
    return 1 if failed else 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("preflight", help="check the account before a deploy (read-only, with its credentials)")
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.add_argument("--profile", default=None, help="AWS profile (default: the usual boto3 credential chain)")
    p.add_argument("--cdk-out", default=None, help="the synthesized cloud assembly (default: cdk.out of the project)")
    p.set_defaults(func=preflight)
