"""One spec mapping (without its `environments` block) read into a `Workload`, every problem recorded with its field.

First every key is accounted for (accepted, refused with its reason, renamed, or a typo with the close name);
then each topic's reader builds its part of the model. Problems are collected throughout, so one run reports them
all; how the parts go together is the rules' to check (`compiler.rules`, run by `compiler.spec.parse`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from compiler.facts.placeholders import RESERVED_SEQUENCE
from compiler.inputs.model import DISTRIBUTED_FRAMEWORKS, Workload
from compiler.inputs.reader import Findings, Reader, describe, suggest
from compiler.inputs.schedule import read_schedule
from compiler.inputs.spec.code import read_code
from compiler.inputs.spec.compute import read_compute
from compiler.inputs.spec.data import read_inputs, read_model_uri
from compiler.inputs.spec.image import read_estimator
from compiler.inputs.spec.keys import LOOKALIKES, PLATFORM_KEYS, REFUSED, RENAMED, known_keys
from compiler.inputs.spec.options import read_capacity, read_debugging, read_run
from compiler.inputs.spec.secrets import read_secrets, read_secrets_kms_key
from compiler.inputs.spec.values import read_choices, read_environment, read_hyperparameters, read_metrics, read_tags
from compiler.inputs.spec.watchdog import read_stall_watchdog


def audit_keys(raw: Mapping[str, Any], findings: Findings) -> None:
    """Every top-level key: accepted, or a problem that says why not and what to write."""
    known = known_keys()
    for key in raw:
        if key in known:
            continue
        if key in REFUSED:
            findings.problem(key, REFUSED[key])
        elif key in RENAMED:
            findings.problem(key, f"is the SDK v1 name; write {RENAMED[key]} (the v2 estimator's argument)")
        elif key in LOOKALIKES:
            right, why = LOOKALIKES[key]
            findings.problem(key, f"did you mean '{right}'? {why}" if right else why)
        else:
            close = suggest(str(key), known | set(REFUSED))
            hint = f"did you mean '{close}'?" if close else (
                "workload specs take the SageMaker SDK estimator's arguments and the platform keys "
                f"({', '.join(sorted(PLATFORM_KEYS))}); see docs/workload-spec.md")
            findings.problem(str(key), f"unknown key; {hint}")


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every text in a value, keys included, with its field path."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            yield path, str(key)
            yield from _strings(item, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def no_placeholders(raw: Mapping[str, Any], findings: Findings) -> None:
    """`${` is how Step Functions substitutions are written: user text holding it would be rewritten at deploy."""
    for where, text in _strings(raw, ""):
        if RESERVED_SEQUENCE in text:
            findings.problem(where, "holds '${', which the platform reserves for deploy-time values (Step Functions "
                             "would substitute it); write the text without it")


def _distribution(r: Reader, framework: str) -> dict[str, Any]:
    value = r.raw.get("distribution")
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        r.problem("distribution", f"must be a mapping in the SDK's shape, e.g. {{torch_distributed: {{enabled: true}}}}, "
                  f"not {describe(value)}")
        return {}
    if not value and r.has("instance_groups") and framework in DISTRIBUTED_FRAMEWORKS:
        # validate_distribution runs on any distribution that is not None: it names the training group, which
        # then needs a strategy (or, with several groups, refuses to pick one)
        r.problem("distribution", "is empty, but with instance_groups the SDK names a training group that no strategy "
                  "uses and refuses the job; remove distribution, or enable mpi or smdistributed dataparallel and name "
                  "the group in distribution.instance_groups")
    return dict(value)


def read_workload(raw: Mapping[str, Any], findings: Findings, *, source: str, spec_dir: Path,
                  project_root: Path) -> Workload | None:
    """The spec's Workload, or None when its name or compute cannot be read (the problems are in `findings`)."""
    audit_keys(raw, findings)
    no_placeholders(raw, findings)
    r = Reader(raw, findings)
    name = r.string("name", required=True, max_length=64, explain="the workload's name, e.g. gpt-pretrain")
    estimator, image = read_estimator(r)
    code = read_code(r, spec_dir, project_root, required=estimator.framework != "generic")
    compute = read_compute(r)
    model_uri, model_channel = read_model_uri(r)
    hyperparameters = read_hyperparameters(r, estimator.framework)
    parts: dict[str, Any] = dict(  # every field is read before anything stops, so one run reports every problem
        distribution=_distribution(r, estimator.framework), hyperparameters=hyperparameters,
        choices=read_choices(r, hyperparameters),
        environment=read_environment(r), secrets=read_secrets(r), secrets_kms_key=read_secrets_kms_key(r),
        inputs=read_inputs(r), model_uri=model_uri, model_channel_name=model_channel,
        metric_definitions=read_metrics(r), tags=read_tags(r), debugging=read_debugging(r),
        base_job_name=r.string("base_job_name", max_length=63, default=name) or name or "",
        description=r.string("description", max_length=1000, default="") or "", capacity_retry=read_capacity(r),
        schedule=read_schedule(r), stall_watchdog=read_stall_watchdog(r),
        run=read_run(r),
    )
    if name is None or compute is None:
        return None
    return Workload(name=name, source=source, estimator=estimator, image=image, code=code, compute=compute, **parts)
