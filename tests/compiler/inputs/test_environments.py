"""cdk.json environments are checked before anything is synthesized."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.compilation.request import compile_request
from compiler.errors import SpecError
from compiler.inputs.environments import CONTEXT_KEY, parse_environments, zone_problems
from compiler.inputs.project import Project
from compiler.spec import load_workloads
from tests.compiler.conftest import BASE
from tests.project import ENVIRONMENTS, PROJECT, ROOT

SHIPPED = json.loads(PROJECT.cdk_json.read_text())["context"][CONTEXT_KEY]


def _broken(env: str, **changes):
    raw = copy.deepcopy(SHIPPED)
    raw[env].update(changes)
    for key, value in list(raw[env].items()):
        if value is ...:
            del raw[env][key]
    with pytest.raises(SpecError) as info:
        parse_environments(raw)
    return str(info.value)


def test_shipped_environments_pin_one_az_each():
    envs = ENVIRONMENTS
    assert {"dev", "prod"} <= set(envs)
    for env in envs.values():
        assert env.availability_zone.startswith(env.region)


def test_az_must_belong_to_the_region():
    assert "is not one Availability Zone of us-east-1" in _broken("dev", availability_zone="us-west-2a")


def test_az_must_be_one_zone_not_a_region():
    assert "dev.availability_zone" in _broken("dev", availability_zone="us-east-1")


def test_an_az_must_be_pinned():
    assert "pin exactly one Availability Zone" in _broken("dev", availability_zone=...)


def test_az_id_pattern():
    assert "not an AZ ID like use1-az4" in _broken("dev", availability_zone_id="us-east-1a")


def test_account_is_twelve_digits():
    assert "12-digit" in _broken("dev", account="1234")


def test_production_must_retain():
    assert "must retain its data" in _broken("prod", removal_policy="destroy")


@pytest.mark.parametrize(("account", "region", "refused"), [
    ("111111111111", "us-east-1", True),  # dev's account and region
    ("111111111111", "us-west-2", False),  # dev's account, another region
    ("333333333333", "us-east-1", False),  # dev's region, another account
])
def test_a_second_environment_in_one_account_and_region_is_refused_naming_why(account, region, refused):
    """Training job names (and their log streams in /aws/sagemaker/TrainingJobs) carry no environment, and each
    environment's roles are held to their jobs by those names (platform_constructs/workload.py)."""
    raw = copy.deepcopy(SHIPPED)
    raw["staging"] = copy.deepcopy(raw["dev"]) | {"account": account, "region": region,
                                                 "availability_zone": f"{region}a", "vpc_cidr": "10.40.0.0/16"}
    if not refused:
        assert set(parse_environments(raw)) == {"dev", "prod", "staging"}
        return
    with pytest.raises(SpecError) as info:
        parse_environments(raw)
    (problem,) = info.value.problems
    assert problem.field == "staging.region"
    assert problem.message == (
        "environments dev and staging both deploy to account 111111111111 in us-east-1: training job names (and their "
        "log streams in /aws/sagemaker/TrainingJobs) carry the workload's base_job_name but not the environment, so the "
        "roles of each, scoped by those names, would reach the other's jobs; give staging its own account or region")


def test_fsx_capacity_steps():
    assert "multiple of 2400" in _broken("prod", fsx={"deployment_type": "PERSISTENT_2", "storage_capacity_gib": 3000,
                                                      "per_unit_storage_throughput": 250})


def test_persistent_2_throughput_values():
    assert "125, 250, 500, 1000" in _broken("prod", fsx={"deployment_type": "PERSISTENT_2",
                                                         "storage_capacity_gib": 2400, "per_unit_storage_throughput": 200})


def test_scratch_cannot_be_backed_up():
    assert "cannot be backed up" in _broken("dev", fsx={"deployment_type": "SCRATCH_2", "storage_capacity_gib": 1200,
                                                        "automatic_backup_retention_days": 7})



PERSISTENT_2 = {"deployment_type": "PERSISTENT_2", "storage_capacity_gib": 2400, "per_unit_storage_throughput": 250}
DATASETS = {"gpt-tokens": {"readers": ["gpt-torchrun-fsx"]}}
NOT_BACKED_UP = "FSx takes no backups of a file system linked to S3"


@pytest.mark.parametrize(("fsx", "datasets", "refused"), [
    ({**PERSISTENT_2, "automatic_backup_retention_days": 1}, DATASETS, True),   # linked per dataset
    ({**PERSISTENT_2, "automatic_backup_retention_days": 0}, DATASETS, False),  # backups off
    (PERSISTENT_2, DATASETS, False),                                            # not said
    ({**PERSISTENT_2, "automatic_backup_retention_days": 7}, ..., False),       # linked to nothing
    ({"deployment_type": "PERSISTENT_1", "storage_capacity_gib": 2400, "per_unit_storage_throughput": 200,
      "automatic_backup_retention_days": 1}, ..., True),                         # whole-bucket ImportPath
    ({"deployment_type": "PERSISTENT_1", "storage_capacity_gib": 2400, "per_unit_storage_throughput": 200,
      "automatic_backup_retention_days": 0}, DATASETS, False),                   # its backups off
])
def test_a_file_system_linked_to_s3_takes_no_backups(fsx: dict, datasets: Any, refused: bool) -> None:
    """FSx for Lustre user guide, "Using data repositories": "File system backups aren't supported on file systems
    that are linked to an Amazon S3 data repository"."""
    raw = copy.deepcopy(SHIPPED)
    raw["prod"]["fsx"] = fsx
    raw["prod"].pop("datasets")
    if datasets is not ...:
        raw["prod"]["datasets"] = datasets
    try:
        parse_environments(raw)
        message = ""
    except SpecError as error:
        message = str(error)
    assert (NOT_BACKED_UP in message) is refused, message
    if refused:
        assert "prod.fsx.automatic_backup_retention_days" in message and "set 0 (or remove it)" in message


def test_unknown_environment_key():
    assert "dev.regoin: unknown key" in _broken("dev", regoin="x")


def test_the_training_subnet_is_sized_by_the_environment():
    assert "training_subnet_mask" in _broken("dev", training_subnet_mask=12)
    assert "does not fit" in _broken("dev", vpc_cidr="10.20.0.0/24", training_subnet_mask=24)
    assert all(env.training_subnet_mask == 24 for env in ENVIRONMENTS.values())


def test_vpc_cidr_must_be_a_private_block():
    assert "private IPv4 block" in _broken("dev", vpc_cidr="8.8.0.0/16")
    assert "is not an IPv4 network" in _broken("dev", vpc_cidr="10.20.0.0/33")


def test_log_retention_is_one_cloudwatch_allows():
    assert "one of 1, 3, 5" in _broken("dev", log_retention_days=42)


def test_external_buckets_are_names_not_uris():
    assert "not an S3 bucket name" in _broken("dev", external_data_buckets=["s3://datasets"])


def test_training_plans_name_what_they_reserve():
    text = _broken("prod", training_plans={"h100": {"arn": "not-an-arn", "instance_type": "ml.p5.48xlarge"}})
    assert "training plan ARN" in text and "instance_count: is required" in text


def test_inter_container_encryption_is_on_by_default_in_production():
    assert ENVIRONMENTS["prod"].encrypt_inter_container_traffic
    assert not ENVIRONMENTS["dev"].encrypt_inter_container_traffic


# --- what the request carries (issue 33) ------------------------------------------------------------------------
# cdk.json: prod is `production: true` without `encrypt_inter_container_traffic`, dev `production: false`; README,
# Environments: `encrypt_inter_container_traffic` is "the default for multi-node jobs (on in production)"; a spec's
# own `encrypt_inter_container_traffic` is the SDK's estimator argument. The SDK sends the field only when it is
# true: sagemaker 2.257.7 `estimator.py` `_TrainingJob._get_train_args` (`if estimator.encrypt_inter_container_traffic:`)
# and `session.py` `_get_train_request` (`if encrypt_inter_container_traffic: train_request[
# "EnableInterContainerTrafficEncryption"] = ...`). botocore 1.44.8 sagemaker model: "To encrypt all communications
# between ML compute instances in distributed training, choose True."

ENCRYPTION = "EnableInterContainerTrafficEncryption"
REASON = "measured 20% lower throughput"


@pytest.mark.parametrize(("env", "instance_count", "spec", "sent"), [
    ("prod", 2, {}, True),  # multi-node in an environment that encrypts
    ("prod", 1, {}, None),  # one node has no traffic between nodes: the policy does not apply
    ("dev", 2, {}, None),  # dev does not encrypt by default
    ("dev", 1, {}, None),
    ("dev", 1, {"encrypt_inter_container_traffic": True}, True),  # the spec's own choice is sent, as the SDK does
    ("dev", 2, {"encrypt_inter_container_traffic": True}, True),
    ("prod", 2, {"encrypt_inter_container_traffic": False, "unencrypted_traffic_reason": REASON}, None),
    ("prod", 1, {"encrypt_inter_container_traffic": False}, None),  # false is never sent: the SDK leaves it out
])
def test_inter_container_encryption_in_the_request(make, env: str, instance_count: int, spec: dict[str, Any],
                                                   sent: bool | None) -> None:
    request = compile_request(make(instance_count=instance_count, **spec), ENVIRONMENTS[env])
    assert request.get(ENCRYPTION) is sent


def _problems(tmp_path: Path, **changes: Any) -> list[str]:
    """Load one spec (BASE with changes) with the repository's cdk.json, as synth does; its problems."""
    root = tmp_path / "project"
    (root / "workloads").mkdir(parents=True)
    for name in ("cdk.json", "cdk.context.json"):
        shutil.copy(ROOT / name, root / name)
    (root / "code").mkdir()
    (root / "code" / "train.py").write_text("print('hi')\n")
    spec = {**BASE, "source_dir": "../code", **changes}
    (root / "workloads" / "demo.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    project = Project(root)
    try:
        load_workloads(project, project.environments())
    except SpecError as error:
        return [str(p) for p in error.problems]
    return []


def test_turning_encryption_off_on_a_multi_node_job_in_production_needs_a_reason(tmp_path: Path) -> None:
    assert _problems(tmp_path / "a", instance_count=2, encrypt_inter_container_traffic=False) == [
        "workloads/demo.yaml: encrypt_inter_container_traffic: environment 'prod' encrypts traffic between training "
        "nodes; to relax that for this workload, say why in unencrypted_traffic_reason (e.g. measured throughput "
        "loss), or remove encrypt_inter_container_traffic: false [environment prod]"]
    assert _problems(tmp_path / "b", instance_count=2, encrypt_inter_container_traffic=False,
                     unencrypted_traffic_reason=REASON) == []
    # the boundary: one node has nothing to encrypt between nodes
    assert _problems(tmp_path / "c", instance_count=1, encrypt_inter_container_traffic=False) == []


def test_a_job_that_a_run_may_grow_to_two_nodes_is_held_to_the_policy(tmp_path: Path) -> None:
    problems = _problems(tmp_path, instance_count=1, max_instance_count=2, encrypt_inter_container_traffic=False)
    assert any("encrypt_inter_container_traffic" in p and "[environment prod]" in p for p in problems), problems


def test_a_missing_zone_lookup_names_the_command_to_run():
    [problem] = zone_problems({}, {"dev": ENVIRONMENTS["dev"]})
    assert "trainctl lookup-zones --env dev" in str(problem)
    assert problem.field == "availability-zones:account=111111111111:region=us-east-1"


def test_a_zone_the_account_does_not_have_is_refused():
    context = {ENVIRONMENTS["dev"].context_lookup_key(): ["us-east-1b", "us-east-1c"]}
    [problem] = zone_problems(context, {"dev": ENVIRONMENTS["dev"]})
    assert problem.field == "dev.availability_zone" and "us-east-1b, us-east-1c" in str(problem)


@pytest.mark.parametrize("cached", [5, "us-east-1a", [], ["us-east-1a", 7], ["us-east-1a\x00"], ["US-EAST-1A"],
                                    ["us-east-1a", "z" * 65]])
def test_a_cached_lookup_not_as_the_lookup_writes_it_names_the_command_to_run(cached: object) -> None:
    """Never read a zone list from a hand-edited cache: the messages would quote what it holds, control characters too."""
    [problem] = zone_problems({ENVIRONMENTS["dev"].context_lookup_key(): cached}, {"dev": ENVIRONMENTS["dev"]})
    assert str(problem) == ("cdk.context.json: availability-zones:account=111111111111:region=us-east-1: environment "
                            "dev: is not a list of Availability Zone names, as the lookup writes it; run `trainctl "
                            "lookup-zones --env dev` again with credentials for account 111111111111, then commit "
                            "cdk.context.json")


@pytest.mark.parametrize("zone", ["us-east-1a", "us-east-1-bos-1a", "z" * 64])
def test_zone_names_as_aws_writes_them_are_read(zone: str) -> None:
    context = {ENVIRONMENTS["dev"].context_lookup_key(): [zone]}
    [problem] = zone_problems(context, {"dev": replace(ENVIRONMENTS["dev"], availability_zone="us-east-1f")})
    assert problem.field == "dev.availability_zone" and f"({zone})" in str(problem)


def test_the_shipped_zones_are_cached():
    assert zone_problems(PROJECT.context(), ENVIRONMENTS) == []
