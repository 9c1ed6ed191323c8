"""Every install file names registry packages only: no `file:` URLs, no paths on somebody's machine.

A fresh clone must install from the registries (PyPI, npm). A regenerated constraints.txt once pinned a
wheel under /tmp that existed only on the machine that wrote it, and CI passed because CI ran on that machine.
This test reads every install file the project has, so the next regeneration cannot bring that back.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = {".venv", ".venv-tools", "node_modules", ".git", "cdk.out", "build", ".cache"}
NPM_REGISTRY = "https://registry.npmjs.org/"
# pip options that take a location; -r/-c may name another install file of this repository.
_LOCATION_OPTIONS = ("-e", "--editable", "-f", "--find-links", "-i", "--index-url", "--extra-index-url")
_INCLUDE_OPTIONS = ("-r", "--requirement", "-c", "--constraint")
# npm version specs that are not registry versions: local folders, tarballs, links, git and URLs.
_NPM_NOT_REGISTRY = re.compile(r"^(file:|link:|portal:|workspace:|git|github:|https?:|\.{0,2}/|~/)")


def install_files(root: Path = ROOT) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        if SKIPPED_DIRS & set(path.relative_to(root).parts) or not path.is_file():
            continue
        name = path.name
        if re.fullmatch(r"(requirements|constraints)[\w.-]*\.txt", name) or name in (
            "package.json", "package-lock.json", "pyproject.toml",
        ):
            found.append(path)
    return sorted(found)


def _requirement_problem(text: str) -> str | None:
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return "is not a package requirement (a path or URL?)"
    if requirement.url:
        return f"points at {requirement.url} instead of a registry version"
    return None


def pip_file_problems(path: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path.relative_to(root)}:{number}: {line!r}"
        option, _, value = line.partition(" ")
        option = option.split("=", 1)[0]
        if option in _INCLUDE_OPTIONS:
            target = (path.parent / value.strip()).resolve()
            if Path(value.strip()).is_absolute() or not target.is_relative_to(root) or not target.is_file():
                problems.append(f"{where} includes a file outside this repository")
            continue
        if option in _LOCATION_OPTIONS or line.startswith("-"):
            problems.append(f"{where} sets a package location; install files name registry packages only")
            continue
        problem = _requirement_problem(line)
        if problem:
            problems.append(f"{where} {problem}")
    return problems


def pyproject_problems(path: Path, root: Path = ROOT) -> list[str]:
    data = tomllib.loads(path.read_text())
    listed = [*data.get("project", {}).get("dependencies", []), *data.get("build-system", {}).get("requires", [])]
    for extra in data.get("project", {}).get("optional-dependencies", {}).values():
        listed += extra
    return [f"{path.relative_to(root)}: {text!r} {problem}" for text in listed
            if (problem := _requirement_problem(text))]


def npm_problems(path: Path, root: Path = ROOT) -> list[str]:
    data = json.loads(path.read_text())
    where = path.relative_to(root)
    problems = []
    if path.name == "package.json":
        for section in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
            for name, spec in data.get(section, {}).items():
                if _NPM_NOT_REGISTRY.match(str(spec)):
                    problems.append(f"{where}: {section}.{name} = {spec!r} is not a registry version")
        return problems
    for key, entry in data.get("packages", {}).items():
        if not key:
            continue
        resolved = entry.get("resolved")
        if entry.get("link") or (resolved is not None and not resolved.startswith(NPM_REGISTRY)):
            problems.append(f"{where}: {key} resolves to {resolved!r}, not the npm registry")
        if _NPM_NOT_REGISTRY.match(str(entry.get("version", ""))):
            problems.append(f"{where}: {key} has version {entry['version']!r}")
    return problems


def problems_in(path: Path, root: Path = ROOT) -> list[str]:
    if path.suffix == ".txt":
        return pip_file_problems(path, root)
    if path.name == "pyproject.toml":
        return pyproject_problems(path, root)
    return npm_problems(path, root)


def test_the_project_has_its_install_files() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in install_files()}
    assert {"requirements.txt", "requirements-dev.txt", "constraints.txt", "package.json",
            "package-lock.json"} <= names


@pytest.mark.parametrize("path", install_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_install_file_names_registry_packages_only(path: Path) -> None:
    assert problems_in(path) == []


# The checker itself: each way a local path has crept into install files elsewhere is caught.
BAD_PIP_LINES = [
    "cdk-ecr-deployment @ file:///tmp/ecrdep/cdk_ecr_deployment-4.2.76-py3-none-any.whl#sha256=ffe5",
    "/tmp/wheels/some_package-1.0-py3-none-any.whl",
    "./vendor/some_package",
    "-e /home/someone/src/some_package",
    "--find-links /opt/wheels",
    "-r /etc/requirements.txt",
    "some-package @ https://example.com/some_package-1.0.tar.gz",
]


@pytest.mark.parametrize("line", BAD_PIP_LINES)
def test_a_local_or_direct_reference_in_a_pip_file_is_caught(tmp_path: Path, line: str) -> None:
    path = tmp_path / "constraints.txt"
    path.write_text(f"# pinned\nboto3==1.44.5\n{line}\n")
    [problem] = pip_file_problems(path, tmp_path)
    assert "constraints.txt:3" in problem


def test_pinned_registry_packages_and_includes_pass(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("boto3==1.44.5  # why\n")
    path = tmp_path / "requirements-dev.txt"
    path.write_text("-r requirements.txt\nmoto[stepfunctions]==5.2.5\ntorch==2.13.0 ; python_version >= '3.11'\n")
    assert pip_file_problems(path, tmp_path) == []


@pytest.mark.parametrize("spec", ["file:../asl-validator", "link:./tools", "git+https://github.com/x/y.git",
                                  "https://example.com/x.tgz", "./vendor/x"])
def test_a_local_npm_dependency_is_caught(tmp_path: Path, spec: str) -> None:
    path = tmp_path / "package.json"
    path.write_text(json.dumps({"devDependencies": {"aws-cdk": "2.1148.1", "x": spec}}))
    assert len(npm_problems(path, tmp_path)) == 1


def test_a_lockfile_entry_outside_the_registry_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "package-lock.json"
    path.write_text(json.dumps({"packages": {
        "": {"name": "x"},
        "node_modules/ok": {"version": "1.0.0", "resolved": NPM_REGISTRY + "ok/-/ok-1.0.0.tgz"},
        "node_modules/local": {"version": "1.0.0", "resolved": "file:../local-1.0.0.tgz"},
        "node_modules/linked": {"link": True, "resolved": "../linked"},
    }}))
    problems = npm_problems(path, tmp_path)
    assert [p.split(":")[1].strip().split()[0] for p in problems] == ["node_modules/local", "node_modules/linked"]


def test_a_direct_reference_in_pyproject_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\ndependencies = ["boto3==1.44.5", "y @ file:///tmp/y.whl"]\n')
    [problem] = pyproject_problems(path, tmp_path)
    assert "file:///tmp/y.whl" in problem


def test_every_package_of_the_project_is_installed() -> None:
    """pyproject.toml lists the packages by name: a new subpackage left out imports from an editable install here
    but is missing from a wheel. Every folder with an __init__.py under the installed roots is listed."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed, dirs = set(tool["packages"]), {name: ROOT / path for name, path in tool.get("package-dir", {}).items()}
    found = set()
    for top in {name.split(".")[0] for name in listed}:
        base = dirs.get(top, ROOT / top)
        for init in base.rglob("__init__.py"):
            parts = init.parent.relative_to(base).parts
            if "__pycache__" not in parts:
                found.add(".".join((top, *parts)))
    assert found == listed
