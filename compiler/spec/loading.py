"""Spec files into workloads: one per spec and environment, every problem of every file reported at once.

A spec deploys to every environment unless its `environments` block names some; there it may override a few keys
(one node in dev, another instance type where capacity differs). Each environment's effective spec is checked
exactly like the base: the same readers and rules, plus the environment's own rules (FSx present, network room,
buckets, keys, images in its region). Across specs, names and job-name prefixes must be unique.
"""

from __future__ import annotations

import difflib
import stat
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler import rules
from compiler.errors import Problem, SpecError
from compiler.inputs.environments import Environment
from compiler.inputs.image_builds import IMAGES_KEY, ImageBuild
from compiler.inputs.model import ProjectImage, Workload
from compiler.inputs.project import Project
from compiler.inputs.reader import Findings
from compiler.inputs.spec.overridable import MERGED, OVERRIDABLE, apply, why_not
from compiler.inputs.spec_yaml import MAX_SPEC_BYTES, SpecYamlError, load_spec_text
from compiler.rules.views import ProjectView
from compiler.spec.parse import parse_workload

ENVIRONMENTS_KEY = "environments"


@dataclass(frozen=True)
class SpecFile:
    """One spec file as read: its mapping, where it is, and its per-environment block."""

    path: Path
    source: str
    raw: Mapping[str, Any]

    @property
    def base(self) -> dict[str, Any]:
        return {k: v for k, v in self.raw.items() if k != ENVIRONMENTS_KEY}

    @property
    def environments(self) -> Mapping[str, Any] | None:
        value = self.raw.get(ENVIRONMENTS_KEY)
        return value if isinstance(value, Mapping) else None

    @property
    def name(self) -> str:
        return str(self.raw.get("name", self.path.stem))

    def deploys_to(self, env: Environment) -> bool:
        """Named in its `environments:` block; without one, where the environment takes workloads by default."""
        if self.environments is None:
            return env.takes_by_default(self.name)
        return env.name in self.environments

    def overrides(self, env: str) -> Mapping[str, Any]:
        value = (self.environments or {}).get(env)
        return value if isinstance(value, Mapping) else {}

    def for_environment(self, env: str) -> dict[str, Any]:
        """The effective spec in one environment (`compiler.inputs.spec.overridable.apply`)."""
        return apply(self.base, {k: v for k, v in self.overrides(env).items() if k in OVERRIDABLE})


@dataclass
class Loaded:
    """Every spec, the workloads as written, and the workloads of each environment (what synth deploys)."""

    specs: list[SpecFile] = field(default_factory=list)
    base: dict[str, Workload] = field(default_factory=dict)
    by_environment: dict[str, dict[str, Workload]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def workloads(self, env: str) -> list[Workload]:
        return [self.by_environment[env][n] for n in sorted(self.by_environment.get(env, {}))]


def _spec_bytes(path: Path, project: Project) -> tuple[Path, bytes]:
    """The spec's path (a link's target) and its bytes, read only when it is a regular file, and at most one byte past
    the size limit: a link out of the project, a pipe (whose read would wait forever) or a device is refused unread."""
    shown = _shown(path, project)
    target = Path(path).resolve()
    # only the file itself is held to the project (`validate --directory` may name a folder of specs elsewhere)
    if Path(path).is_symlink() and not target.is_relative_to(project.root.resolve()):
        raise SpecError(Problem(shown, "", f"is a link to {target}, outside the project: a spec's paths are relative "
                                "to it and must stay in the repository; put the spec itself in workloads/"))
    try:
        mode = target.stat().st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a pipe" if stat.S_ISFIFO(mode) else "no regular file"
            raise SpecError(Problem(shown, "", f"is {kind}, not a YAML file; workload specs are files named *.yaml "
                                    "or *.yml (move it out of the way or rename it)"))
        with open(target, "rb") as handle:
            return (target if Path(path).is_symlink() else Path(path).absolute()), handle.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise SpecError(Problem(shown, "", "no such file")) from None
    except OSError as exc:
        raise SpecError(Problem(shown, "", f"cannot be read: {exc.strerror or exc}")) from None


def _shown(path: Path, project: Project) -> str:
    """The path as written inside the project (a link by its own name, not its target's)."""
    try:
        return Path(path).absolute().relative_to(project.root.absolute()).as_posix()
    except ValueError:
        return project.display(path)


def read_spec_file(path: Path, project: Project) -> SpecFile:
    spec_path, data = _spec_bytes(path, project)  # a link's target: its relative paths were written from there
    source = project.display(spec_path)
    if len(data) > MAX_SPEC_BYTES:
        raise SpecError(Problem(source, "", f"is larger than {MAX_SPEC_BYTES // 1024} KiB; a workload spec is a page "
                                "of settings"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise SpecError(Problem(source, "", f"is not UTF-8 text: byte {exc.object[exc.start]:#04x} on line {line} is not "
                                "UTF-8; save the file as UTF-8")) from None
    try:
        raw = load_spec_text(text)
    except SpecYamlError as exc:
        raise SpecError(Problem(source, "", str(exc))) from None
    if not isinstance(raw, Mapping):
        raise SpecError(Problem(source, "", "a workload spec is a YAML mapping of estimator arguments"))
    return SpecFile(path=spec_path, source=source, raw=raw)


def _check_environments_block(spec: SpecFile, envs: Mapping[str, Environment], findings: Findings) -> None:
    raw = spec.raw.get(ENVIRONMENTS_KEY)
    if raw is None:
        return
    if not isinstance(raw, Mapping) or not raw:
        findings.problem(ENVIRONMENTS_KEY, "must map environment names to overrides ({} to deploy as written)")
        return
    for name, overrides in raw.items():
        where = f"{ENVIRONMENTS_KEY}.{name}"
        if name not in envs:
            close = difflib.get_close_matches(str(name), list(envs), n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            findings.problem(where, f"cdk.json has no environment {name!r}; {hint}environments: {', '.join(envs)}")
        if overrides is None:
            continue
        if not isinstance(overrides, Mapping):
            findings.problem(where, "must be a mapping of keys to override ({} to deploy as written)")
            continue
        for key in overrides:
            if key not in OVERRIDABLE:
                findings.problem(f"{where}.{key}", why_not(str(key)))
            elif key in MERGED and overrides[key] is None:  # it would replace the base's whole mapping with nothing
                findings.problem(f"{where}.{key}", f"is empty, which would drop every one of the base's {key} in "
                                 f"{name}; name the entries that differ, or leave {key} out to keep the base's")


def _tag(problems: list[Problem], env: str) -> list[Problem]:
    return [Problem(p.source, p.field, f"{p.message} [environment {env}]") for p in problems]


def _for_environment(spec: SpecFile, env: Environment, base: Workload | None, project: Project,
                     base_problems: set[str]) -> tuple[Workload | None, list[Problem], list[str]]:
    """The workload in one environment, its problems not already reported for the base, and its warnings."""
    workload = base
    problems: list[Problem] = []
    if spec.overrides(env.name):
        try:
            workload = parse_workload(spec.for_environment(env.name), source=spec.source, spec_dir=spec.path.parent,
                                      project_root=project.root)
        except SpecError as error:
            return None, _tag([p for p in error.problems if str(p) not in base_problems], env.name), []
    if workload is None:
        return None, problems, []
    findings = Findings(spec.source)
    rules.check_in_environment(workload, env, findings)
    warnings = [f"{w} [environment {env.name}]" for w in findings.warnings]
    return workload, _tag(findings.problems, env.name), warnings


def workload_files(directory: Path) -> list[Path]:
    return sorted([*Path(directory).glob("*.yaml"), *Path(directory).glob("*.yml")])


def _check_image(workload: Workload, images: Collection[str] | None, findings: Findings) -> None:
    if images is None or not isinstance(workload.image, ProjectImage):
        return
    if workload.image.repository in images:
        build = images.get(workload.image.repository) if isinstance(images, Mapping) else None
        if isinstance(build, ImageBuild) and workload.code is None and not build.names_program:
            findings.problem("entry_point", f"the image {build.repository!r} names no program of its own (its "
                             f"{build.dockerfile} sets no ENTRYPOINT and no SAGEMAKER_PROGRAM), so a job that ships "
                             f"no code runs nothing: add entry_point (the script, e.g. train.py) and source_dir (its "
                             f"folder, e.g. ../training)")
        return
    built = ", ".join(sorted(images)) or "none"
    findings.problem("image.repository", f"this project builds no image named {workload.image.repository!r} (it builds: "
                     f"{built}; see {IMAGES_KEY} in cdk.json)")


def _load_one(path: Path, project: Project, envs: Mapping[str, Environment], loaded: Loaded,
              images: Collection[str] | None = None, declared: Mapping[str, Environment] | None = None) -> list[Problem]:
    """Load one spec for `envs`; its `environments` block may name any environment `declared` (default: `envs`)."""
    spec = read_spec_file(path, project)
    findings = Findings(spec.source)
    _check_environments_block(spec, envs if declared is None else declared, findings)
    base = None
    base_problems: set[str] = set()
    problems: list[Problem] = []
    try:
        base = parse_workload(spec.base, source=spec.source, spec_dir=spec.path.parent, project_root=project.root)
        loaded.warnings.extend(base.warnings)
        _check_image(base, images, findings)
    except SpecError as error:
        problems.extend(error.problems)
        base_problems = {str(p) for p in error.problems}
    problems = list(findings.problems) + problems
    loaded.specs.append(spec)
    if base is not None:
        loaded.base[base.name] = base
    for env in envs.values():
        if not spec.deploys_to(env):
            continue
        workload, env_problems, warnings = _for_environment(spec, env, base, project, base_problems)
        problems.extend(env_problems)
        loaded.warnings.extend(warnings)
        if workload is not None and not env_problems:
            loaded.by_environment.setdefault(env.name, {})[workload.name] = workload
    return problems


def project_view(loaded: Loaded, envs: Mapping[str, Environment]) -> ProjectView:
    """What the project rules read of every spec loaded."""
    return ProjectView(environments=envs, base=loaded.base, by_environment=loaded.by_environment,
                       spec_names=frozenset(spec.name for spec in loaded.specs))


def load_workloads(project: Project, envs: Mapping[str, Environment], directory: Path | None = None,
                   images: Collection[str] | None = None) -> Loaded:
    """Every spec of the project, checked for every environment; raises one SpecError listing all problems.

    `images`: the repositories this project builds (a spec's `image.repository` must be one of them).
    """
    loaded = Loaded(by_environment={name: {} for name in envs})
    problems: list[Problem] = []
    for path in workload_files(directory or project.workloads_dir):
        try:
            problems.extend(_load_one(path, project, envs, loaded, images))
        except SpecError as error:
            problems.extend(error.problems)
    findings = Findings("")
    rules.check_project(project_view(loaded, envs), findings)
    problems.extend(findings.problems)
    loaded.warnings.extend(str(w) for w in findings.warnings)
    if problems:
        raise SpecError(problems)
    return loaded


def find_spec(project: Project, name_or_path: str, cwd: Path | None = None) -> Path:
    """A workload's spec file (absolute), by workload name or by path, as people type it on a command line.

    A path is relative to the working directory `cwd` (or absolute); a bare file name not found there is looked up in
    workloads/. The file must lie inside the project: a spec's own paths (source_dir, entry_point) are relative to it
    and are checked to stay in the repository.
    """
    if not name_or_path.strip() or "\x00" in name_or_path:
        raise SpecError(Problem("", "spec", "give a workload name (e.g. gpt-smddp) or a path to its YAML file"))
    try:
        return _locate(project, Path(name_or_path), (cwd or Path.cwd()).resolve(), name_or_path)
    except OSError as exc:
        raise SpecError(Problem(name_or_path, "", f"cannot be read ({exc.strerror})")) from None


def _locate(project: Project, candidate: Path, here: Path, text: str) -> Path:
    if not (candidate.suffix in (".yaml", ".yml") or len(candidate.parts) > 1 or (here / candidate).is_file()):
        return _by_name(project, text)
    path = (here / candidate).resolve()
    if not path.exists() and len(candidate.parts) == 1 and (project.workloads_dir / candidate).is_file():
        path = (project.workloads_dir / candidate).resolve()
    root = project.root.resolve()
    if not path.is_relative_to(root):
        raise SpecError(Problem(str(path), "", f"is outside the project {root}: move the spec into "
                                f"{project.display(project.workloads_dir)}/ (or pass --project-dir naming its project)"))
    if not path.is_file():
        example = (_names(project) or ["gpt-smddp"])[0]
        raise SpecError(Problem(project.display(path), "", "no such spec file (a path is relative to the working "
                                f"directory; or give a workload's name, e.g. {example})"))
    return path


def _names(project: Project) -> list[str]:
    return [p.stem for p in workload_files(project.workloads_dir)]


def _by_name(project: Project, name: str) -> Path:
    for path in workload_files(project.workloads_dir):
        if path.stem == name:
            return path.absolute()  # a link is followed (and held inside the project) by read_spec_file
    known = _names(project)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise SpecError(Problem("", name, f"no such workload; {hint}known: {', '.join(known) or 'none'}"))


def load_workload(project: Project, name_or_path: str, env: Environment,
                  images: Collection[str] | None = None) -> Workload:
    """One workload as it deploys to one environment (raises SpecError when it does not deploy there)."""
    path = find_spec(project, name_or_path)
    loaded = Loaded(by_environment={env.name: {}})
    problems = _load_one(path, project, {env.name: env}, loaded, images, declared=project.environments())
    if problems:
        raise SpecError(problems)
    spec = loaded.specs[0]
    if not spec.deploys_to(env):
        if spec.environments is None:
            raise SpecError(Problem(spec.source, ENVIRONMENTS_KEY, f"does not deploy to environment '{env.name}': it "
                                    "names no environments, and cdk.json's default_workloads of "
                                    f"'{env.name}' does not take it; add {env.name} to its environments:"))
        raise SpecError(Problem(spec.source, ENVIRONMENTS_KEY, f"does not deploy to environment '{env.name}' (its "
                                f"environments: {', '.join(spec.environments or {})}); to deploy it there, add the "
                                f"line `  {env.name}: {{}}` under environments: (with the overrides it needs there)"))
    return next(iter(loaded.by_environment[env.name].values()))


def load_spec_workload(project: Project, name_or_path: str) -> Workload:
    """One workload as written (no environment's overrides or rules): what `trainctl run-local` runs."""
    spec = read_spec_file(find_spec(project, name_or_path), project)
    return parse_workload(spec.base, source=spec.source, spec_dir=spec.path.parent, project_root=project.root)
