"""The training images this project builds (cdk.json `training-platform:images`): one ECR repository each.

Each image is built at `cdk deploy` from a folder of the repository (its Docker build context, holding the
Dockerfile) on top of an AWS Deep Learning Container, named by framework, version, Python and an instance type
exactly like a workload's framework image, and resolved by the same code (`compiler.sdk.framework_images`).

The base is a tag, which AWS moves to each patched build of the container. `base_image.digest` (`sha256:<64 hex>`,
from `docker buildx imagetools inspect <uri>`) pins it: the build then pulls `<uri>@<digest>` (Docker ignores the
tag beside a digest), and since the base reaches the build as a build argument, the digest is part of the image's
asset hash, so a new digest is a new image, reviewed as one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.errors import SpecError
from compiler.inputs import paths
from compiler.inputs.project import Project
from compiler.inputs.reader import Findings, Reader
from compiler.inputs.tracked import docker_exclude, tracked_files, untracked_paths
from compiler.sdk.framework_images import ImageNotFound, training_image_uri

IMAGES_KEY = "training-platform:images"
_REPOSITORY = r"[a-z0-9]+(?:[._/-][a-z0-9]+)*"
# OCI image spec, descriptor.md: a sha256 digest is `sha256:` and 64 lowercase hex digits.
_DIGEST = r"sha256:[a-f0-9]{64}"
_BASE_KEYS = ("framework", "framework_version", "py_version", "instance_type")


@dataclass(frozen=True)
class BaseImage:
    """The AWS Deep Learning Container an image builds FROM."""

    framework: str
    framework_version: str
    py_version: str
    instance_type: str  # picks the processor (gpu, cpu, neuron) as the SDK does
    digest: str | None = None  # pins the tag's image (the same in every region it is published to)

    def uri(self, region: str) -> str:
        tagged = training_image_uri(region=region, framework=self.framework, framework_version=self.framework_version,
                                    py_version=self.py_version, instance_type=self.instance_type)
        return f"{tagged}@{self.digest}" if self.digest else tagged


@dataclass(frozen=True)
class ImageBuild:
    repository: str
    build_context: Path
    dockerfile: str
    base_image: BaseImage
    names_program: bool = False  # its Dockerfile names what runs when a job ships no code (`names_a_program`)
    excludes: tuple[str, ...] = ()  # Docker ignore patterns of the context's untracked files (`context_excludes`)


def context_excludes(context: Path, dockerfile: str) -> tuple[list[str], str | None]:
    """Docker ignore patterns for every file of a build context git does not track (none outside git: every file
    ships), so the image is built from tracked files only; and why that cannot be, or None: an untracked Dockerfile
    (the CDK always keeps it), or a name the pattern syntax cannot exclude exactly."""
    tracked = tracked_files(context)
    refusal = _unreadable(context, tracked)
    if refusal is not None:
        return [], refusal
    if tracked is None:
        return [], None
    if Path(dockerfile).as_posix() not in tracked:
        return [], f"{context / dockerfile} is not tracked by git; the image is built from tracked files only (git add it)"
    patterns = {path: docker_exclude(path) for path in untracked_paths(context, tracked)}
    unsayable = [path for path, pattern in patterns.items() if pattern is None]
    if unsayable:
        return [], (f"untracked {', '.join(map(repr, unsayable))} in {context} cannot be excluded from the image by a "
                    "Docker ignore pattern (leading or trailing space, # or ! first, a line break); remove or rename it")
    return [pattern for pattern in patterns.values() if pattern is not None], None


def _unreadable(context: Path, tracked: frozenset[str] | None) -> str | None:
    """The refusal of the first file of the build context the CDK would read (a tracked one; any without git) that you
    cannot read, or None."""
    if tracked is not None:
        files = (context / name for name in sorted(tracked))
    else:
        files = (Path(root) / name for root, _, names in os.walk(context) for name in sorted(names))
    refusals = (paths.unreadable(path, ", and the CDK reads every file of the build context at synth")
                for path in files if path.is_file())
    return next((refusal for refusal in refusals if refusal is not None), None)


# An instruction that names the program a container runs: an ENTRYPOINT of its own, or the training toolkit's
# SAGEMAKER_PROGRAM in the image's environment (sagemaker_training.environment reads it before the job's
# sagemaker_program hyperparameter).
_OWN_PROGRAM = re.compile(r"^(ENTRYPOINT\s|ENV\s.*\bSAGEMAKER_PROGRAM[=\s])", re.IGNORECASE)


def names_a_program(dockerfile: str) -> bool:
    """Whether a Dockerfile names the program its container runs when a job ships no code.

    An image built on an AWS Deep Learning Container runs the training toolkit, which runs the program the job names
    (`sagemaker_program`, from `entry_point`); a job that ships no code runs only what the image names itself.
    """
    joined = re.sub(r"\\\n", " ", dockerfile)
    return any(_OWN_PROGRAM.match(line.strip()) for line in joined.splitlines())


def _one(name: str, r: Reader, project: Project) -> ImageBuild | None:
    r.unknown_keys({"build_context", "dockerfile", "base_image"})
    context_text = r.string("build_context", required=True, explain="a folder of the repository, e.g. training")
    dockerfile = r.string("dockerfile", default="Dockerfile") or "Dockerfile"
    base = r.child("base_image")
    if base is None:
        r.problem("base_image", "is required: {framework, framework_version, py_version, instance_type}")
        return None
    base.unknown_keys({*_BASE_KEYS, "digest"})
    fields = {k: base.string(k, required=True) for k in _BASE_KEYS}
    digest = base.string("digest", pattern=_DIGEST, explain="must be the base image's digest, sha256:<64 lowercase hex "
                         "digits> (docker buildx imagetools inspect <base image URI>)")
    if context_text is None or None in fields.values() or (base.has("digest") and digest is None):
        return None
    for key, text in (("build_context", context_text), ("dockerfile", dockerfile)):
        if (refusal := paths.unusable(text)) is not None:
            r.problem(key, refusal)
            return None
    root = project.root.resolve()
    try:
        context = (project.root / context_text).resolve()
        found = (context / dockerfile).resolve()
        usable = context.is_relative_to(root) and found.is_relative_to(context) and found.is_file()
        text = found.read_text(errors="replace") if usable else ""
    except OSError as exc:
        r.problem("build_context", f"{context_text}/{dockerfile} cannot be read ({exc.strerror})")
        return None
    if not usable:
        r.problem("build_context", f"{context_text}/{dockerfile} is not a Dockerfile in this repository (the "
                  "dockerfile is a path inside build_context)")
        return None
    excludes, refusal = context_excludes(context, dockerfile)
    if refusal is not None:
        r.problem("build_context", refusal)
        return None
    return ImageBuild(repository=name, build_context=context, dockerfile=dockerfile,
                      base_image=BaseImage(**fields, digest=digest),  # type: ignore[arg-type]
                      names_program=names_a_program(text),
                      excludes=tuple(excludes))


def image_builds(project: Project, regions: list[str]) -> dict[str, ImageBuild]:
    """The project's images, checked (their base image must exist in every environment's region)."""
    raw: Any = project.context().get(IMAGES_KEY, {})
    findings = Findings("cdk.json")
    if not isinstance(raw, Mapping):
        raise SpecError(findings.problems or [])
    images = {}
    for name in raw:
        r = Reader(raw, findings, prefix=f"context.{IMAGES_KEY}.")
        if not re.fullmatch(_REPOSITORY, str(name)):
            r.problem(str(name), "repository names are lowercase letters, digits and ._/- separators")
            continue
        child = r.child(str(name))
        build = _one(str(name), child, project) if child is not None else None
        if build is None:
            continue
        for region in regions:
            try:
                build.base_image.uri(region)
            except ImageNotFound as exc:
                child.problem("base_image", f"no such Deep Learning Container in {region}: {exc}")  # type: ignore[union-attr]
        images[str(name)] = build
    if findings.problems:
        raise SpecError(findings.problems)
    return images
