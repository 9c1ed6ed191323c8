"""Every shipped workload's jobs run with network isolation, and its role may list exactly its code bundle's key (a
built-in algorithm ships no code: isolated too, without the code channel).

Under isolation SageMaker downloads the code as the `code` channel (an S3Prefix of the bundle's key), which it lists
first; the role's ListCode statement allows that listing for that key only. Read from the session's synthesized app.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.platform.test_job_security_groups import ENVS, WITH_CODE, WORKLOADS, of_type, workload_stacks

pytestmark = pytest.mark.synth


def _definitions(template: dict[str, Any]) -> list[str]:
    texts = []
    for machine in of_type(template, "AWS::StepFunctions::StateMachine").values():
        definition = machine["Properties"]["DefinitionString"]
        texts.append((definition if isinstance(definition, str) else json.dumps(definition)).replace(" ", ""))
    return texts


@pytest.mark.parametrize("env", ENVS)
def test_every_state_machine_starts_isolated_jobs_with_the_code_channel(synthesized_app, env: str) -> None:
    definitions = [d for t in workload_stacks(synthesized_app, env).values() for d in _definitions(t)]
    assert len(definitions) == len(WORKLOADS)
    for definition in definitions:
        assert '"EnableNetworkIsolation":true' in definition
    with_code = [d for d in definitions if '"ChannelName":"code"' in d]
    assert len(with_code) == len(WITH_CODE)
    for definition in with_code:
        assert "/opt/ml/input/data/code/" in definition  # sagemaker_submit_directory: the channel, not s3://


@pytest.mark.parametrize("env", ENVS)
def test_each_role_may_list_only_its_own_code_key(synthesized_app, env: str) -> None:
    checked = 0
    for template in workload_stacks(synthesized_app, env).values():
        for policy in of_type(template, "AWS::IAM::Policy").values():
            statements = {s.get("Sid"): s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
            if "ReadCode" not in statements:
                continue
            listing = statements["ListCode"]
            assert listing["Action"] == "s3:ListBucket" and "/" not in json.dumps(listing["Resource"])
            key = listing["Condition"]["StringEquals"]["s3:prefix"]
            assert isinstance(key, str) and "*" not in key and key in json.dumps(statements["ReadCode"]["Resource"])
            checked += 1
    assert checked == len(WITH_CODE)
