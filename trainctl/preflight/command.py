"""`trainctl preflight --env ENV`: what only the account can show, checked before a deploy (issue 22).

With credentials for the environment's account, read-only and free (Describe/List/Get/Validate calls only): whose
credentials these are, the CDK bootstrap, names the stacks would create that already exist, Docker for the image
build, SageMaker training quotas for every workload, VPC and FSx limits, and every state-machine definition through
Step Functions' own validation. One Markdown table on standard output (check, result, detail or fix); exit status 1
when any check fails, 0 otherwise. An AWS error or missing credentials is a failed row with the fix, never a
traceback. Checks live in `trainctl/preflight/checks/`, one function each; context.py gathers what they read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from trainctl.common.arguments import path_text
from trainctl.common.lookup import environment, project_of
from trainctl.common.verdicts import FAIL, SKIP, Result, counts, table

if TYPE_CHECKING:
    from trainctl.preflight.checks.base import Check, Context

# Checks that talk to AWS; they skip when the credentials check failed (wrong account: nothing there is ours).
AWS_CHECKS = ("cdk_bootstrap", "bootstrap_image_repository", "existing_resources", "environment_stacks",
              "sagemaker_log_group", "training_quotas", "network_limits", "fsx_limits", "definitions",
              "missing_training_job", "cost_allocation_tags")


def checks() -> list[Check]:
    """Every check, in the table's order (imported here: boto3 loads only when preflight runs)."""
    from trainctl.preflight.checks import account, costs, definitions, docker, existing, quotas

    return [account.credentials, account.cdk_bootstrap, account.bootstrap_image_repository,
            existing.existing_resources, existing.environment_stacks, existing.sagemaker_log_group, docker.docker,
            quotas.training_quotas, quotas.network_limits, quotas.fsx_limits, definitions.definitions,
            definitions.missing_training_job, costs.cost_allocation_tags]


def run_check(check: Check, ctx: Context) -> list[Result]:
    """One check's rows; an AWS error (or any other) becomes a failed row naming it, never a traceback."""
    from botocore.exceptions import BotoCoreError, ClientError

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


def preflight(args: argparse.Namespace) -> int:
    """Run every check, print the table, exit 1 on any failure."""
    from trainctl.preflight.context import context

    project = project_of(args)
    env = environment(project, args.env)
    cdk_out = Path(args.cdk_out) if args.cdk_out else project.root / "cdk.out"
    ctx = context(project, env, cdk_out, args.profile)
    rows = [row for check in checks() for row in run_check(check, ctx)]
    print(table(rows))
    print(f"preflight {ctx.env.name}: {counts(rows)}", file=sys.stderr)
    return 1 if any(r.status == FAIL for r in rows) else 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("preflight", help="check the account before a deploy (read-only, with its credentials)")
    p.add_argument("--env", required=True, help="environment name from cdk.json")
    p.add_argument("--profile", default=None, help="AWS profile (default: the usual boto3 credential chain)")
    p.add_argument("--cdk-out", default=None, type=path_text,
                   help="the synthesized cloud assembly (default: cdk.out of the project)")
    p.set_defaults(func=preflight)
