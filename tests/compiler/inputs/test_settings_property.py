"""Property: any cdk.json the project could hold either compiles or stops with a SpecError naming each problem, never
another exception (validate and synth print the problems; anything else is a traceback).

Hypothesis starts from the shipped settings (the environments, the DNS firewall, the project's images) and changes one
to three of their values: to anything JSON can say, to texts a file system refuses outright, to a neighbour of the value
(doubled, cut, up a folder), or removes them, or adds a key. A fuzzer of this shape found the tracebacks the path
rules now refuse (a build context of 300 bytes, one holding a NUL).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from compiler.errors import SpecError
from compiler.inputs.project import Project
from compiler.pipeline import compile_project
from tests.compiler.test_properties import JSON_VALUES
from tests.project import project_copy

# 40 examples keep the suite quick (~1 s); SETTINGS_PROPERTY_EXAMPLES=5000 runs a deeper hunt (~1.5 min).
EXAMPLES = int(os.environ.get("SETTINGS_PROPERTY_EXAMPLES", "40"))
KEYS = ("training-platform:environments", "training-platform:dns-firewall", "training-platform:images")
REFUSED_TEXTS = st.sampled_from(["x" * 300, "training/" + "y" * 256, "a\x00b", "\ud800", "é" * 130, "/" * 2000])

pytestmark = pytest.mark.filterwarnings("ignore:.*not read as a git work tree")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return project_copy(tmp_path_factory.mktemp("settings"))


def _places(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in the settings, as the keys and indexes that lead to it."""
    found = [at] if at else []
    if isinstance(value, dict):
        for key, child in value.items():
            found += _places(child, (*at, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _places(child, (*at, index))
    return found


def _neighbours(value: Any) -> st.SearchStrategy[Any]:
    if isinstance(value, str):
        return st.sampled_from([value * 2, value[: len(value) // 2], f"../{value}", f"{value}/..", value.upper(), ""])
    if isinstance(value, bool):
        return st.just(not value)
    if isinstance(value, int | float):
        return st.sampled_from([value - 1, value + 1, -value, value * 1000, 0, str(value)])
    return JSON_VALUES


@st.composite
def changed_settings(draw: st.DrawFn, shipped: dict[str, Any]) -> dict[str, Any]:
    context = json.loads(json.dumps({k: shipped[k] for k in KEYS if k in shipped}))
    for _ in range(draw(st.integers(1, 3))):
        if not context:  # every setting removed already
            break
        key = draw(st.sampled_from(sorted(context)))  # each setting alike, however many places it holds
        place = draw(st.sampled_from(_places(context[key], (key,))))
        parent = context
        for step in place[:-1]:
            parent = parent[step]
        texts = ["refused text", "neighbour"] if isinstance(parent[place[-1]], str) else []
        how = draw(st.sampled_from([*texts, "value", "neighbour", "remove", "add"]))
        if how == "remove":
            del parent[place[-1]]
        elif how == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "Region", "", "dev", "fsx", "x" * 300]))] = draw(JSON_VALUES)
        elif how == "neighbour":
            parent[place[-1]] = draw(_neighbours(parent[place[-1]]))
        else:
            parent[place[-1]] = draw(REFUSED_TEXTS if how == "refused text" else JSON_VALUES)
    return context


SHIPPED = json.loads((Path(__file__).resolve().parents[3] / "cdk.json").read_text())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(context=changed_settings(SHIPPED["context"]))
def test_any_settings_compile_or_stop_with_the_problems(root: Path, context: dict[str, Any]) -> None:
    note(f"context: {context!r}")
    others = {key: value for key, value in SHIPPED["context"].items() if key not in KEYS}  # a removed setting stays out
    (root / "cdk.json").write_text(json.dumps({**SHIPPED, "context": {**others, **context}}))
    try:
        compile_project(Project(root))
    except SpecError as error:
        event("stopped with a SpecError")
        assert error.problems and all(p.message.strip() for p in error.problems)
    else:
        event("compiled")
