"""An environment's `default_workloads` (issue 25): which workloads that name no environments deploy there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.errors import SpecError
from compiler.inputs.environments import parse_environments
from compiler.spec import load_workload, load_workloads
from tests.compiler.spec.test_environment_overrides import BASE, project

STAGING = {"account": "333333333333", "region": "us-east-2", "availability_zone": "us-east-2a"}
EVERYWHERE = {**BASE, "name": "everywhere"}  # no environments: block
NAMED = {**BASE, "name": "named", "environments": {"staging": {"instance_count": 1}, "dev": {}}}


def deployed(root: Path, default_workloads: Any) -> dict[str, list[str]]:
    def add_staging(envs: dict[str, Any]) -> None:
        envs["staging"] = {**STAGING, "default_workloads": default_workloads}

    proj = project(root, [EVERYWHERE, NAMED], add_staging)
    loaded = load_workloads(proj, proj.environments())
    return {env: sorted(loaded.by_environment[env]) for env in ("dev", "prod", "staging")}


def test_a_new_environment_with_none_gets_only_the_workloads_that_name_it(tmp_path: Path) -> None:
    assert deployed(tmp_path, "none") == {"dev": ["everywhere", "named"], "prod": ["everywhere"],
                                          "staging": ["named"]}


def test_all_is_the_default_behaviour(tmp_path: Path) -> None:
    assert deployed(tmp_path, "all")["staging"] == ["everywhere", "named"]


def test_a_list_takes_the_workloads_it_names(tmp_path: Path) -> None:
    assert deployed(tmp_path, ["everywhere"])["staging"] == ["everywhere", "named"]
    assert deployed(tmp_path / "2", [])["staging"] == ["named"]


def test_a_name_no_spec_has_is_refused_with_the_close_one(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        deployed(tmp_path, ["everywher"])
    [problem] = [str(p) for p in info.value.problems]
    assert problem.startswith("cdk.json: staging.default_workloads: names 'everywher'")
    assert "did you mean 'everywhere'?" in problem


@pytest.mark.parametrize("value", ["some", 3, ["ok", 4], [""]])
def test_other_values_are_refused(value: Any) -> None:
    with pytest.raises(SpecError, match=r"staging\.default_workloads: must be all .*, none .* or a list of workload "
                                        "names"):
        parse_environments({"staging": {**STAGING, "default_workloads": value}})


def test_rendering_a_workload_the_environment_does_not_take_says_how(tmp_path: Path) -> None:
    proj = project(tmp_path, [EVERYWHERE], lambda envs: envs["prod"].update(default_workloads="none"))
    with pytest.raises(SpecError) as info:
        load_workload(proj, "everywhere", proj.environments()["prod"])
    assert ("names no environments, and cdk.json's default_workloads of 'prod' does not take it; add prod to its "
            "environments:") in str(info.value)


def test_a_workload_whose_block_does_not_name_the_environment_is_refused_naming_the_line(tmp_path: Path) -> None:
    proj = project(tmp_path, [NAMED], lambda envs: envs.update(staging=STAGING))
    with pytest.raises(SpecError) as info:
        load_workload(proj, "named", proj.environments()["prod"])
    assert ("does not deploy to environment 'prod' (its environments: staging, dev); to deploy it there, add the "
            "line `  prod: {}` under environments:") in str(info.value)
