"""A workload's `secrets:` are readable by its own execution role only, exactly those ARNs, and never in the template.

Synthesizes a copy of the project with one more workload that names two secrets and their KMS key (dev only), which
the copy's cdk.json grants it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from compiler.inputs.project import Project
from stacks.app import build_app
from tests.project import ENVIRONMENTS, project_copy

DEV = ENVIRONMENTS["dev"]
SECRETS = {"HF_TOKEN": f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:hf-token-AbCdEf",
           "WANDB_API_KEY": f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:team/wandb-0a1B2c"}
# The copy is not a git work tree, so every file of training/ ships (NotInGitWarning says so): expected here.
pytestmark = pytest.mark.filterwarnings("ignore:.*not read as a git work tree")
KEY = f"arn:aws:kms:{DEV.region}:{DEV.account}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
SPEC = {
    "name": "gpt-with-secrets", "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311",
    "entry_point": "train.py", "source_dir": "../training", "instance_type": "ml.g5.2xlarge",
    "secrets": SECRETS, "secrets_kms_key": KEY,
    "enable_network_isolation": False, "network_isolation_off_reason": "reads HF_TOKEN from Secrets Manager at start",
    "environments": {"dev": {}},
}


def _policy_statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
            for s in r["Properties"]["PolicyDocument"]["Statement"]]


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("secrets")
    root = project_copy(tmp)
    (root / "workloads" / "gpt-with-secrets.yaml").write_text(yaml.safe_dump(SPEC))
    # dev grants the workload its secrets and their key (cdk.json, as compiler/rules/grants.py requires)
    config = json.loads((root / "cdk.json").read_text())
    dev = config["context"]["training-platform:environments"]["dev"]
    dev["secrets"] = {arn: {"readers": ["gpt-with-secrets"]} for arn in SECRETS.values()}
    dev["kms_keys"] = {KEY: {"users": ["gpt-with-secrets"]}}
    (root / "cdk.json").write_text(json.dumps(config))
    app = build_app(Project(root), outdir=str(tmp / "out"), only=["dev"], builtin_validation=False)
    app.synth()
    stage = app.stages["dev"]
    return {stack.node.id: json.loads((tmp / "out" / "assembly-dev" / stack.template_file).read_text())
            for stack in stage.node.children if hasattr(stack, "template_file")}


@pytest.mark.synth
def test_only_the_workloads_role_reads_exactly_its_secrets(templates: dict[str, dict[str, Any]]) -> None:
    readers = {stack: [s for s in _policy_statements(t) if "secretsmanager" in json.dumps(s["Action"])]
               for stack, t in templates.items()}
    granted = [(stack, s) for stack, found in readers.items() for s in found]
    assert len(granted) == 1, granted  # one statement in the whole environment
    _, statement = granted[0]
    assert statement["Sid"] == "ReadOwnSecrets" and statement["Action"] == "secretsmanager:GetSecretValue"
    assert statement["Resource"] == sorted(SECRETS.values())  # exact ARNs: no wildcard, no partial ARN


@pytest.mark.synth
def test_the_key_decrypts_only_through_secrets_manager_for_those_secrets(templates: dict[str, dict[str, Any]]) -> None:
    decrypts = [s for t in templates.values() for s in _policy_statements(t) if s.get("Sid") == "DecryptOwnSecrets"]
    assert decrypts == [{"Sid": "DecryptOwnSecrets", "Effect": "Allow", "Action": "kms:Decrypt", "Resource": KEY,
                         "Condition": {"StringEquals": {
                             "kms:ViaService": f"secretsmanager.{DEV.region}.amazonaws.com",
                             "kms:EncryptionContext:SecretARN": sorted(SECRETS.values())}}}]


@pytest.mark.synth
def test_the_state_machine_carries_the_arns_and_no_isolation(templates: dict[str, dict[str, Any]]) -> None:
    machines = [r["Properties"] for t in templates.values() for r in t["Resources"].values()
                if r["Type"] == "AWS::StepFunctions::StateMachine"
                and "gpt-with-secrets" in json.dumps(r["Properties"].get("StateMachineName", ""))]
    assert len(machines) == 1
    definition = machines[0]["DefinitionString"]
    text = definition if isinstance(definition, str) else json.dumps(definition)
    for name, arn in SECRETS.items():
        assert f'"TRAINING_PLATFORM_SECRET_ARN_{name}":"{arn}"' in text.replace(" ", "")
    assert '"EnableNetworkIsolation"' not in text


@pytest.mark.synth
def test_no_other_workload_may_read_secrets(templates: dict[str, dict[str, Any]]) -> None:
    """The shipped workloads name no secrets: their roles have no Secrets Manager statement."""
    for stack, template in templates.items():
        if "gpt-with-secrets" in json.dumps(template):
            continue
        assert not [s for s in _policy_statements(template) if "secretsmanager" in json.dumps(s)], stack
