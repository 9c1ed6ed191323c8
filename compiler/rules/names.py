"""Names across specs: each workload's name and job-name prefix is its own, and every name an environment's
default_workloads lists is a spec's."""

from __future__ import annotations

from collections.abc import Iterable

from compiler.errors import Problem
from compiler.inputs.reader import Findings, suggest
from compiler.rules.registry import project_rule
from compiler.rules.views import ProjectView


@project_rule
def names_and_job_prefixes_are_unique(view: ProjectView, f: Findings) -> None:
    """Another workload's prefix would share its IAM job scope: each role may touch only jobs named after it."""
    seen: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for workload in sorted(view.base.values(), key=lambda w: w.source):
        if workload.name in seen:
            f.problems.append(Problem(workload.source, "name", f"'{workload.name}' is also used by "
                                      f"{seen[workload.name]}"))
        seen.setdefault(workload.name, workload.source)
        prefix = workload.base_job_name.lower()
        if prefix in prefixes:
            f.problems.append(Problem(workload.source, "base_job_name", f"'{workload.base_job_name}' is also the "
                                      f"job-name prefix of {prefixes[prefix]}: each workload's role may touch only jobs "
                                      "named after it, so prefixes must differ (ignoring case)"))
        prefixes.setdefault(prefix, workload.source)


@project_rule
def default_workloads_name_specs(view: ProjectView, f: Findings) -> None:
    """A name in an environment's default_workloads that no spec has is a typo that would deploy nothing."""
    names = view.spec_names
    for env in view.environments.values():
        for name in sorted((env.default_workloads or frozenset()) - names):
            f.problems.append(Problem("cdk.json", f"{env.name}.default_workloads", no_such_workload(name, names)))


def no_such_workload(name: str, names: Iterable[str], effect: str = "") -> str:
    """What cdk.json says of a workload name no spec has (a typo that deploys or grants nothing), with the closest."""
    close = suggest(name, names)
    hint = f"did you mean '{close}'? " if close else ""
    return f"names {name!r}, which no workload spec is{effect}; {hint}workloads: {', '.join(sorted(names)) or 'none'}"
