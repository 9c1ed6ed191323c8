"""asl-validator (npm, the Step Functions team's schema and path checks) on every definition the compiler builds.

Without synthesizing: `build_definition` is what the CDK layer puts in the template, so every shipped workload in
every environment, plus the test specs (fallback types, mixed EFA variables, the generic Estimator, a heterogeneous
cluster, hostile hyperparameter names), is validated as written and with its substitutions filled in.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from compiler import state_machine as sm
from tests.compiler.state_machine.harness import deploy_values
from tests.project import ENVIRONMENTS, ROOT, loaded

VALIDATE_ASL = Path(__file__).with_name("validate_asl.js")
TOPIC = "arn:aws:sns:us-east-1:123456789012:training-notifications"

pytestmark = pytest.mark.skipif(shutil.which("node") is None or not (ROOT / "node_modules" / "asl-validator").is_dir(),
                                reason="needs node and npm's asl-validator (npm ci)")


def validate_asl(definitions: dict[str, Any]) -> dict[str, Any]:
    """asl-validator's verdict on each definition, from one Node process."""
    done = subprocess.run(["node", str(VALIDATE_ASL)], input=json.dumps(definitions), capture_output=True,
                          text=True, cwd=ROOT, check=True, timeout=300)
    return json.loads(done.stdout)


def machine_specs(test_specs: dict[str, sm.MachineSpec]) -> dict[str, sm.MachineSpec]:
    specs = {f"{env}/{w.name}": sm.spec_for(w, ENVIRONMENTS[env])
             for env in ENVIRONMENTS for w in loaded().workloads(env)}
    return specs | {f"test/{name}": spec for name, spec in test_specs.items()}


def test_asl_validator_accepts_every_definition(test_specs) -> None:
    specs = machine_specs(test_specs)
    definitions: dict[str, Any] = {}
    for label, spec in specs.items():
        definition = sm.build_definition(spec)
        definitions[label] = definition
        # What Step Functions receives: the substitutions filled with values of the real shape.
        text = sm.substitute_definition(sm.definition_string(definition), deploy_values(spec, TOPIC))
        assert sm.deploy_time_names(text) == set(), label
        definitions[label + " (substituted)"] = json.loads(text)
    # A control: the validator must reject a definition with a dangling transition.
    broken = json.loads(json.dumps(next(iter(definitions.values()))))
    broken["States"]["Read input"]["Next"] = "No such state"
    definitions["control"] = broken
    results = validate_asl(definitions)
    assert not results.pop("control")["isValid"]
    assert {k: v["errors"] for k, v in results.items() if not v["isValid"]} == {}
    assert len(results) == 2 * len(specs) >= 2 * (2 * len(loaded().workloads("dev")) + 5)
