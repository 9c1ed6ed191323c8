"""Subnet sizing and the placeholder contract between the platform and the workload stacks."""

from __future__ import annotations

import pytest

from platform_constructs.network import (
    AWS_RESERVED_IPS,
    DEFAULT_INTERFACE_ENDPOINTS,
    DEFAULT_TRAINING_IPS,
    FILE_SYSTEM_RESERVED_IPS,
    required_private_ips,
    training_subnet_mask,
)
from tests.platform.conftest import Synth
from compiler import placeholders as ph
from compiler.catalog import CATALOG


def test_efa_instances_need_at_least_five_ips_and_p5_one_per_interface() -> None:
    assert required_private_ips([(CATALOG["ml.p4d.24xlarge"], 4)], headroom=1) == 4 * 5
    assert required_private_ips([(CATALOG["ml.p5.48xlarge"], 2)], headroom=1) == 2 * 33
    assert required_private_ips([(CATALOG["ml.m5.xlarge"], 3)], headroom=1) == 3
    # the largest workload decides, times headroom
    jobs = [(CATALOG["ml.m5.xlarge"], 50), (CATALOG["ml.p5.48xlarge"], 16)]
    assert required_private_ips(jobs) == 2 * 16 * 33
    assert required_private_ips([]) == DEFAULT_TRAINING_IPS


@pytest.mark.parametrize("ips", [1, 100, 200, 528, 1000, 4000])
def test_subnet_mask_fits_jobs_endpoints_file_system_and_reserved(ips: int) -> None:
    mask = training_subnet_mask(ips, len(DEFAULT_INTERFACE_ENDPOINTS), file_system=True)
    usable = 2 ** (32 - mask) - AWS_RESERVED_IPS - len(DEFAULT_INTERFACE_ENDPOINTS) - FILE_SYSTEM_RESERVED_IPS
    assert usable >= ips
    assert mask <= 24
    if mask < 24:  # never more than twice what is needed
        assert usable < 2 * (ips + AWS_RESERVED_IPS + len(DEFAULT_INTERFACE_ENDPOINTS) + FILE_SYSTEM_RESERVED_IPS)


def test_subnet_mask_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="required_private_ips must be at least 1"):
        training_subnet_mask(0, 6, file_system=False)


@pytest.mark.synth
@pytest.mark.parametrize("env", ["dev", "prod"])
def test_substitutions_fill_every_deploy_time_placeholder(synth: Synth, env: str) -> None:
    stage = synth.stages[env]
    values = stage.platform.substitutions()
    deploy_time = {ph.EXECUTION_ROLE_ARN, ph.TRAINING_SUBNET_ID, ph.TRAINING_SECURITY_GROUP_ID, ph.DATA_BUCKET,
                   ph.OUTPUT_BUCKET, ph.CHECKPOINT_BUCKET, ph.KMS_KEY_ARN, ph.FILE_SYSTEM_ID, ph.FSX_MOUNT_NAME,
                   ph.repository_key("gpt-trainer"), ph.image_uri_key("gpt-trainer")}
    assert set(values) == deploy_time
    resolve = stage.storage_stack.resolve
    storage = synth.template(env, "Storage")["Resources"]
    for key in (ph.DATA_BUCKET, ph.OUTPUT_BUCKET, ph.CHECKPOINT_BUCKET):
        ref = resolve(values[key])  # bucket NAMES, not ARNs
        assert set(ref) == {"Ref"} and storage[ref["Ref"]]["Type"] == "AWS::S3::Bucket"
    assert storage[resolve(values[ph.FILE_SYSTEM_ID])["Ref"]]["Type"] == "AWS::FSx::FileSystem"
    assert resolve(values[ph.KMS_KEY_ARN])["Fn::GetAtt"][1] == "Arn"
    network = synth.template(env, "Network")["Resources"]
    assert network[stage.network_stack.resolve(values[ph.TRAINING_SUBNET_ID])["Ref"]]["Type"] == "AWS::EC2::Subnet"
    image = stage.registry_stack.resolve(values[ph.image_uri_key("gpt-trainer")])
    assert stage.registry_stack.images["gpt-trainer"].asset.asset_hash in str(image)  # tag = build-context hash
