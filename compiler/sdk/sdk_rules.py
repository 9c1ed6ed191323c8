"""What the SageMaker Python SDK v2 itself allows, read from the installed SDK without importing it.

Importing `sagemaker` costs ~2.3 s; `validate` must stay well under a second. The SDK's rule tables are
plain literals (`sagemaker/fw_utils.py`) and JSON files (`sagemaker/image_uri_config/*.json`), so they are
read here straight from the installed package: the pinned SDK stays the single source of these facts.
"""

from __future__ import annotations

import ast
import gzip
import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any


@cache
def sdk_root() -> Path:
    spec = importlib.util.find_spec("sagemaker")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the SageMaker Python SDK v2 is not installed: pip install -r requirements.txt")
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def module_constants(module: str = "fw_utils.py") -> dict[str, Any]:
    """Module-level literal assignments of one SDK module (sagemaker/<module>): version and instance lists, tables."""
    tree = ast.parse((sdk_root() / module).read_text())
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return constants


@cache
def function_constant(module: str, function: str, name: str) -> Any:
    """A literal a function of an SDK module assigns to a local name (a table the SDK keeps inside a check, such as
    SKLearn's GPU instance types in `_validate_not_gpu_instance_type`); KeyError when the SDK no longer has it."""
    tree = ast.parse((sdk_root() / module).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for statement in ast.walk(node):
                if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                        and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == name):
                    return ast.literal_eval(statement.value)
    raise KeyError(f"sagemaker/{module} has no {function}() assigning {name}")


def fw_utils_constants() -> dict[str, Any]:
    """Module-level literal assignments of sagemaker/fw_utils.py (version and instance lists)."""
    return module_constants("fw_utils.py")


def constant(name: str) -> Any:
    return fw_utils_constants()[name]


@cache
def image_uri_config_file(name: str) -> dict[str, Any] | None:
    """All scopes of `sagemaker/image_uri_config/<name>.json` (what `image_uris.config_for_framework` loads), or None
    when the SDK ships no such file. Shared and cached: callers must not modify it."""
    path = sdk_root() / "image_uri_config" / f"{name}.json"
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _botocore_root() -> Path:
    spec = importlib.util.find_spec("botocore")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("botocore (a dependency of the SageMaker Python SDK v2) is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def botocore_endpoints() -> dict[str, Any]:
    """botocore's partition and endpoint data, found where `botocore.loaders.create_loader().load_data("endpoints")`
    (the SDK's `utils._botocore_resolver`) finds it: ~/.aws/models first, then botocore's own data folder, each as
    .json or .json.gz. Shared and cached: callers must not modify it."""
    for folder in (Path.home() / ".aws" / "models", _botocore_root() / "data"):
        if not folder.is_dir():
            continue
        plain, packed = folder / "endpoints.json", folder / "endpoints.json.gz"
        if plain.is_file():
            return _json_object(plain.read_bytes())
        if packed.is_file():
            return _json_object(gzip.decompress(packed.read_bytes()))
    raise RuntimeError("botocore's endpoints.json was not found: reinstall the requirements")


def _json_object(payload: bytes) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(payload.decode("utf-8"))
    return loaded
