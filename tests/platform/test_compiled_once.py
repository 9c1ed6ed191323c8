"""The CDK layer builds from the pipeline's plan and computes none of it again (issues 24 and 33): no request compiled,
no image resolved, no definition built, no deploy-time names found, no summary or schedule facts written, no code
bundle scanned and no shard sized after `compile_project`."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import pytest

from compiler import state_machine as sm
from compiler.compilation import describe, images, request, schedules, stack_layout
from compiler.inputs import sourcedir
from compiler.pipeline import compile_project
from stacks import app as app_module
from tests.compiler.test_pipeline_once import counted
from tests.project import PROJECT


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    return [_without_none(v) for v in value] if isinstance(value, list) else value


def test_building_the_app_recomputes_nothing_the_pipeline_compiled(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path) -> None:
    compiled = compile_project(PROJECT)
    monkeypatch.setattr(app_module, "compile_project", lambda project, only=None: compiled)
    watched = [request.compile_request, images.image_uri, images.framework_image, sm.build_definition,
               sm.definition_string, sm.deploy_time_names, describe.workload_summary, sourcedir.scan,
               stack_layout.shard_template_bytes, stack_layout.shard_of, schedules.layout_bytes,
               schedules.describe_schedule, images.pulled_repositories]
    with ExitStack() as stack:
        calls = {f.__name__: stack.enter_context(counted(f, lambda *args, **kwargs: "call")) for f in watched}
        platform = app_module.build_app(PROJECT, outdir=str(tmp_path), builtin_validation=False)
    assert {name: sum(c.values()) for name, c in calls.items()} == {f.__name__: 0 for f in watched}
    # ... and what it built is the pipeline's: each state machine holds its compiled definition and summary.
    for env, plan in compiled.plans.items():
        for c in plan.workloads:
            construct = platform.workload_stacks[env].workload(c.name)
            assert construct.state_machine.definition_string == c.definition
            written = construct.state_machine.cfn_options.metadata[describe.METADATA_KEY]
            assert written == _without_none(c.summary)  # the CDK drops None values on the way to the template
