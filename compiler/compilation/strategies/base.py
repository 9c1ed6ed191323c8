"""What every distribution strategy class provides, and what its rules may read about the job.

A strategy is one key of the SDK's `distribution` dict (`mpi`, `torch_distributed`, ...; the two `smdistributed`
strategies share that key). Each class knows:
- `present(distribution)`: whether the dict names it (then it adds its SDK hyperparameters, enabled or not);
- `check(job, report)`: the SDK's rules for it (`fw_utils.validate_*`) plus the platform's;
- `hyperparameters(job)`: its part of the SDK's `Framework._distribution_configuration`;
- `launcher` / `local_launcher`: how SageMaker starts the entry point, and how `trainctl run-local` stands in.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from compiler.inputs.reader import suggest

Report = Callable[[str, str], None]  # (field, message)


@dataclass(frozen=True)
class Job:
    """The facts of a workload the strategy rules and encodings read (the SDK's validate_distribution arguments)."""

    framework: str  # pytorch | tensorflow | huggingface
    framework_version: str | None
    py_version: str | None
    base_framework: str  # what `validate_distribution` checks: HuggingFace passes its base framework (pytorch)
    base_version: str | None  # ... and that framework's version (pytorch_version), not transformers_version
    image_uri: str | None  # the literal image_uri, when the spec gives one (SDK image rules look at it)
    uses_own_image: bool  # image_uri or a project-built image: the SDK skips its version tables
    entry_point: str | None
    instance_type: str | None  # None for heterogeneous clusters
    train_instance_types: tuple[str, ...]  # the types the training processes run on
    distribution: Mapping[str, Any]
    cluster_instance_types: tuple[str, ...]  # every group's type, training or not (heterogeneous clusters)


def version_field(job: Job) -> str:
    """The spec key holding `job.base_version`, for messages."""
    if job.framework == "huggingface":
        return f"{job.base_framework}_version"
    return "framework_version"


def unsupported_version(job: Job, versions: Sequence[str], newest: int) -> str:
    """The end of a "supports ..." message for `job.base_version` missing from one of the SDK's tables: the newest
    entries, and the fix. The tables list full versions (1.13.1), and the SDK compares strings, so a short version
    such as 1.13 is refused even where 1.13.1 is listed: then the message names the full versions to write instead
    (for HuggingFace with transformers_version in full too, which the SDK requires of the pair)."""
    version = job.base_version
    full = [v for v in versions if version and v.startswith(f"{version}.")]
    fix = f"; write the full version: {' or '.join(full)}" if full else ""
    if fix and job.framework == "huggingface":
        fix += ", with transformers_version in full too"
    return f"{', '.join(versions[-newest:])} (and older), not {version}{fix}"


def enabled(value: Any) -> bool:
    """The SDK's `.get("enabled", False)` on one strategy's mapping."""
    return isinstance(value, Mapping) and value.get("enabled", False) is True


class Strategy(ABC):
    """One distribution strategy; subclasses are registered in `compiler.compilation.strategies`."""

    key: ClassVar[str]  # the distribution key that names it
    label: ClassVar[str]  # short name for summaries
    frameworks: ClassVar[tuple[str, ...]]  # estimators whose containers launch it
    options: ClassVar[frozenset[str]]  # keys allowed inside its mapping
    process_launcher: ClassVar[str]  # how SageMaker starts the processes: torchrun | mpirun | smddprun | ...
    local_launcher: ClassVar[str | None]  # how run-local stands in; None: not runnable on a laptop

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config

    @classmethod
    def present(cls, distribution: Mapping[str, Any]) -> bool:
        return cls.key in distribution

    @classmethod
    def config_of(cls, distribution: Mapping[str, Any]) -> Mapping[str, Any]:
        value = distribution.get(cls.key)
        return value if isinstance(value, Mapping) else {}

    @property
    def name(self) -> str:
        return self.label

    @property
    def launcher(self) -> str:
        return self.process_launcher

    @property
    def is_enabled(self) -> bool:
        return enabled(self.config)

    @property
    def where(self) -> str:
        return f"distribution.{self.key}"

    def check_shape(self, report: Report) -> bool:
        """Unknown option names and a non-boolean `enabled`; False when the mapping cannot be read further."""
        ok = True
        for option in self.config:
            if option not in self.options:
                close = suggest(str(option), self.options)
                hint = f"did you mean '{close}'? " if close else ""
                report(f"{self.where}.{option}", f"unknown option; {hint}{self.key} takes {', '.join(sorted(self.options))}")
                ok = False
        if "enabled" in self.config and not isinstance(self.config["enabled"], bool):
            report(f"{self.where}.enabled", "must be true or false")
            ok = False
        return ok

    @abstractmethod
    def check(self, job: Job, report: Report, warn: Report) -> None:
        """The SDK's rules and the platform's for this strategy (called only when its mapping is well-formed)."""

    @abstractmethod
    def hyperparameters(self, job: Job) -> dict[str, Any]:
        """This key's part of `Framework._distribution_configuration`, before JSON encoding."""
