"""docs/security.md names the rules and tests that enforce what it says: each name must exist, so a rename or a
removal fails here instead of leaving the page pointing at nothing."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from compiler.rules import registry

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "security.md").read_text()


def _test_functions() -> set[str]:
    names = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        tree = ast.parse(path.read_text())
        names |= {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    return names


def test_every_test_the_page_names_exists() -> None:
    named = set(re.findall(r"`(test_[a-z0-9_]+)`", DOC))
    assert named, "the page names no test"
    assert named - _test_functions() == set()


def test_every_test_file_the_page_names_exists() -> None:
    files = set(re.findall(r"`(tests/[a-z_/]+\.py)`", DOC))
    assert {"tests/compiler/rules/test_paths.py", "tests/platform/test_job_security_groups.py"} <= files
    assert [f for f in files if not (ROOT / f).is_file()] == []


def test_every_rule_the_page_names_is_registered() -> None:
    registered = {rule.__name__ for rules in registry.ALL_RULES for rule in rules}
    table = set(re.findall(r"^\| `([a-z0-9_]+)` \(`compiler/rules/", DOC, re.MULTILINE))
    assert table == {"no_credentials_in_the_spec", "no_credentials_in_the_request", "fsx_channels_stay_in_bounds",
                     "checkpoint_path_stays_in_opt_ml",
                     "foreign_images_are_pinned_by_digest", "secrets_reach_the_process", "fsx_reads_are_granted_datasets",
                     "secrets_belong_to_the_environment", "network_isolation_is_off_only_with_a_reason",
                     "fsx_channels_pass_no_job_written_entry", "data_bucket_reads_are_granted_datasets",
                     "s3_prefixes_are_literal", "secrets_are_granted_to_the_workload",
                     "kms_keys_are_granted_to_the_workload", "remote_debug_only_with_a_reason"}
    assert table <= registered
