"""Assertions on the synthesized platform templates of every environment in cdk.json."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.platform.conftest import Synth

pytestmark = pytest.mark.synth
ENVS = ("dev", "prod")
ACCOUNTS = {"dev": ("111111111111", "us-east-1"), "prod": ("222222222222", "us-west-2")}  # cdk.json
LUSTRE_PORTS = [988, *range(1018, 1024)]


def only(resources: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    assert len(resources) == 1, list(resources)
    return next(iter(resources.items()))


def export_value(synth: Synth, env: str, import_name: Any) -> Any:
    """What a cross-stack Fn::ImportValue reads: the exporting output's Value."""
    name = import_name["Fn::ImportValue"]
    for template in synth.templates[env].values():
        for output in template.get("Outputs", {}).values():
            if output.get("Export", {}).get("Name") == name:
                return output["Value"]
    raise AssertionError(f"no export named {name}")


def file_system_sg(synth: Synth, env: str) -> str:
    groups = synth.resources(env, "Network", "AWS::EC2::SecurityGroup")
    return next(k for k, v in groups.items() if "FSx" in v["Properties"]["GroupDescription"])


def gid(logical_id: str) -> dict[str, Any]:
    return {"Fn::GetAtt": [logical_id, "GroupId"]}


def rules(synth: Synth, env: str, kind: str) -> list[dict[str, Any]]:
    return [r["Properties"] for r in synth.resources(env, "Network", f"AWS::EC2::SecurityGroup{kind}").values()]


def allows(rule: dict[str, Any], port: int | None) -> bool:
    if rule["IpProtocol"] == "-1":
        return True
    return port is not None and rule["IpProtocol"] == "tcp" and rule["FromPort"] <= port <= rule["ToPort"]


# ------------------------------------------------------------------------------------------ one zone


@pytest.mark.parametrize("env", ENVS)
def test_training_subnets_and_file_system_share_one_zone(synth: Synth, env: str) -> None:
    settings = synth.stages[env].settings
    subnets = synth.resources(env, "Network", "AWS::EC2::Subnet")
    zones = {(s["Properties"].get("AvailabilityZone"), s["Properties"].get("AvailabilityZoneId")) for s in subnets.values()}
    if settings.availability_zone_id:  # the ID wins: capacity is per AZ ID
        assert zones == {(None, settings.availability_zone_id)}
    else:
        assert zones == {(settings.availability_zone, None)}
    _, fs = only(synth.resources(env, "Storage", "AWS::FSx::FileSystem"))
    (subnet_ref,) = fs["Properties"]["SubnetIds"]
    assert export_value(synth, env, subnet_ref)["Ref"] in subnets


def test_prod_pins_the_zone_by_id_and_dev_by_name(synth: Synth) -> None:
    assert synth.stages["prod"].settings.availability_zone_id == "usw2-az1"
    prod = synth.resources("prod", "Network", "AWS::EC2::Subnet")
    assert all(s["Properties"]["AvailabilityZoneId"] == "usw2-az1" for s in prod.values())
    dev = synth.resources("dev", "Network", "AWS::EC2::Subnet")
    assert all(s["Properties"]["AvailabilityZone"] == "us-east-1a" for s in dev.values())


@pytest.mark.parametrize("env", ENVS)
def test_training_subnet_is_sized_by_the_environment(synth: Synth, env: str) -> None:
    (_, subnet), = synth.resources(env, "Network", "AWS::EC2::Subnet").items()
    assert subnet["Properties"]["CidrBlock"].endswith(f"/{synth.stages[env].settings.training_subnet_mask}")


# ------------------------------------------------------------------------------------------ security groups


@pytest.mark.parametrize("env", ENVS)
def test_the_network_holds_no_job_group_and_the_file_servers_reach_each_other(synth: Synth, env: str) -> None:
    """Job groups are per workload, in the workload stacks (tests/platform/test_job_security_groups.py)."""
    groups = synth.resources(env, "Network", "AWS::EC2::SecurityGroup")
    assert not [k for k, v in groups.items() if "EFA" in v["Properties"]["GroupDescription"]]
    fs = gid(file_system_sg(synth, env))
    ingress, egress = rules(synth, env, "Ingress"), rules(synth, env, "Egress")
    for port in LUSTRE_PORTS:
        assert any(r["GroupId"] == fs and r.get("SourceSecurityGroupId") == fs and allows(r, port) for r in ingress)
        assert any(r["GroupId"] == fs and r.get("DestinationSecurityGroupId") == fs and allows(r, port) for r in egress)
    # the network stack's own rules admit nothing but the file servers themselves
    assert all(r.get("SourceSecurityGroupId") == fs for r in ingress)


@pytest.mark.parametrize("env", ENVS)
def test_no_inbound_from_anywhere(synth: Synth, env: str) -> None:
    for group in synth.resources(env, "Network", "AWS::EC2::SecurityGroup").values():
        for rule in group["Properties"].get("SecurityGroupIngress", []):
            assert rule.get("CidrIp") != "0.0.0.0/0"
    assert all(r.get("CidrIp") != "0.0.0.0/0" for r in rules(synth, env, "Ingress"))


# ------------------------------------------------------------------------------------------ endpoints


@pytest.mark.parametrize("env", ENVS)
def test_endpoints_reach_aws_without_internet(synth: Synth, env: str) -> None:
    endpoints = synth.resources(env, "Network", "AWS::EC2::VPCEndpoint").values()
    (subnet_id,) = synth.resources(env, "Network", "AWS::EC2::Subnet")
    gateways = [e["Properties"] for e in endpoints if e["Properties"]["VpcEndpointType"] == "Gateway"]
    interfaces = [e["Properties"] for e in endpoints if e["Properties"]["VpcEndpointType"] != "Gateway"]
    (gateway,) = gateways
    assert json.dumps(gateway["ServiceName"]).endswith('.s3"]]}')
    tables = {k for k, v in synth.resources(env, "Network", "AWS::EC2::SubnetRouteTableAssociation").items()
              if v["Properties"]["SubnetId"] == {"Ref": subnet_id}}
    assert len(tables) == 1
    (assoc,) = tables
    table = synth.template(env, "Network")["Resources"][assoc]["Properties"]["RouteTableId"]
    assert table in gateway["RouteTableIds"]
    region = synth.stages[env].settings.region
    names = {p["ServiceName"].split(f".{region}.")[-1] for p in interfaces}
    assert names == {"ecr.api", "ecr.dkr", "logs", "monitoring", "sts", "sagemaker.api", "secretsmanager"}
    for props in interfaces:
        assert props["VpcEndpointType"] == "Interface"
        assert props["PrivateDnsEnabled"] is True
        assert props["SubnetIds"] == [{"Ref": subnet_id}]
    assert not synth.resources(env, "Network", "AWS::EC2::NatGateway")  # no environment asks for NAT
    assert not synth.resources(env, "Network", "AWS::EC2::InternetGateway")


@pytest.mark.parametrize("env", ENVS)
def test_vpc_flow_logs_capture_all_traffic_encrypted_with_the_environment_key(synth: Synth, env: str) -> None:
    _, flow_log = only(synth.resources(env, "Network", "AWS::EC2::FlowLog"))
    assert flow_log["Properties"]["TrafficType"] == "ALL"
    assert flow_log["Properties"]["ResourceType"] == "VPC"
    group = synth.template(env, "Network")["Resources"][flow_log["Properties"]["LogGroupName"]["Ref"]]
    # The flow logs' own key, in the Network stack (the environment key's Storage stack depends on Network).
    key_id, key = only(synth.resources(env, "Network", "AWS::KMS::Key"))
    assert group["Properties"]["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert key["Properties"]["EnableKeyRotation"] is True
    assert group["Properties"]["RetentionInDays"] == synth.stages[env].settings.log_retention_days
    role_id = flow_log["Properties"]["DeliverLogsPermissionArn"]["Fn::GetAtt"][0]
    (trust,) = synth.template(env, "Network")["Resources"][role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": synth.stages[env].settings.account}
    assert "vpc-flow-log/*" in json.dumps(trust["Condition"]["ArnLike"])


# ------------------------------------------------------------------------------------------ encryption


@pytest.mark.parametrize("env", ENVS)
def test_encryption_at_rest_everywhere(synth: Synth, env: str) -> None:
    key_id, key = only(synth.resources(env, "Storage", "AWS::KMS::Key"))  # the environment key
    assert key["Properties"]["EnableKeyRotation"] is True
    buckets = synth.resources(env, "Storage", "AWS::S3::Bucket")
    assert len(buckets) == 4
    kms_buckets = 0
    for bucket in buckets.values():
        (rule,) = bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        default = rule["ServerSideEncryptionByDefault"]
        if default["SSEAlgorithm"] == "aws:kms":
            assert default["KMSMasterKeyID"] == {"Fn::GetAtt": [key_id, "Arn"]}
            kms_buckets += 1
        else:  # the access-log bucket: S3 server access logging only delivers to SSE-S3 buckets
            assert default["SSEAlgorithm"] == "AES256"
            assert "LoggingConfiguration" not in bucket["Properties"]
    assert kms_buckets == 3
    _, repo = only(synth.resources(env, "Registry", "AWS::ECR::Repository"))
    assert repo["Properties"]["EncryptionConfiguration"]["EncryptionType"] == "KMS"
    _, fs = only(synth.resources(env, "Storage", "AWS::FSx::FileSystem"))
    if fs["Properties"]["LustreConfiguration"]["DeploymentType"].startswith("PERSISTENT"):
        assert fs["Properties"]["KmsKeyId"] == {"Ref": key_id}


@pytest.mark.parametrize("env", ENVS)
def test_buckets_enforce_tls_block_public_access_versioned_and_logged(synth: Synth, env: str) -> None:
    template = synth.template(env, "Storage")
    policies = {json.dumps(p["Properties"]["Bucket"]): p["Properties"]["PolicyDocument"]
                for p in synth.resources(env, "Storage", "AWS::S3::BucketPolicy").values()}
    for logical_id, bucket in synth.resources(env, "Storage", "AWS::S3::Bucket").items():
        props = bucket["Properties"]
        assert props["PublicAccessBlockConfiguration"] == {
            "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True,
        }
        assert props["VersioningConfiguration"] == {"Status": "Enabled"}
        statements = policies[json.dumps({"Ref": logical_id})]["Statement"]
        assert any(s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
                   for s in statements)
        if "Data" in logical_id or "Output" in logical_id or "Checkpoints" in logical_id:
            assert props["LoggingConfiguration"]["DestinationBucketName"]["Ref"] in template["Resources"]


@pytest.mark.parametrize("env", ENVS)
def test_old_checkpoints_expire(synth: Synth, env: str) -> None:
    days = synth.stages[env].settings.checkpoint_expiration_days
    (bucket,) = [b for k, b in synth.resources(env, "Storage", "AWS::S3::Bucket").items() if "Checkpoints" in k]
    rules_ = bucket["Properties"]["LifecycleConfiguration"]["Rules"]
    assert any(r.get("ExpirationInDays") == days and r["Status"] == "Enabled" for r in rules_)


@pytest.mark.parametrize("env", ENVS)
def test_repository_scans_on_push_with_immutable_tags_and_lifecycle(synth: Synth, env: str) -> None:
    _, repo = only(synth.resources(env, "Registry", "AWS::ECR::Repository"))
    props = repo["Properties"]
    assert props["ImageScanningConfiguration"] == {"ScanOnPush": True}
    # immutable but the deploy-time build tags (tests/platform/test_registry.py)
    assert props["ImageTagMutability"] == "IMMUTABLE_WITH_EXCLUSION"
    assert "RepositoryName" not in props  # generated physical name
    policy = json.loads(props["LifecyclePolicy"]["LifecyclePolicyText"])
    assert {r["selection"]["tagStatus"] for r in policy["rules"]} == {"untagged", "any"}


# ------------------------------------------------------------------------------------------ FSx per environment


def test_fsx_settings_per_environment(synth: Synth) -> None:
    _, dev = only(synth.resources("dev", "Storage", "AWS::FSx::FileSystem"))
    assert dev["Properties"]["StorageCapacity"] == 1200
    assert dev["Properties"]["LustreConfiguration"]["DeploymentType"] == "SCRATCH_2"
    _, prod = only(synth.resources("prod", "Storage", "AWS::FSx::FileSystem"))
    lustre = prod["Properties"]["LustreConfiguration"]
    assert prod["Properties"]["StorageCapacity"] == 2400
    assert lustre["DeploymentType"] == "PERSISTENT_2"
    assert lustre["PerUnitStorageThroughput"] == 250
    assert lustre["DataCompressionType"] == "LZ4"
    # Linked to S3 per dataset: FSx takes no backups, and cdk.json says so (0 turns them off; unset is FSx's default).
    assert lustre["AutomaticBackupRetentionDays"] == 0


def test_persistent_2_links_each_dataset_and_nothing_else(synth: Synth) -> None:
    """prod (PERSISTENT_2): one data repository association per dataset of cdk.json, import only; no ImportPath (FSx
    takes none beside an association) and no link at the root, which would take the whole bucket."""
    fs_id, fs = only(synth.resources("prod", "Storage", "AWS::FSx::FileSystem"))
    lustre = fs["Properties"]["LustreConfiguration"]
    assert not {"ImportPath", "ExportPath", "AutoImportPolicy"} & set(lustre)
    data_bucket = next(k for k in synth.resources("prod", "Storage", "AWS::S3::Bucket") if "Data" in k)
    links = {}
    for dra in synth.resources("prod", "Storage", "AWS::FSx::DataRepositoryAssociation").values():
        props = dra["Properties"]
        assert props["FileSystemId"] == {"Ref": fs_id}
        assert props["S3"] == {"AutoImportPolicy": {"Events": ["NEW", "CHANGED", "DELETED"]}}  # no AutoExportPolicy
        assert props["BatchImportMetaDataOnCreate"] is True
        links[props["FileSystemPath"]] = props["DataRepositoryPath"]
    assert links == {
        "/datasets/gpt-tokens": {"Fn::Join": ["", ["s3://", {"Ref": data_bucket}, "/datasets/gpt-tokens/"]]},
        "/datasets/smoke": {"Fn::Join": ["", ["s3://", {"Ref": data_bucket}, "/datasets/smoke/"]]},
        "/datasets/tabular": {"Fn::Join": ["", ["s3://", {"Ref": data_bucket}, "/datasets/tabular/"]]},
    }


def test_prods_associations_are_created_one_at_a_time_in_name_order(synth: Synth) -> None:
    """FSx fails concurrent CreateDataRepositoryAssociation calls on one file system (hashicorp/terraform-provider-aws
    #24678) and CloudFormation runs what nothing orders in parallel ("DependsOn attribute"): on the first deploy prod's
    associations would be created together and fail, and the rollback would leave the new file system behind
    (retained). Each depends on the one before it by dataset name, so they are created one after another and deleted
    in the reverse order."""
    associations = synth.resources("prod", "Storage", "AWS::FSx::DataRepositoryAssociation")
    by_path = {a["Properties"]["FileSystemPath"]: (logical_id, a) for logical_id, a in associations.items()}
    assert sorted(by_path) == ["/datasets/gpt-tokens", "/datasets/smoke", "/datasets/tabular"]  # cdk.json's, by name
    (first_id, first), (second_id, second), (_, third) = (
        by_path["/datasets/gpt-tokens"], by_path["/datasets/smoke"], by_path["/datasets/tabular"])
    assert "DependsOn" not in first
    assert second.get("DependsOn") == [first_id]
    assert third.get("DependsOn") == [second_id]


def test_scratch_2_keeps_its_import_path(synth: Synth) -> None:
    """dev (SCRATCH_2) keeps the whole-bucket ImportPath it was created with: changing it would replace the file
    system and every workload stack that imports its id. The specs' reads are bounded by the rule instead."""
    _, fs = only(synth.resources("dev", "Storage", "AWS::FSx::FileSystem"))
    lustre = fs["Properties"]["LustreConfiguration"]
    data_bucket = next(k for k in synth.resources("dev", "Storage", "AWS::S3::Bucket") if "Data" in k)
    assert lustre["ImportPath"] == {"Fn::Join": ["", ["s3://", {"Ref": data_bucket}]]}
    assert lustre["AutoImportPolicy"] == "NEW_CHANGED_DELETED"
    assert not synth.resources("dev", "Storage", "AWS::FSx::DataRepositoryAssociation")


@pytest.mark.parametrize("env", ENVS)
def test_mount_name_is_exported_for_workload_stacks(synth: Synth, env: str) -> None:
    from compiler.facts import placeholders as ph

    fs_id, _ = only(synth.resources(env, "Storage", "AWS::FSx::FileSystem"))
    values = synth.stages[env].storage_stack.resolve(synth.stages[env].platform.substitutions()[ph.FSX_MOUNT_NAME])
    assert values == {"Fn::GetAtt": [fs_id, "LustreMountName"]}


# ------------------------------------------------------------------------------------------ retention


@pytest.mark.parametrize("env", ENVS)
def test_retention_follows_the_environment(synth: Synth, env: str) -> None:
    production = synth.stages[env].settings.production
    expected = "RetainExceptOnCreate" if production else "Delete"  # kept, but for the rollback of its first deploy
    for stack, kind in (("Storage", "AWS::S3::Bucket"), ("Storage", "AWS::KMS::Key"), ("Network", "AWS::KMS::Key"),
                        ("Storage", "AWS::FSx::FileSystem"), ("Registry", "AWS::ECR::Repository")):
        for logical_id, resource in synth.resources(env, stack, kind).items():
            assert resource.get("DeletionPolicy") == expected, (logical_id, resource.get("DeletionPolicy"))
    auto_delete = synth.resources(env, "Storage", "Custom::S3AutoDeleteObjects")
    assert bool(auto_delete) is (not production)  # dev's buckets are emptied on destroy, prod's never


# ------------------------------------------------------------------------------------------ shared job access


@pytest.mark.parametrize("env", ENVS)
def test_the_environment_key_lets_cloudwatch_logs_of_this_account_and_region_use_it(synth: Synth, env: str) -> None:
    """The log groups the stacks own with the environment key (the image copy function's, the provider functions'):
    CloudWatch Logs uses a customer key only if its policy lets logs.<region>.amazonaws.com, with the encryption
    context naming the group (CloudWatch Logs user guide, "Encrypt log data in CloudWatch Logs using AWS KMS")."""
    from fnmatch import fnmatchcase

    account, region = ACCOUNTS[env]
    _, key = only(synth.resources(env, "Storage", "AWS::KMS::Key"))
    group_arn = f"arn:aws:logs:{region}:{account}:log-group:{env}-Registry-ImageCopierLogsE531B6D4-AbC123"
    allowed = []
    for statement in key["Properties"]["KeyPolicy"]["Statement"]:
        if statement.get("Principal") != {"Service": f"logs.{region}.amazonaws.com"}:
            continue
        pattern = statement["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]
        pattern = json.loads(json.dumps(pattern).replace('{"Ref": "AWS::Partition"}', '"aws"'))
        if isinstance(pattern, dict):
            pattern = "".join(pattern["Fn::Join"][1])
        if fnmatchcase(group_arn, pattern) and not fnmatchcase(group_arn.replace(account, "999999999999"), pattern):
            allowed.extend(statement["Action"])
    assert {"kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"} <= set(allowed)


@pytest.mark.parametrize("env", ENVS)
def test_shared_job_policies_hold_one_statement_each_and_no_group_creation(synth: Synth, env: str) -> None:
    policies = synth.resources(env, "Access", "AWS::IAM::ManagedPolicy")
    statements = {}
    for policy in policies.values():
        (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
        statements[statement["Sid"]] = statement
    assert set(statements) == {"EcrLogin", "DescribeJobNetwork", "PutTrainingMetrics", "CreateJobInterfaces",
                               "ManageJobInterfaces", "ListTrainingLogs"}
    assert "logs:CreateLogGroup" not in json.dumps(statements)
    # Writing a stream is each workload's own (its jobs' streams only): nothing shared may write one.
    assert "logs:PutLogEvents" not in json.dumps(statements) and "logs:CreateLogStream" not in json.dumps(statements)
    assert statements["PutTrainingMetrics"]["Condition"] == {"StringLike": {"cloudwatch:namespace": "/aws/sagemaker/*"}}
    assert "ec2:Vpc" in statements["ManageJobInterfaces"]["Condition"]["ArnEquals"]
    # IAM names a log group as log-group:NAME and, for most actions, log-group:NAME:* (CloudWatch Logs user guide,
    # "Overview of managing access permissions"): both, for SageMaker's group only.
    account, region = ACCOUNTS[env]
    group_arn = f"arn:aws:logs:{region}:{account}:log-group:/aws/sagemaker/TrainingJobs"
    assert statements["ListTrainingLogs"]["Action"] == "logs:DescribeLogStreams"
    assert sorted(statements["ListTrainingLogs"]["Resource"]) == [group_arn, f"{group_arn}:*"]
    # Nothing else: execution roles are per workload, and no function sets anything on SageMaker's log group.
    assert {r["Type"] for r in synth.template(env, "Access")["Resources"].values()} == {"AWS::IAM::ManagedPolicy"}
