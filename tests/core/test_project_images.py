"""A job on a project image must ship its code: the image names no program and keeps its copy out of /opt/ml/code."""

from __future__ import annotations

from compiler.reader import Findings
from compiler.rules import check_workload

PROJECT_IMAGE = {"image": {"repository": "gpt-trainer"}, "framework_version": ..., "py_version": ...}


def test_a_project_image_job_without_entry_point_is_refused(rejects) -> None:
    message = rejects("entry_point", "gpt-trainer", "add entry_point", "source_dir",
                      entry_point=..., source_dir=..., **PROJECT_IMAGE)
    assert "ships none" in message


def test_a_project_image_job_with_its_code_passes(make) -> None:
    findings = Findings("demo.yaml")
    check_workload(make(**PROJECT_IMAGE), findings)
    assert not [p for p in findings.problems if p.field == "entry_point"]
