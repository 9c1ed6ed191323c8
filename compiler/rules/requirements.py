"""A `requirements.txt` in the code bundle installs without a network, or the spec says how it reaches one.

The training toolkit pip-installs the bundle's `requirements.txt` when a Python entry point starts, on every host
(compiler/inputs/requirements.py says where that is written). Under network isolation, the default, pip reaches no
index: a line the image does not already satisfy fails the job after its instances have started and are billed. The
same holds with isolation off when the environment gives the job no way to the internet (no NAT gateway), or its DNS
firewall blocks the package index's names.

What the image holds (compiler/facts/image_packages.py): an AWS framework image whose Dockerfile was read is known
well enough to refuse a line it cannot satisfy; any other framework image, an image of this project's own (which may
hold more than its base) and any `image_uri` are not, so a line that is not known to be there is a warning naming the
image.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from compiler.compilation.images import ecr_parts
from compiler.facts.image_packages import FRAMEWORK_PACKAGE, TOOLKIT_PACKAGES, dlc_packages
from compiler.inputs.environments import Environment
from compiler.inputs.image_builds import BaseImage, ImageBuild
from compiler.inputs.model import FrameworkImage, ProjectImage, Workload
from compiler.inputs.reader import Findings
from compiler.inputs.requirements import FILE_NAME, Line, Requirements, read_requirements
from compiler.inputs.sourcedir import Scan
from compiler.rules.registry import compiled_rule
from compiler.rules.views import CompiledView
from compiler.sdk.framework_images import ImageNotFound

# pip's default index and the host its files download from (pip documentation, "pip install": --index-url defaults to
# https://pypi.org/simple; PyPI serves the files from files.pythonhosted.org).
PACKAGE_INDEX_NAMES = ("pypi.org", "files.pythonhosted.org")
_NAMES = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "huggingface": "HuggingFace", "xgboost": "XGBoost",
          "sklearn": "scikit-learn"}
# The SageMaker XGBoost and scikit-learn images, named for their framework's release (1.7-1: XGBoost 1.7, at a patch
# not said); what else they hold is not listed offline, so every other line is "not known", never "absent".
_TABULAR_PACKAGE = {"xgboost": "xgboost", "sklearn": "scikit-learn"}


@dataclass(frozen=True)
class ImageContents:
    """What a job's image is known to hold: distribution -> version (None: there, at a version not known here)."""

    what: str  # "the PyTorch 2.2.0 training image"
    versions: Mapping[str, str | None]
    complete: bool  # an AWS image as published: nothing else is there. False: an image that may add packages
    python: str | None  # "3.10", for environment markers


def _framework_versions(framework: str, version: str | None, base: Mapping[str, str | None],
                        installed: frozenset[str] = frozenset()) -> dict[str, str | None]:
    """The toolkit's packages and what the image's Dockerfile installs (versions unknown), and the framework (and a
    HuggingFace image's base) at the version the image is named by, where that names one release."""
    known: dict[str, str | None] = dict.fromkeys(TOOLKIT_PACKAGES | installed)
    if framework in FRAMEWORK_PACKAGE:
        known[FRAMEWORK_PACKAGE[framework]] = version
    known.update(base)
    return {name: v if v is None or _full(v) else None for name, v in known.items()}


def _python(py_version: str | None) -> str | None:
    """`py310` -> `3.10` (None where the minor version is not said)."""
    digits = (py_version or "").removeprefix("py")
    return f"{digits[0]}.{digits[1:]}" if len(digits) > 1 and digits.isdigit() else None


def _installed(uri: str | None) -> frozenset[str] | None:
    """What the AWS image at `uri` holds, where its Dockerfile was read (None otherwise)."""
    parts = ecr_parts(uri) if uri else None
    return dlc_packages(parts["repository"], parts["tag"]) if parts is not None and parts["tag"] else None


def _base_holds(base: BaseImage, region: str | None) -> frozenset[str]:
    """What a project image's base holds, where its Dockerfile was read (nothing known otherwise)."""
    try:
        return (_installed(base.uri(region)) if region else None) or frozenset()
    except ImageNotFound:  # cdk.json's image rule names that problem; here it only means nothing is known
        return frozenset()


def image_contents(w: Workload, builds: Mapping[str, ImageBuild], training_image: str | None = None,
                   region: str | None = None) -> ImageContents:
    """What the job's image holds: `training_image` is the request's TrainingImage (an AWS image's URI says which
    Dockerfile built it), `region` where a project image's base is pulled from."""
    estimator, image = w.estimator, w.image
    if isinstance(image, FrameworkImage) and estimator.framework in FRAMEWORK_PACKAGE:
        base = {"torch": estimator.pytorch_version} if estimator.pytorch_version else (
            {"tensorflow": estimator.tensorflow_version} if estimator.tensorflow_version else {})
        installed = _installed(training_image)
        versions = _framework_versions(estimator.framework, estimator.framework_version, base, installed or frozenset())
        label = f"the {_NAMES[estimator.framework]} {estimator.framework_version} training image"
        return ImageContents(label, versions, installed is not None, _python(estimator.py_version))
    if isinstance(image, FrameworkImage) and estimator.framework in _TABULAR_PACKAGE:
        label = f"the {_NAMES[estimator.framework]} {estimator.framework_version} training image"
        return ImageContents(label, {_TABULAR_PACKAGE[estimator.framework]: None}, False, _python(estimator.py_version))
    if isinstance(image, ProjectImage) and image.repository in builds:
        built = builds[image.repository].base_image
        versions = _framework_versions(built.framework, built.framework_version, {}, _base_holds(built, region))
        return ImageContents(f"the image {image.repository} (built FROM the {_NAMES.get(built.framework, built.framework)} "
                             f"{built.framework_version} training image)", versions, False, _python(built.py_version))
    label = f"the image {image.repository}" if isinstance(image, ProjectImage) else "the image_uri image"
    return ImageContents(label, {}, False, _python(estimator.py_version))


@dataclass
class Verdicts:
    """Each line of the file by what pip would do with it in the job."""

    missing: list[Line]  # not in the image: pip must download it
    other_version: list[tuple[Line, str]]  # in the image at a version the line refuses: pip must download another
    remote: list[Line]  # a URL pip downloads
    unknown: list[Line]  # not known to be in an image that may hold more
    unknown_version: list[Line]  # in the image, at a version not known here, and the line asks for some
    builds: list[Line]  # a local project pip builds (its build backend may come from the index)

    @property
    def downloads(self) -> list[Line]:
        return [*self.missing, *(line for line, _ in self.other_version), *self.remote]


def _applies(line: Line, python: str | None) -> bool:
    """Whether the line's environment marker holds in a SageMaker training container (Linux, x86_64, CPython); a
    marker that needs a Python version the image does not say is taken to hold."""
    if line.marker is None:
        return True
    environment = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
                   "platform_machine": "x86_64", "implementation_name": "cpython",
                   "platform_python_implementation": "CPython", "extra": ""}
    if python is not None:
        environment |= {"python_version": python, "python_full_version": f"{python}.0"}
    elif "python_version" in str(line.marker) or "python_full_version" in str(line.marker):
        return True
    return bool(line.marker.evaluate(environment))


def _version_refused(line: Line, version: str) -> bool:
    """Whether `version` (the image's) fails the line's specifier; False where either cannot be read."""
    try:
        return not SpecifierSet(line.specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def judge(found: Requirements, image: ImageContents) -> Verdicts:
    verdicts = Verdicts([], [], [], [], [], [])
    for line in found.lines:
        if not _applies(line, image.python):
            continue
        if line.url is not None:
            if line.remote:
                verdicts.remote.append(line)
            elif not line.url.endswith(".whl"):
                verdicts.builds.append(line)
        elif line.name is None or line.name in found.archives:
            continue
        elif line.name not in image.versions:
            (verdicts.missing if image.complete else verdicts.unknown).append(line)
        elif line.specifier:
            version = image.versions[line.name]
            if version is None:
                verdicts.unknown_version.append(line)
            elif _version_refused(line, version):
                verdicts.other_version.append((line, version))
    return verdicts


def _full(version: str) -> bool:
    """Whether a framework version names one release (`2.2.0`); `2.2` is an alias the SDK's image catalog resolves
    to a patch release this check does not look up."""
    try:
        return len(Version(version).release) >= 3
    except InvalidVersion:
        return False


def _at(line: Line) -> str:
    """Where a line is: `line 3`, or `other.txt line 3` in a file that -r includes."""
    return f"line {line.number}" if line.file == FILE_NAME else line.where


def _listed(lines: list[Line]) -> str:
    return ", ".join(f"`{line.text}` ({_at(line)})" for line in lines)


def _ways_out(w: Workload, env: Environment) -> str:
    image = ("build an image that holds them (an entry of training-platform:images in cdk.json whose Dockerfile "
             "pip-installs this file, and image: {repository: NAME} here: docs/workload-spec.md#packages-the-job-needs)")
    isolation = ("" if not w.enable_network_isolation else
                 "enable_network_isolation: false with network_isolation_off_reason (say why), and ")
    return (f"{image}; or {isolation}a way to the package index: {_egress_fix(env)}; or remove the lines the code "
            "does not import")


def _egress_steps(env: Environment) -> list[str]:
    """What the environment lacks for a job without isolation to reach PyPI: a NAT gateway, and where its DNS
    firewall blocks, the package index's names in its allow list (none: it has both)."""
    steps = [] if env.nat_gateway else [f"nat_gateway: true for environment {env.name} in cdk.json"]
    blocked = [n for n in PACKAGE_INDEX_NAMES if not env.dns_firewall.allows(n)]
    if env.dns_firewall.mode == "block" and blocked:
        steps.append(f"{' and '.join(blocked)} in the allow list of training-platform:dns-firewall.{env.name}")
    return steps


def _egress_fix(env: Environment) -> str:
    return ", and ".join(_egress_steps(env)) or f"environment {env.name} has one already"


def _download_problem(w: Workload, env: Environment, verdicts: Verdicts, image: ImageContents, file: str) -> str:
    parts = []
    if verdicts.missing:
        parts.append(f"{_listed(verdicts.missing)} {'is' if len(verdicts.missing) == 1 else 'are'} not in {image.what}")
    for line, version in verdicts.other_version:
        parts.append(f"{_listed([line])} refuses the {line.name} {version} of {image.what}")
    if verdicts.remote:
        parts.append(f"{_listed(verdicts.remote)} {'downloads' if len(verdicts.remote) == 1 else 'download'} from "
                     "a URL")
    why = ("with network isolation on (the default) pip reaches no package index" if w.enable_network_isolation else
           f"with isolation off, environment {env.name} still gives the job no way to the package index")
    return (f"{file}: the training toolkit pip-installs it when the job starts, on every host, and {why}, so the job "
            f"would fail after its instances started (billed): {'; '.join(parts)}. Ways out: {_ways_out(w, env)}")


def _installed_by(build: ImageBuild | None, bundle: Scan) -> bool:
    """Whether the image's Dockerfile pip-installs this very file: its build context holds a file of the same bytes as
    the bundle's requirements.txt, and a line of the Dockerfile runs pip install naming that file's path."""
    source = next((e.path for e in bundle.entries if e.arcname == FILE_NAME), None)
    if build is None or source is None:
        return False
    try:
        wanted = source.read_bytes()
        dockerfile = (build.build_context / build.dockerfile).read_text(encoding="utf-8", errors="replace").replace(
            "\\\n", " ")
        twins = [p.relative_to(build.build_context).as_posix() for p in build.build_context.rglob(FILE_NAME)
                 if p.is_file() and p.read_bytes() == wanted]
    except OSError:
        return False
    lines = [line for line in dockerfile.splitlines() if "pip" in line and "install" in line]
    return any(twin in line for twin in twins for line in lines)


def _file_name(view: CompiledView) -> str:
    """The requirements file as the project names it (`training/requirements.txt`)."""
    code = view.workload.code
    if code is None or code.source_dir is None:
        return FILE_NAME
    path = code.source_dir / FILE_NAME
    try:
        return path.relative_to(Path(view.project_root).absolute()).as_posix()
    except ValueError:
        return path.as_posix()


@compiled_rule
def requirements_install_without_a_network(view: CompiledView, f: Findings) -> None:
    w, code = view.workload, view.workload.code
    if code is None or view.bundle is None or code.program.endswith(".sh"):  # a shell entry point installs nothing
        return
    found = read_requirements(view.bundle)
    if found is None:
        return
    file = _file_name(view)
    for problem in found.problems:
        f.warn("source_dir", f"{problem} (pip reads it when the job starts, and stops on what it cannot read)")
    if not w.enable_network_isolation and not _egress_steps(view.environment):  # pip reaches PyPI
        return
    if isinstance(w.image, ProjectImage) and _installed_by(view.image_builds.get(w.image.repository), view.bundle):
        return
    image = image_contents(w, view.image_builds, view.request["AlgorithmSpecification"]["TrainingImage"],
                           view.environment.region)
    verdicts = judge(found, image)
    if verdicts.downloads:
        f.problem("source_dir", _download_problem(w, view.environment, verdicts, image, file))
    if verdicts.unknown:
        f.warn("source_dir", f"{file}: {_listed(verdicts.unknown)} must already be in {image.what}: pip in the job "
               "reaches no package index, and a line the image does not satisfy fails the job after its instances "
               "started. Check that the image holds them, or " + _ways_out(w, view.environment))
    if verdicts.unknown_version:
        f.warn("source_dir", f"{file}: {_listed(verdicts.unknown_version)}: {image.what} holds "
               f"{', '.join(sorted({str(line.name) for line in verdicts.unknown_version}))} at a version not known "
               "here; if that version does not satisfy the line, pip needs a "
               "package index the job cannot reach. Drop the version from the line, or check it with "
               "`docker run --rm IMAGE pip show NAME`")
    if verdicts.builds:
        f.warn("source_dir", f"{file}: {_listed(verdicts.builds)} is a local project pip builds in the job; a build "
               "that needs its build backend (setuptools, ...) from the package index fails without a network: ship "
               "a wheel instead")
