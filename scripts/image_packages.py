"""Rewrite the `packages` of compiler/facts/data/image_packages.json from its `installs`: what each AWS framework
training image's Dockerfile installs, and everything those packages depend on.

An image's Dockerfile names the packages it installs (`installs`, read from aws/deep-learning-containers: each entry
names its Dockerfile and commit); pip installs their dependencies too, and those are in the image as well. This script
asks pip, for each package, which packages it requires (`pip install --dry-run --no-deps --report`: the metadata of
the version pip picks, read from the wheel without downloading it), follows them with their extras, and evaluates
their markers for the image's Python on Linux x86_64. Names only: the versions an image holds are not written.
A package pip finds no wheel for (built from source in the image, or an AWS-only wheel) keeps its name and adds what
`without_wheels` says its own setup.py requires (each entry names its source), or nothing.

Needs the package index (the project's registry) and about 10 minutes; run it after adding or changing `installs`:

    .venv/bin/python scripts/image_packages.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from compiler.facts.image_packages import PACKAGES_FILE
from compiler.inputs.files import write_text_atomically

DATA = Path(str(resources.files("compiler.facts").joinpath(*PACKAGES_FILE)))
# The wheels a SageMaker training container can run: CPython on Linux x86_64.
PLATFORMS = ["manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux1_x86_64",
             "linux_x86_64"]


def requires_dist(requirement: str) -> list[str] | None:
    """Requires-Dist of the version pip picks for `requirement` (for Python 3.11; None when pip finds no wheel)."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--use-feature=fast-deps", "--no-cache-dir", "--no-deps",
             "--dry-run", "--ignore-installed", "--quiet", "--report", str(report), "--python-version", "3.11",
             "--only-binary=:all:", *platforms, "--target", str(Path(scratch) / "target"), requirement],
            capture_output=True, text=True, check=False)
        if done.returncode != 0:
            name = str(canonicalize_name(Requirement(requirement).name))
            return requires_dist(name) if name != requirement else None
        installs = json.loads(report.read_text())["install"]
        return list(installs[0]["metadata"].get("requires_dist", [])) if installs else []


class Walker:
    """Dependency closures by name, each package's metadata asked of pip once."""

    def __init__(self, pool: ThreadPoolExecutor, without_wheels: dict[str, list[str]]) -> None:
        self.pool = pool
        self.without_wheels = without_wheels  # name -> what its own setup.py requires, for a package with no wheel
        self.known: dict[str, list[str]] = {}

    def _metadata(self, requirements: list[str]) -> None:
        missing = sorted({r for r in requirements if r not in self.known})
        for requirement, found in zip(missing, self.pool.map(requires_dist, missing), strict=True):
            name = str(canonicalize_name(Requirement(requirement).name))
            self.known[requirement] = found if found is not None else self.without_wheels.get(name, [])

    def closure(self, roots: dict[str, str], python: str) -> list[str]:
        """Every distribution `roots` (name -> requirement) pull in on CPython `python` on Linux x86_64."""
        marker_env = {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
                      "platform_system": "Linux", "os_name": "posix", "platform_machine": "x86_64",
                      "implementation_name": "cpython", "platform_python_implementation": "CPython"}
        extras: dict[str, set[str]] = {}
        frontier = [(str(canonicalize_name(name)), requirement, frozenset(Requirement(requirement).extras))
                    for name, requirement in roots.items()]
        while frontier:
            todo = [(n, r, e) for n, r, e in frontier if n not in extras or not e <= extras[n]]
            for name, _, wanted in todo:
                extras.setdefault(name, set()).update(wanted)
            self._metadata([r for _, r, _ in todo])
            frontier = []
            for name, requirement, _ in todo:
                for text in self.known[requirement]:
                    dependency = Requirement(text)
                    marker = dependency.marker
                    if marker is None or any(marker.evaluate(marker_env | {"extra": extra})
                                             for extra in (extras[name] or {""})):
                        dependency_name = str(canonicalize_name(dependency.name))
                        frontier.append((dependency_name, dependency_name, frozenset(dependency.extras)))
        return sorted(extras)


def main() -> None:
    data = json.loads(DATA.read_text())
    with ThreadPoolExecutor(8) as pool:
        walker = Walker(pool, {name: entry["requires"] for name, entry in data["without_wheels"].items()})
        for key, image in sorted(data["images"].items()):
            roots = {name: name + image.get("pins", {}).get(name, "") for name in image["installs"]}
            image["packages"] = walker.closure(roots, image["python"])
            print(f"{key}: {len(image['installs'])} installed, {len(image['packages'])} with their dependencies",
                  file=sys.stderr)
    write_text_atomically(DATA, json.dumps(data, indent=1, sort_keys=True) + "\n")  # a crash leaves the old file


if __name__ == "__main__":
    main()
