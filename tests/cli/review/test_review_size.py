"""The review fits a pull-request comment (issue 36): the summary and every failing finding first, details collapsed
and, where the comment would exceed GitHub's 65,536 characters, left out largest first with a link to the full report;
and scripts/post_review.sh never posts more, whatever it is given.

GitHub's limit: the REST API refuses a longer body with 422 "Body is too long (maximum is 65536 characters)"
(danger/danger#424, telia-oss/github-pr-resource#259).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.project import ROOT
from trainctl.review.assembly import Assembly, read_assembly
from trainctl.review.command import COMMENT_BUDGET, GITHUB_COMMENT_LIMIT
from trainctl.review.report import Part, Report, build
from trainctl.review.template_diff import template_diffs

LINK = "the full report is [the job summary](https://github.com/o/r/actions/runs/1)."


@pytest.fixture(scope="module")
def new_environments(synthesized_app: Any) -> Report:
    """Every environment of the app reviewed as new (a base without them): a new team's first pull request, and the
    largest review this repository produces."""
    base, head = Assembly(), read_assembly(Path(synthesized_app.outdir))
    return build("base", base, head, template_diffs(ROOT, base, head), [], ["a warning"])


@pytest.mark.synth
def test_the_review_of_new_environments_fits_a_comment_and_says_where_the_rest_is(new_environments) -> None:
    full = new_environments.full()
    comment = new_environments.fit(COMMENT_BUDGET, LINK)
    assert len(full) > GITHUB_COMMENT_LIMIT  # what the comment could not hold whole
    assert len(comment) <= COMMENT_BUDGET < GITHUB_COMMENT_LIMIT
    summary = comment.split("### dev")[0]
    assert "| dev (new) | 10 added |" in summary and "| prod (new) | 10 added |" in summary
    assert LINK in comment
    for env in ("dev", "prod"):  # each environment's workloads are shown; its long details are collapsed
        assert f"### {env}\n\n#### Workloads" in comment
        assert f"<details><summary>Other resource changes in {env}: " in comment


@pytest.mark.synth
def test_resources_are_named_by_workload_and_kind_before_their_logical_id(new_environments) -> None:
    full = new_environments.full()
    rows = [line for line in full.split("### prod")[0].splitlines() if line.startswith("| gpt-smddp/")]
    named = {line.split(" | ")[0].removeprefix("| "): line.split(" | ")[1] for line in rows}
    assert named["gpt-smddp/StateMachine"] == "StepFunctions::StateMachine"
    assert named["gpt-smddp/ExecutionRole"] == "IAM::Role"
    assert all(line.rstrip(" |").endswith("`") for line in rows)  # the logical ID last


def _report(sizes: dict[str, int], loud: int = 0) -> Report:
    parts = [Part(["## Review", "", *(["- :no_entry: finding"] * loud)])]
    parts += [Part([f"| {name} row {n} |" for n in range(rows)], f"{name} details") for name, rows in sizes.items()]
    return Report(parts, 1 if loud else 0)


def test_details_are_left_out_largest_first_and_only_as_needed() -> None:
    report = _report({"small": 10, "large": 2000, "medium": 300})
    assert report.fit(10**6, LINK) == report.full()  # room for all: the whole report
    fitted = report.fit(len(report.full()) - 1, LINK)
    assert "large row 1999" not in fitted and "medium row 299" in fitted and "small row 9" in fitted
    assert "<details><summary>large details</summary>" in fitted and LINK in fitted


def test_what_must_be_seen_is_cut_at_a_line_only_when_nothing_else_is_left() -> None:
    report = _report({"details": 50}, loud=5000)
    fitted = report.fit(20_000, LINK)
    assert len(fitted) <= 20_000
    assert fitted.startswith("## Review\n") and "The report is cut here to fit a comment." in fitted and LINK in fitted
    assert all(line in ("- :no_entry: finding", "") or not line.startswith("- :no") for line in fitted.splitlines())


def test_the_fit_counts_bytes_as_the_posting_script_does() -> None:
    """`≤` (three bytes in UTF-8) fills the spot cells: a report that fits in characters may not in bytes."""
    report = Report([Part(["## Review", ""]), Part([f"| w{n} | ≤ 1.51 spot (on-demand ceiling) |" for n in range(500)],
                                                   "prices")])
    limit = len(report.full())  # the whole report fits in characters, not in bytes
    fitted = report.fit(limit, LINK)
    assert len(fitted.encode()) <= limit and "<details><summary>prices</summary>" in fitted and LINK in fitted


def test_a_cut_inside_a_code_block_closes_it_before_the_note() -> None:
    """The acknowledgment snippets are YAML code blocks among the findings: the note after a cut must not render as
    code."""
    report = Report([Part(["## Review", "", "```yaml", *[f"- resource: r{n}" for n in range(2000)], "```"])], 1)
    fitted = report.fit(10_000, LINK)
    before_note = fitted.split("**The report is cut here")[0]
    assert len(fitted.encode()) <= 10_000
    assert sum(line.startswith("```") for line in before_note.splitlines()) == 2  # opened and closed


# ------------------------------------------------------------------------------------------- scripts/post_review.sh


def _post(tmp_path: Path, report: str, existing: str = "") -> tuple[str, str]:
    """Run the posting script with a `gh` that records what it would send; returns (method and path, body)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sent = tmp_path / "sent"
    (bin_dir / "gh").write_text(f"""#!/usr/bin/env bash
if [ "$1" = api ] && [ "$2" != --method ]; then printf '%s\\n' "{existing}"; exit 0; fi
printf '%s %s\\n' "$3" "$4" > {sent}.call
for a in "$@"; do case "$a" in body=*) printf '%s' "${{a#body=}}" > {sent}.body;; esac; done
""")
    (bin_dir / "gh").chmod(0o755)
    (tmp_path / "review.md").write_text(report)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GITHUB_RUN_ID": "42",
           "GITHUB_REPOSITORY": "o/r", "GITHUB_SERVER_URL": "https://github.com"}
    subprocess.run(["bash", str(ROOT / "scripts" / "post_review.sh"), str(tmp_path / "review.md"), "7"],
                   check=True, capture_output=True, env=env, timeout=60)
    return (tmp_path / "sent.call").read_text().strip(), (tmp_path / "sent.body").read_bytes().decode()


def test_post_review_posts_a_report_that_fits_as_it_is_with_the_run_linked(tmp_path) -> None:
    call, body = _post(tmp_path, "## Review\n\nall good\n")
    assert call == "POST repos/{owner}/{repo}/issues/7/comments"
    assert body.startswith("<!-- trainctl review -->\n\n## Review\n\nall good\n")
    assert body.endswith("[this workflow run](https://github.com/o/r/actions/runs/42).")


def test_post_review_never_exceeds_githubs_limit_whatever_it_is_given(tmp_path) -> None:
    line = "| résumé-é | IAM::Role | Workloads18 | added | | `LogicalId` |\n"  # two bytes for each é
    call, body = _post(tmp_path, "## Review\n\n" + line * 4000, existing="123")
    assert call == "PATCH repos/{owner}/{repo}/issues/comments/123"
    assert len(body.encode()) <= GITHUB_COMMENT_LIMIT and len(body) <= GITHUB_COMMENT_LIMIT
    assert body.startswith("<!-- trainctl review -->\n\n## Review\n")
    kept = body.split("\n\n**The review is cut here")[0].splitlines()[4:]
    assert kept and all(row == line.strip() for row in kept)  # cut at a line, never inside one
    assert body.endswith("[this workflow run](https://github.com/o/r/actions/runs/42).")


def test_post_review_links_the_run_once_when_the_report_already_does(tmp_path) -> None:
    run = "https://github.com/o/r/actions/runs/42"
    _, body = _post(tmp_path, f"## Review\n\nLeft out here to fit a comment: [the job summary]({run}).\n")
    assert body.count(run) == 1 and "The full report is in the job summary" not in body
