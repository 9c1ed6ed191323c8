"""`trainctl review`: synthesize both revisions, diff them, print the report; the exit status says whether to merge."""

from __future__ import annotations

import argparse
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from trainctl.common.arguments import path_arg
from trainctl.common.lookup import project_of
from trainctl.review.acknowledgments import load_acknowledgments
from trainctl.review.assembly import read_assembly
from trainctl.review.errors import ReviewError
from trainctl.review.report import build
from trainctl.review.revisions import default_base, synthesize, worktree
from trainctl.review.template_diff import template_diffs


def review(args: argparse.Namespace) -> int:
    project = project_of(args)
    root = project.root
    if args.comment is not None and not args.comment.resolve().parent.is_dir():  # known before minutes of synthesis
        print(f"review stopped: --comment {args.comment}: its folder does not exist", file=sys.stderr)
        return 2
    try:
        base_ref = args.base or default_base(root)
        entries = load_acknowledgments(root)
        with tempfile.TemporaryDirectory(prefix="review-out-") as tmp:
            print(f"synthesizing the base revision {base_ref[:12]} and the working tree ...", file=sys.stderr,
                  flush=True)
            with worktree(root, base_ref) as tree, ThreadPoolExecutor(max_workers=2) as pool:
                # Two processes at once: each is mostly the CDK's own start-up and synthesis.
                jobs = [pool.submit(synthesize, tree, Path(tmp) / "base", "base"),
                        pool.submit(synthesize, root, Path(tmp) / "head", "working-tree")]
                warnings = [job.result() for job in jobs][1]  # the working tree's, as its synth printed them
            base, head = read_assembly(Path(tmp) / "base"), read_assembly(Path(tmp) / "head")
            diffs = template_diffs(root, base, head)
    except ReviewError as error:
        print(f"review stopped: {error}", file=sys.stderr)
        return 2
    report = build(base_ref, base, head, diffs, entries, warnings)
    sys.stdout.write(report.full())
    if args.comment is not None:
        elsewhere = (f"the full report is [the job summary]({args.full_report_url})" if args.full_report_url else
                     "the full report is `trainctl review`'s output (the job summary, in CI)")
        try:
            Path(args.comment).write_text(report.fit(COMMENT_BUDGET, elsewhere + "."))
        except OSError as error:
            print(f"review stopped: --comment {args.comment}: cannot be written ({error.strerror})", file=sys.stderr)
            return 2
    return report.status


# GitHub refuses a comment body over 65,536 characters ("Body is too long (maximum is 65536 characters)": the REST API's
# 422, danger/danger#424). The budget leaves room for the marker and the line scripts/post_review.sh adds.
GITHUB_COMMENT_LIMIT = 65_536
COMMENT_BUDGET = GITHUB_COMMENT_LIMIT - 1_536


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="compare the working tree with a base revision: a Markdown report for pull requests")
    p.add_argument("--base", default=None, help="commit or branch to compare with (default: the merge base with the "
                   "main branch)")
    p.add_argument("--comment", type=path_arg, default=None, metavar="FILE",
                   help="also write the report as it fits a pull-request comment (GitHub takes 65,536 characters): "
                        "the summary and every failing finding, details left out largest first")
    p.add_argument("--full-report-url", default=None, metavar="URL",
                   help="where the full report is (the workflow run's summary), linked from the comment")
    p.set_defaults(func=review)
