"""training/ ships alone into the jobs: it imports nothing of the platform, and nobody reaches it through sys.path."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.trainer.conftest import REPO, TRAINING_DIR

# The platform's own packages and its deploy-time dependencies: none of them is in a training container.
FORBIDDEN = {"aws_cdk", "boto3", "botocore", "sagemaker", "yaml", "compiler", "trainctl", "stacks",
             "platform_constructs"}


def _python_files(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in ([root] if root.is_file() else root.rglob("*.py")))


def _imported_top_levels(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


# The one exception: the secrets resolver calls Secrets Manager with boto3, which every SageMaker framework image has
# (the training toolkit depends on it); it imports it only when the job names secrets.
AWS_SDK_USERS = {TRAINING_DIR / "platform_secrets" / "__init__.py": {"boto3", "botocore"}}


@pytest.mark.parametrize("path", _python_files(TRAINING_DIR), ids=lambda p: str(p.relative_to(REPO)))
def test_the_trainer_imports_nothing_of_the_platform(path):
    assert not _imported_top_levels(path) & (FORBIDDEN - AWS_SDK_USERS.get(path, set()))


def test_only_the_secrets_resolver_imports_the_aws_sdk_and_only_inside_functions():
    resolver = TRAINING_DIR / "platform_secrets" / "__init__.py"
    module_level = {alias.name.split(".")[0] for node in ast.parse(resolver.read_text()).body
                    if isinstance(node, ast.Import) for alias in node.names}
    module_level |= {node.module.split(".")[0] for node in ast.parse(resolver.read_text()).body
                     if isinstance(node, ast.ImportFrom) and node.module}
    assert not module_level & {"boto3", "botocore"}  # a job without secrets never imports them
    assert _imported_top_levels(resolver) & {"boto3", "botocore"}  # the exception is still needed


@pytest.mark.parametrize("path", _python_files(TRAINING_DIR, REPO / "tests" / "trainer",
                                              REPO / "bench" / "train_throughput.py"),
                         ids=lambda p: str(p.relative_to(REPO)))
def test_gptlm_is_imported_by_name_not_through_sys_path(path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name):
            assert node.value.id != "sys", f"{path}:{node.lineno} touches sys.path"
