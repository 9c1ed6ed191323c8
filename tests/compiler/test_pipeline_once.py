"""One pipeline run compiles each workload once per environment (issue 24): its request, image, definition,
deploy-time names and summary are computed in `compile_workload` and read from its result by everything after.

Calls are counted on the real functions wherever a module imported them, in one `compile_project` of the
repository's own project (what `trainctl validate` and synth run).
"""

from __future__ import annotations

import collections
import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from compiler import state_machine as sm
from compiler.compilation import images, request
from compiler.inputs.model import FrameworkImage
from compiler.pipeline import _Bundles, compile_project, compile_workload
from tests.project import PROJECT, loaded


@contextmanager
def counted(function: Callable[..., Any], key: Callable[..., Any]) -> Iterator[collections.Counter]:
    """Counts calls of `function` by key(*args, **kwargs), wherever a loaded module holds it by name."""
    calls: collections.Counter = collections.Counter()

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[key(*args, **kwargs)] += 1
        return function(*args, **kwargs)

    holders = [(module, name) for module in list(sys.modules.values()) if module is not None
               for name, value in list(vars(module).items()) if value is function]
    for module, name in holders:
        setattr(module, name, wrapper)
    try:
        yield calls
    finally:
        for module, name in holders:
            setattr(module, name, function)


def _by_workload(workload: Any, env: Any, **_: Any) -> tuple[str, str, str]:
    return workload.name, env.name, workload.instance_type


def test_each_request_is_compiled_once_per_environment_and_instance_type() -> None:
    with counted(request.compile_request, _by_workload) as calls:
        compiled = compile_project(PROJECT)
    # The primary request once, and once per fallback instance type (a relaunch's own request).
    expected = {(c.name, env, t): 1 for env, plan in compiled.plans.items() for c in plan.workloads
                for t in dict.fromkeys((c.workload.instance_type, *c.workload.capacity_retry.fallback_instance_types))}
    assert len(expected) > len(PROJECT.environments())  # the shipped workloads, in each environment
    assert dict(calls) == expected


def test_deploy_time_names_and_definitions_are_found_once_per_workload_and_environment() -> None:
    with counted(sm.deploy_time_names, lambda text: text) as names, \
            counted(sm.build_definition, lambda spec: (spec.workload, spec.environment)) as built:
        compiled = compile_project(PROJECT)
    every = [(c.name, env) for env, plan in compiled.plans.items() for c in plan.workloads]
    assert sorted(built.elements()) == sorted(every)
    assert sum(names.values()) == len(every)


def test_an_image_is_resolved_once_for_the_request_and_once_to_check_it_exists() -> None:
    """rules/environment.py checks at load that a framework image exists in the region; the compile resolves it for
    the request (and each fallback type's); the result's image, its summary and the CDK layer reuse that one."""
    envs = PROJECT.environments()
    assert len({e.region for e in envs.values()}) == len(envs)  # so a region stands for one environment here
    with counted(images.framework_image, lambda w, region: (w.name, region, w.instance_type)) as resolved:
        compiled = compile_project(PROJECT)
    expected = collections.Counter()
    for found in (plan.workloads for plan in compiled.plans.values()):
        for c in found:
            if isinstance(c.workload.image, FrameworkImage):
                w, region = c.workload, c.environment.region
                expected[(w.name, region, w.instance_type)] += 2
                expected.update((w.name, region, t) for t in w.capacity_retry.fallback_instance_types)
    assert expected and dict(resolved) == dict(expected)


def test_a_credential_in_the_compiled_request_stops_the_pipeline() -> None:
    """The credentials rule reads the request the pipeline compiled (no compile of its own at parse)."""
    workload = next(w for w in loaded().workloads("dev") if w.framework == "pytorch")
    leaky = dataclasses.replace(workload, hyperparameters={**workload.hyperparameters, "api_key": "abc123"})
    env = PROJECT.environments()["dev"]
    _, problems = compile_workload(leaky, env, set(), _Bundles(PROJECT.root))
    assert [p.field for p in problems if "looks like a secret" in p.message] == ["hyperparameters.api_key"]
    _, clean = compile_workload(workload, env, set(), _Bundles(PROJECT.root))
    assert not [p for p in clean if "looks like" in p.message]


def test_compiling_one_environment_compiles_only_its_workloads_and_checks_every_spec() -> None:
    with counted(request.compile_request, lambda workload, env, **_: env.name) as calls:
        compiled = compile_project(PROJECT, only=["dev"])
    assert set(compiled.plans) == {"dev"} and set(calls) == {"dev"}
    assert compiled.workloads("prod") == []
    # every spec is still loaded for every environment: its `environments` block and schedule may name any of them
    assert set(compiled.loaded.by_environment) == {"dev", "prod"}
    assert [c.name for c in compiled.workloads("dev")] == [w.name for w in loaded().workloads("dev")]


def test_the_plan_lays_out_its_shards_once_and_the_size_rule_reads_them() -> None:
    """Each workload is placed once per environment (`shard_of`) and sized once (`workload_template_bytes`); the plan
    rule judges the plan's own shards, so what `validate` checks is what the CDK layer builds."""
    from compiler.compilation import stack_layout
    from compiler.rules import layout

    judged: list[dict[int, tuple[int, ...]]] = []
    with counted(stack_layout.shard_of, lambda name, shards: name) as placed, \
            counted(stack_layout.workload_template_bytes, lambda definition, extra=0: definition) as sized, \
            counted(layout.layout_problems, lambda env, shards: judged.append(dict(shards))):
        compiled = compile_project(PROJECT)
    every = [c.name for plan in compiled.plans.values() for c in plan.workloads]
    assert sorted(placed.elements()) == sorted(every)
    assert sum(sized.values()) == len(every)
    assert judged == [{s.index: tuple(c.template_bytes for c in s.workloads) for s in plan.shards}
                      for plan in compiled.plans.values()]
