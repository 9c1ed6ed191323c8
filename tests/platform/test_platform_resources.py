"""Subnet sizing and the placeholder contract between the platform and the workload stacks."""

from __future__ import annotations

import pytest

from compiler.compilation import network
from compiler.facts import placeholders as ph
from compiler.facts.catalog import get
from platform_constructs.network import DEFAULT_INTERFACE_ENDPOINTS
from tests.platform.conftest import Synth
from tests.project import ENVIRONMENTS


def test_efa_instances_take_at_least_five_ips_and_p5_one_per_interface() -> None:
    assert get("ml.p4d.24xlarge").private_ips == 5
    assert get("ml.p5.48xlarge").private_ips == 33
    assert get("ml.m5.xlarge").private_ips == 1


def test_the_address_budget_counts_what_the_network_builds() -> None:
    assert len(DEFAULT_INTERFACE_ENDPOINTS) == len(network.INTERFACE_ENDPOINT_SERVICES)
    dev = ENVIRONMENTS["dev"]
    budget = network.budget(dev)
    assert budget.total == 256 and budget.reserved == 5 + len(DEFAULT_INTERFACE_ENDPOINTS) + 32


@pytest.mark.synth
@pytest.mark.parametrize("env", ["dev", "prod"])
def test_substitutions_fill_every_deploy_time_placeholder(synth: Synth, env: str) -> None:
    stage = synth.stages[env]
    values = stage.platform.substitutions()
    # TRAINING_SECURITY_GROUP_ID is each workload's own group (tests/platform/test_job_security_groups.py)
    deploy_time = {ph.TRAINING_SUBNET_ID, ph.DATA_BUCKET,
                   ph.OUTPUT_BUCKET, ph.CHECKPOINT_BUCKET, ph.KMS_KEY_ARN, ph.FILE_SYSTEM_ID, ph.FSX_MOUNT_NAME,
                   ph.repository_key("gpt-trainer"), ph.image_uri_key("gpt-trainer")}
    assert set(values) == deploy_time
    resolve = stage.storage_stack.resolve
    storage = synth.template(env, "Storage")["Resources"]
    for key in (ph.DATA_BUCKET, ph.OUTPUT_BUCKET, ph.CHECKPOINT_BUCKET):
        ref = resolve(values[key])  # bucket NAMES, not ARNs
        assert set(ref) == {"Ref"} and storage[ref["Ref"]]["Type"] == "AWS::S3::Bucket"
    assert storage[resolve(values[ph.FILE_SYSTEM_ID])["Ref"]]["Type"] == "AWS::FSx::FileSystem"
    key = resolve(values[ph.KMS_KEY_ARN])
    assert key["Fn::GetAtt"][1] == "Arn" and storage[key["Fn::GetAtt"][0]]["Type"] == "AWS::KMS::Key"
    network = synth.template(env, "Network")["Resources"]
    assert network[stage.network_stack.resolve(values[ph.TRAINING_SUBNET_ID])["Ref"]]["Type"] == "AWS::EC2::Subnet"
    image = stage.registry_stack.resolve(values[ph.image_uri_key("gpt-trainer")])
    assert stage.registry_stack.images["gpt-trainer"].asset.asset_hash in str(image)  # tag = build-context hash
