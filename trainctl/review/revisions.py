"""The two revisions a review compares: the base checked out in a temporary git worktree, each synthesized offline."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from compiler.errors import WARNING_PREFIX
from trainctl.common.assembly import read_warnings
from trainctl.review.errors import ReviewError

MAIN_BRANCHES = ("origin/main", "main", "origin/master", "master")


def git(project: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=project, capture_output=True, text=True)
    if done.returncode != 0:
        raise ReviewError(f"git {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def default_base(project: Path) -> str:
    """The merge base of HEAD with the main branch (the first of origin/main, main, origin/master, master)."""
    for branch in MAIN_BRANCHES:
        try:
            git(project, "rev-parse", "--verify", "--quiet", branch)
        except ReviewError:
            continue
        return git(project, "merge-base", "HEAD", branch)
    raise ReviewError("no main branch found to compare with; pass --base REF (a commit or a branch)")


@contextmanager
def worktree(project: Path, ref: str) -> Iterator[Path]:
    """The revision `ref` checked out in a temporary worktree (removed afterwards)."""
    commit = git(project, "rev-parse", "--verify", f"{ref}^{{commit}}")
    with tempfile.TemporaryDirectory(prefix="review-") as tmp:
        path = Path(tmp) / "base"
        git(project, "worktree", "add", "--detach", str(path), commit)
        try:
            yield path
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=project, capture_output=True)


def synthesize(tree: Path, outdir: Path, label: str) -> list[str]:
    """Run the revision's own app.py offline, with this checkout's interpreter and packages; returns the validation
    warnings of its synth: those it recorded beside the manifest (trainctl.common.assembly.read_warnings), or for a
    revision whose app.py predates that record, those it printed (a `warning: ` line each).

    The CDK's built-in CloudFormation validation is off here (`CDK_VALIDATION=false`, about 4 s per synth): a
    review compares templates; cdk-nag still runs, and the tests lint every template with cfn-lint and checkov.
    """
    env = {**os.environ, "CDK_OUTDIR": str(outdir), "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
           "SAGEMAKER_SUPPRESS_V2_WARNING": "1", "AWS_EC2_METADATA_DISABLED": "true", "CDK_VALIDATION": "false"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "app.py"], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise ReviewError(f"the {label} revision does not synthesize:\n{tail}")
    recorded = read_warnings(outdir)
    if recorded is not None:
        return recorded
    return [line.removeprefix(WARNING_PREFIX) for line in done.stderr.splitlines()
            if line.startswith(WARNING_PREFIX)]
