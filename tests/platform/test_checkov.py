"""checkov 3 on every synthesized template: no failed check, and every skipped one is acknowledged on its resource
with a reason that docs/security.md repeats under the same rule id.

checkov runs from its own environment (.venv-tools/checkov, tools/checkov/): its pins conflict with the project's.
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.project import PROJECT

CHECKOV = PROJECT.root / ".venv-tools" / "checkov" / "bin" / "checkov"
SECURITY_DOC = PROJECT.root / "docs" / "security.md"


def checkov(directory: Path) -> list[dict[str, Any]]:
    """checkov's CloudFormation results for every template under `directory`, one report per run."""
    if not CHECKOV.exists():
        pytest.fail("checkov is not installed: run scripts/test.sh (it installs tools/checkov into .venv-tools)")
    result = subprocess.run(
        [str(CHECKOV), "--directory", str(directory), "--framework", "cloudformation", "--output", "json",
         "--compact", "--skip-download"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode in (0, 1), result.stderr[-3000:]  # 1: failed checks, reported below
    report = json.loads(result.stdout)
    return report if isinstance(report, list) else [report]


@cache
def results(outdir: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    failed: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    resources = 0
    for report in checkov(Path(outdir)):
        failed += report["results"]["failed_checks"]
        skipped += report["results"]["skipped_checks"]
        resources += report["summary"]["resource_count"]
    return failed, skipped, resources


def test_every_template_passes_checkov(synthesized_app: Any) -> None:
    failed, _, resources = results(str(synthesized_app.outdir))
    assert resources > 150  # every stack of both environments was read
    assert [(f["check_id"], f["file_path"], f["resource"], f["check_name"]) for f in failed] == []


def test_each_acknowledged_check_has_its_reason_in_the_docs(synthesized_app: Any) -> None:
    _, skipped, _ = results(str(synthesized_app.outdir))
    assert skipped, "the access-log bucket, the FSx key policy and the custom-resource handlers are acknowledged"
    docs = SECURITY_DOC.read_text()
    for finding in skipped:
        assert len(finding["check_result"].get("suppress_comment", "")) > 40, finding["resource"]
        assert finding["check_id"] in docs, f"{finding['check_id']} ({finding['resource']}) is not in {SECURITY_DOC}"


def test_checkov_finds_an_unacknowledged_problem(synthesized_app: Any, tmp_path: Path) -> None:
    """The same run on a copy of a real template with one acknowledgment removed and one bucket left unencrypted."""
    template_path = next(Path(synthesized_app.outdir).glob("assembly-prod/*Storage*.template.json"))
    template = json.loads(template_path.read_text())
    resources = template["Resources"]
    access_logs = next(r for k, r in resources.items() if k.startswith("StorageAccessLogs") and
                       r["Type"] == "AWS::S3::Bucket")
    del access_logs["Metadata"]["checkov"]
    (tmp_path / "Storage.template.json").write_text(json.dumps(template))

    failed, _, _ = results(str(tmp_path))
    assert {f["check_id"] for f in failed} == {"CKV_AWS_18"}
