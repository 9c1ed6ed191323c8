"""The architecture's contracts (pyproject.toml, [tool.importlinter]) hold, and they would catch a break.

The second test copies the packages, adds one import that breaks the pure-compiler rule, and expects import-linter
to name the contract and the import: a contract that matches no module would pass silently otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.project import PROJECT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = ("compiler", "trainctl", "stacks", "platform_constructs", "training/gptlm")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    pythonpath = os.pathsep.join([str(root), str(root / "training")])
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": pythonpath},
    )


def test_every_contract_is_kept() -> None:
    result = lint_imports(PROJECT.root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_cdk_import_in_the_compiler_breaks_the_pure_compiler_contract(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(PROJECT.root / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT.root / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "compiler" / "shortcut.py").write_text("import aws_cdk.aws_iam\n")

    result = lint_imports(tmp_path)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "The compiler is pure" in result.stdout and "BROKEN" in result.stdout
    assert "compiler.shortcut -> aws_cdk" in result.stdout
    assert "7 kept, 1 broken" in result.stdout


def test_a_stack_raising_a_compiler_error_breaks_the_plan_contract(tmp_path: Path) -> None:
    # The CDK layer builds from the plan: a refusal of its own would stop synth where validate passed.
    for package in PACKAGES:
        shutil.copytree(PROJECT.root / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT.root / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "stacks" / "shortcut.py").write_text("from compiler.errors import SpecError\n")

    result = lint_imports(tmp_path)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "The CDK layer builds from the pipeline's plan" in result.stdout and "BROKEN" in result.stdout
    assert "stacks.shortcut -> compiler.errors" in result.stdout


def test_a_fact_importing_the_pipeline_breaks_the_compiler_layers(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(PROJECT.root / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT.root / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "compiler" / "facts" / "shortcut.py").write_text("from compiler import pipeline\n")

    result = lint_imports(tmp_path)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "The compiler's layers" in result.stdout and "BROKEN" in result.stdout
    assert "compiler.facts.shortcut -> compiler.pipeline" in result.stdout


def test_run_importing_smoke_breaks_the_trainctl_wings(tmp_path: Path) -> None:
    # smoke builds on run's follower; run reaching back into smoke would tie the wings in a loop.
    for package in PACKAGES:
        shutil.copytree(PROJECT.root / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT.root / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "trainctl" / "run" / "shortcut.py").write_text("from trainctl.smoke import facts\n")
    (tmp_path / "trainctl" / "common" / "shortcut.py").write_text("from trainctl.project import summary\n")

    result = lint_imports(tmp_path)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "trainctl's wings" in result.stdout and "BROKEN" in result.stdout
    assert "trainctl.run.shortcut -> trainctl.smoke.facts" in result.stdout
    assert "trainctl.common.shortcut -> trainctl.project.summary" in result.stdout


def test_the_compiler_tests_mirror_its_layers() -> None:
    """tests/compiler/<layer>/ for each of the compiler's layer packages, and no test folder without its package: a
    test of the rules sits beside the rules' other tests (the pipeline's own tests stay at the top)."""
    root = PROJECT.root
    layers = {p.name for p in (root / "compiler").iterdir() if (p / "__init__.py").is_file()}
    folders = {p.name for p in (root / "tests" / "compiler").iterdir() if (p / "__init__.py").is_file()}
    assert folders == layers
    top = {p.name for p in (root / "tests" / "compiler").glob("test_*.py")}
    # the pipeline's own: what it runs once, its properties, and a new team's first workloads through all of it
    assert top == {"test_pipeline_once.py", "test_properties.py", "test_first_workloads.py"}
