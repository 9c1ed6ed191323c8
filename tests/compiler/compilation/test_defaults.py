"""What a spec or an environment leaves out gets one default, stated in its source: each literal here is copied from
the pinned SDK (sagemaker==2.257.7, EstimatorBase.__init__) or from the project's docs, never from the code.

Each default is checked on every path that could restate it: the spec/cdk.json reader (a key left out), the
model's dataclass field (an object built without it), and for the SDK's the real SDK's signature.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
from typing import Any

import pytest

from compiler.compilation.request import compile_request
from compiler.inputs.environments import CONTEXT_KEY, Environment, parse_environments
from compiler.inputs.model import Code, Compute, RunOptions
from tests.project import ENVIRONMENTS, PROJECT

# sagemaker/estimator.py (2.257.7), EstimatorBase.__init__: volume_size=30, max_run=24 * 60 * 60,
# input_mode="File", container_log_level=logging.INFO.
SDK_DEFAULTS: dict[str, Any] = {"max_run": 86400, "volume_size": 30, "input_mode": "File", "container_log_level": 20}
# Which model dataclass holds each.
_HOLDERS = {"max_run": RunOptions, "volume_size": Compute, "input_mode": RunOptions, "container_log_level": Code}


def _field_default(cls: type, name: str) -> Any:
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


@pytest.mark.parametrize("name", sorted(SDK_DEFAULTS))
def test_the_pinned_sdk_has_the_stated_default(name):
    from sagemaker.estimator import EstimatorBase

    assert inspect.signature(EstimatorBase.__init__).parameters[name].default == SDK_DEFAULTS[name]


@pytest.mark.parametrize("name", sorted(SDK_DEFAULTS))
def test_the_model_field_defaults_to_the_sdk_value(name):
    assert _field_default(_HOLDERS[name], name) == SDK_DEFAULTS[name]


def test_a_spec_without_them_gets_the_sdk_values_in_its_request(make):
    workload = make()
    assert (workload.max_run, workload.compute.volume_size, workload.input_mode) == (86400, 30, "File")
    assert workload.code is not None and workload.code.container_log_level == 20
    request = compile_request(workload, ENVIRONMENTS["dev"], training_image="img")
    assert request["StoppingCondition"]["MaxRuntimeInSeconds"] == 86400
    assert request["ResourceConfig"]["VolumeSizeInGB"] == 30
    assert request["AlgorithmSpecification"]["TrainingInputMode"] == "File"
    assert request["HyperParameters"]["sagemaker_container_log_level"] == "20"


@pytest.mark.parametrize(("key", "bad"), [("max_run", 0), ("volume_size", 0), ("input_mode", "Stream"),
                                          ("container_log_level", 51)])
def test_a_refused_value_is_named(make, key, bad):
    from compiler.errors import SpecError

    with pytest.raises(SpecError, match=key):
        make(**{key: bad})


# The project's own: README.md's environments table (vpc_cidr 10.0.0.0/16, checkpoint_expiration_days 30,
# training_subnet_mask 24) and docs/platform.md's "Logs | 30 days | 365 days" (dev, prod).
ENV_DEFAULTS: dict[str, Any] = {"vpc_cidr": "10.0.0.0/16", "training_subnet_mask": 24,
                                "checkpoint_expiration_days": 30, "log_retention_days": 30}
PRODUCTION_LOG_RETENTION_DAYS = 365


def _parsed(production: bool) -> Environment:
    raw = copy.deepcopy(json.loads(PROJECT.cdk_json.read_text())["context"][CONTEXT_KEY]["dev"])
    for key in ENV_DEFAULTS:
        raw.pop(key, None)
    raw.pop("removal_policy", None)
    raw["production"] = production
    return parse_environments({"x": raw})["x"]


@pytest.mark.parametrize("name", sorted(ENV_DEFAULTS))
def test_an_environment_without_a_setting_gets_the_documented_default(name):
    assert getattr(_parsed(production=False), name) == ENV_DEFAULTS[name]
    assert _field_default(Environment, name) == ENV_DEFAULTS[name]


def test_a_production_environment_keeps_logs_a_year_by_default():
    assert _parsed(production=True).log_retention_days == PRODUCTION_LOG_RETENTION_DAYS


def test_the_readme_states_the_environment_defaults():
    readme = (PROJECT.root / "README.md").read_text()
    assert "`vpc_cidr` (default 10.0.0.0/16)" in readme
    assert "`checkpoint_expiration_days` (default 30), `log_retention_days` (default 30, 365 in production)" in readme
    assert "| Logs | 30 days | 365 days |" in (PROJECT.root / "docs" / "platform.md").read_text()
