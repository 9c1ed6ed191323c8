"""The CI workflows pass actionlint (syntax, expressions, runner labels) and zizmor (injection, credentials, pins).

Each linter also runs on a broken copy of the real workflow, so a linter that silently checks nothing fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.project import PROJECT

WORKFLOWS = sorted((PROJECT.root / ".github" / "workflows").glob("*.y*ml"))
ACTIONLINT = Path(__file__).with_name("actionlint.cjs")
ZIZMOR = Path(sys.executable).with_name("zizmor")


def actionlint(workflows: dict[str, str]) -> list[dict[str, object]]:
    result = subprocess.run(
        ["node", str(ACTIONLINT)], input=json.dumps(workflows), capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(result.stdout)


def zizmor(directory: Path) -> list[dict[str, object]]:
    """zizmor's findings for the workflows in `directory`, at the strictest persona, offline."""
    env = {**os.environ, "NO_COLOR": "1"}
    result = subprocess.run(
        [str(ZIZMOR), "--offline", "--persona", "pedantic", "--format", "json", "--no-progress", str(directory)],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert result.returncode in (0, 10, 11, 12, 13, 14), result.stderr  # 1x: findings at a severity, 0: none
    return json.loads(result.stdout)


def test_there_is_a_workflow() -> None:
    assert WORKFLOWS, "no workflow under .github/workflows"


def test_workflows_pass_actionlint() -> None:
    findings = actionlint({str(path.relative_to(PROJECT.root)): path.read_text() for path in WORKFLOWS})
    assert findings == []


def test_workflows_pass_zizmor() -> None:
    assert zizmor(PROJECT.root / ".github" / "workflows") == []


@pytest.fixture()
def workflow_text() -> str:
    return (PROJECT.root / ".github" / "workflows" / "pull-request.yml").read_text()


def test_actionlint_finds_a_typo_in_the_real_workflow(workflow_text: str) -> None:
    broken = workflow_text.replace("timeout-minutes:", "timeout-minute:", 1)
    findings = actionlint({"broken.yml": broken})
    assert [finding["kind"] for finding in findings] == ["syntax-check"]
    assert "timeout-minute" in str(findings[0]["message"])


def test_zizmor_finds_an_injection_and_an_unpinned_action(workflow_text: str, tmp_path: Path) -> None:
    broken = workflow_text.replace(
        "run: scripts/test.sh", 'run: echo "${{ github.event.pull_request.title }}" && scripts/test.sh', 1
    ).replace("actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1", "actions/checkout@v4", 1)
    assert broken.count("pull_request.title") == 1 and "checkout@v4" in broken
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "pull-request.yml").write_text(broken)
    found = {finding["ident"] for finding in zizmor(workflows)}
    assert {"template-injection", "unpinned-uses"} <= found


def _jobs() -> dict[str, dict]:
    import yaml

    return yaml.safe_load((PROJECT.root / ".github" / "workflows" / "pull-request.yml").read_text())["jobs"]


def _writes(job: dict) -> list[str]:
    return [scope for scope, level in (job.get("permissions") or {}).items() if level == "write"]


def test_the_job_that_runs_pull_request_code_cannot_write() -> None:
    """Tests, synth and review run the pull request's code: their token is read only (GitHub docs, "Security
    hardening for GitHub Actions": a pull request's code must not run where a write token is)."""
    jobs = _jobs()
    runs_code = [name for name, job in jobs.items()
                 if any("scripts/test.sh" in step.get("run", "") or "trainctl review" in step.get("run", "")
                        for step in job.get("steps", []))]
    assert runs_code == ["test-and-review"]
    assert jobs["test-and-review"]["permissions"] == {"contents": "read"}
    uses = [step.get("uses", "") for step in jobs["test-and-review"]["steps"]]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)


def test_the_commenting_job_checks_out_only_the_base_commits_script() -> None:
    jobs = _jobs()
    commenting = {name: job for name, job in jobs.items() if "pull-requests" in _writes(job)
                  or "issues" in _writes(job)}
    assert list(commenting) == ["post-review"]
    steps = commenting["post-review"]["steps"]
    checkouts = [s for s in steps if s.get("uses", "").startswith("actions/checkout@")]
    assert [c["with"]["ref"] for c in checkouts] == ["${{ github.event.pull_request.base.sha }}"]
    assert checkouts[0]["with"]["sparse-checkout"] == "scripts/post_review.sh"
    assert [s["run"] for s in steps if "run" in s] == ['scripts/post_review.sh "$REVIEW" "$PULL_REQUEST"']
    assert any(s.get("uses", "").startswith("actions/download-artifact@") for s in steps)
