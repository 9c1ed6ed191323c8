"""`trainctl preflight --env ENV` (issue 22): every pass and fail path of every check, offline.

AWS answers come from botocore Stubbers (every answer checked against botocore's model), and from moto where it
implements the call (STS, CloudFormation, SSM, CloudWatch Logs); moto has neither Service Quotas' ListServiceQuotas
nor ValidateStateMachineDefinition. Expected texts are written out, never computed by the code under test.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError

from compiler.inputs.model import CapacityRetry, Compute
from compiler.pipeline import compile_one, project_images
from tests.cli.preflight.fakes import (
    DEV,
    StubbedSession,
    context,
    fake_docker,
    quota,
    stub_quotas,
    write_assembly,
)
from tests.project import PROJECT, ROOT, loaded
from trainctl.cli import main
from trainctl.preflight import command as preflight
from trainctl.preflight.checks import (
    FAIL,
    PASS,
    SKIP,
    Aws,
    Result,
    account,
    base,
    costs,
    definitions,
    docker,
    existing,
    quotas,
)

P4D = "ml.p4d.24xlarge for training job usage"
IDENTITY = {"Account": "111111111111", "Arn": "arn:aws:iam::111111111111:user/me", "UserId": "AIDAME"}
LOGIN = ("aws ecr get-login-password --region us-east-1 | docker login --username AWS --password-stdin "
         "763104351884.dkr.ecr.us-east-1.amazonaws.com")


@pytest.fixture
def session() -> Any:
    stubbed = StubbedSession()
    yield stubbed
    stubbed.verify()


@pytest.fixture
def cdk_out(tmp_path: Path) -> Path:
    return write_assembly(tmp_path / "cdk.out")


@pytest.fixture
def no_aws_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """No credentials or profile of this machine (or of moto) in reach."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE",
                 "AWS_DEFAULT_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def stack(status: str = "UPDATE_COMPLETE", outputs: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"Stacks": [{"StackName": "CDKToolkit", "StackStatus": status, "CreationTime": "2025-01-01T00:00:00Z",
                        "Outputs": outputs if outputs is not None else
                        [{"OutputKey": "BootstrapVersion", "OutputValue": "30"}]}]}


def no_stack(session: StubbedSession, name: str) -> None:
    session.stub("cloudformation").add_client_error(
        "describe_stacks", "ValidationError", f"Stack with id {name} does not exist", 400, expected_params={
            "StackName": name})


# ------------------------------------------------------------------------------------------------- credentials


def test_credentials_of_the_environments_account_pass(session: StubbedSession, cdk_out: Path) -> None:
    session.stub("sts").add_response("get_caller_identity", {
        "Account": "111111111111", "Arn": "arn:aws:sts::111111111111:assumed-role/deployer/me", "UserId": "AROA:me"})
    ctx = context(session, cdk_out, configured_region="us-east-1", credentials_ok=False)
    assert account.credentials(ctx) == [Result("credentials", PASS, "account 111111111111 "
                                               "(arn:aws:sts::111111111111:assumed-role/deployer/me), region us-east-1")]
    assert ctx.credentials_ok


def test_credentials_of_another_account_fail(session: StubbedSession, cdk_out: Path) -> None:
    session.stub("sts").add_response("get_caller_identity", IDENTITY | {"Account": "222222222222"})
    ctx = context(session, cdk_out, credentials_ok=False)
    assert account.credentials(ctx) == [Result("credentials", FAIL, "the credentials are for account 222222222222, "
                                               "but cdk.json pins account 111111111111 (environment dev); switch to a "
                                               "profile of that account (--profile or AWS_PROFILE)")]
    assert not ctx.credentials_ok


def test_another_configured_region_fails(session: StubbedSession, cdk_out: Path) -> None:
    session.stub("sts").add_response("get_caller_identity", IDENTITY)
    ctx = context(session, cdk_out, configured_region="eu-west-1", credentials_ok=False)
    assert account.credentials(ctx) == [Result("credentials", FAIL, "account 111111111111 matches, but the configured "
                                               "region is eu-west-1 and dev is in us-east-1 (cdk.json); `export "
                                               "AWS_REGION=us-east-1` so `aws` commands without --region reach the "
                                               "environment")]


def test_expired_credentials_fail_with_the_error(session: StubbedSession, cdk_out: Path) -> None:
    session.stub("sts").add_client_error("get_caller_identity", "ExpiredToken", "The security token included in the "
                                         "request is expired", 403)
    (row,) = account.credentials(context(session, cdk_out, credentials_ok=False))
    assert row == Result("credentials", FAIL, "STS GetCallerIdentity failed: An error occurred (ExpiredToken) when "
                         "calling the GetCallerIdentity operation: The security token included in the request is "
                         "expired; refresh the credentials for account 111111111111 (environment dev)")


def test_an_unreachable_sts_fails_naming_the_network(cdk_out: Path) -> None:
    class Offline:
        def client(self, service: str, **kwargs: Any) -> Any:
            def refuse() -> None:
                raise EndpointConnectionError(endpoint_url="https://sts.us-east-1.amazonaws.com/")
            return SimpleNamespace(get_caller_identity=refuse)

    ctx = replace(context(StubbedSession(), cdk_out, credentials_ok=False), aws=Aws(DEV, session=Offline()))
    assert account.credentials(ctx) == [Result("credentials", FAIL, "STS GetCallerIdentity failed: Could not connect "
                                               'to the endpoint URL: "https://sts.us-east-1.amazonaws.com/"; check this '
                                               "machine's network (proxy, VPN, firewall) and the credentials' "
                                               "configuration, then run preflight again")]


def test_no_credentials_fail(no_aws_config: None, cdk_out: Path) -> None:
    ctx = replace(context(StubbedSession(), cdk_out, credentials_ok=False), aws=Aws(DEV))
    assert account.credentials(ctx) == [Result("credentials", FAIL, "no AWS credentials found; configure them for "
                                               "account 111111111111 (environment dev), e.g. `aws sso login --profile "
                                               "NAME` and AWS_PROFILE=NAME")]


def test_an_unknown_profile_fails(no_aws_config: None, cdk_out: Path) -> None:
    ctx = replace(context(StubbedSession(), cdk_out, credentials_ok=False), aws=Aws(DEV, profile="nope"))
    assert account.credentials(ctx) == [Result("credentials", FAIL, "The config profile (nope) could not be found; "
                                               "name a profile that `aws configure list-profiles` shows")]


def test_credentials_against_moto(aws: None, monkeypatch: pytest.MonkeyPatch, cdk_out: Path) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    ctx = replace(context(StubbedSession(), cdk_out, credentials_ok=False), aws=Aws(DEV))
    assert [r.status for r in account.credentials(ctx)] == [PASS]
    monkeypatch.setenv("MOTO_ACCOUNT_ID", "222222222222")
    ctx = replace(ctx, aws=Aws(DEV))
    (row,) = account.credentials(ctx)
    assert row.status == FAIL and row.detail.startswith("the credentials are for account 222222222222, ")


# ----------------------------------------------------------------------------------------------- cdk bootstrap


def test_a_recent_bootstrap_passes(session: StubbedSession, cdk_out: Path) -> None:
    session.stub("cloudformation").add_response("describe_stacks", stack(), {"StackName": "CDKToolkit"})
    assert account.cdk_bootstrap(context(session, cdk_out)) == [
        Result("cdk-bootstrap", PASS, "CDKToolkit UPDATE_COMPLETE, version 30 (the templates need 6 or later)")]


def test_no_bootstrap_stack_fails_with_the_bootstrap_command(session: StubbedSession, cdk_out: Path) -> None:
    no_stack(session, "CDKToolkit")
    assert account.cdk_bootstrap(context(session, cdk_out)) == [
        Result("cdk-bootstrap", FAIL, "no CDKToolkit stack in 111111111111/us-east-1; bootstrap once: `npx cdk "
               "bootstrap aws://111111111111/us-east-1`")]


def test_an_old_bootstrap_fails(session: StubbedSession, tmp_path: Path) -> None:
    cdk_out = write_assembly(tmp_path / "out", required=21)
    session.stub("cloudformation").add_response("describe_stacks", stack(outputs=[
        {"OutputKey": "BootstrapVersion", "OutputValue": "14"}]), {"StackName": "CDKToolkit"})
    assert account.cdk_bootstrap(context(session, cdk_out)) == [
        Result("cdk-bootstrap", FAIL, "CDKToolkit is version 14, the templates need 21 or later; upgrade it with the "
               "pinned CLI: `npx cdk bootstrap aws://111111111111/us-east-1`")]


def test_without_the_output_the_version_is_the_parameter_the_templates_read(session: StubbedSession,
                                                                            tmp_path: Path) -> None:
    cdk_out = write_assembly(tmp_path / "out", qualifier="custom123")
    session.stub("cloudformation").add_response("describe_stacks", stack(outputs=[]), {"StackName": "CDKToolkit"})
    session.stub("ssm").add_response("get_parameter", {"Parameter": {"Name": "/cdk-bootstrap/custom123/version",
                                                                     "Value": "6"}},
                                     {"Name": "/cdk-bootstrap/custom123/version"})
    assert account.cdk_bootstrap(context(session, cdk_out)) == [
        Result("cdk-bootstrap", PASS, "CDKToolkit UPDATE_COMPLETE, version 6 (the templates need 6 or later)")]


def test_no_version_anywhere_fails(session: StubbedSession, cdk_out: Path) -> None:
    session.stub("cloudformation").add_response("describe_stacks", stack(outputs=[]), {"StackName": "CDKToolkit"})
    session.stub("ssm").add_client_error("get_parameter", "ParameterNotFound", "", 400)
    assert account.cdk_bootstrap(context(session, cdk_out)) == [
        Result("cdk-bootstrap", FAIL, "CDKToolkit reports no bootstrap version (None); bootstrap again: `npx cdk "
               "bootstrap aws://111111111111/us-east-1`")]


def test_an_unsettled_bootstrap_stack_fails(session: StubbedSession, cdk_out: Path) -> None:
    session.stub("cloudformation").add_response("describe_stacks", stack("ROLLBACK_COMPLETE"),
                                                {"StackName": "CDKToolkit"})
    (row,) = account.cdk_bootstrap(context(session, cdk_out))
    assert row.status == FAIL and row.detail.startswith("CDKToolkit is ROLLBACK_COMPLETE; wait for it to settle")


def test_without_synthesized_templates_the_bootstrap_check_says_to_synth(session: StubbedSession,
                                                                         tmp_path: Path) -> None:
    (row,) = account.cdk_bootstrap(context(session, tmp_path / "nothing"))
    assert row == Result("cdk-bootstrap", FAIL, f"no synthesized templates for dev in {tmp_path / 'nothing'} "
                         "(FileNotFoundError); run `scripts/synth.sh` (or `npx cdk synth`) first, so preflight can "
                         "read the bootstrap version the templates check")


def test_bootstrap_version_from_ssm_in_moto(aws: None, cdk_out: Path) -> None:
    """The version only in the SSM parameter the templates read (moto's SSM; the stack itself stubbed)."""
    ssm = boto3.client("ssm", region_name="us-east-1")
    ssm.put_parameter(Name="/cdk-bootstrap/hnb659fds/version", Value="27", Type="String")
    session = StubbedSession(moto=("ssm",))
    session.stub("cloudformation").add_response("describe_stacks", stack("CREATE_COMPLETE", []),
                                                {"StackName": "CDKToolkit"})
    try:
        assert account.cdk_bootstrap(context(session, cdk_out)) == [
            Result("cdk-bootstrap", PASS, "CDKToolkit CREATE_COMPLETE, version 27 (the templates need 6 or later)")]
    finally:
        ssm.delete_parameter(Name="/cdk-bootstrap/hnb659fds/version")
    session.verify()


ASSETS = "cdk-hnb659fds-container-assets-111111111111-us-east-1"


def bootstrap_outputs(repository: str | None = ASSETS) -> dict[str, Any]:
    outputs = [{"OutputKey": "BootstrapVersion", "OutputValue": "30"}]
    return stack(outputs=outputs + ([{"OutputKey": "ImageRepositoryName", "OutputValue": repository}]
                                    if repository else []))


def repository(session: StubbedSession, mutability: str) -> None:
    session.stub("ecr").add_response("describe_repositories", {"repositories": [
        {"repositoryName": ASSETS, "imageTagMutability": mutability}]}, {"repositoryNames": [ASSETS]})


def test_an_immutable_asset_repository_passes(session: StubbedSession, cdk_out: Path, images: dict[str, Any]) -> None:
    session.stub("cloudformation").add_response("describe_stacks", bootstrap_outputs(), {"StackName": "CDKToolkit"})
    repository(session, "IMMUTABLE")
    assert account.bootstrap_image_repository(context(session, cdk_out, images=images)) == [
        Result("bootstrap-image-repository", PASS, f"{ASSETS}: IMMUTABLE tags")]


def test_a_mutable_asset_repository_fails(session: StubbedSession, cdk_out: Path, images: dict[str, Any]) -> None:
    session.stub("cloudformation").add_response("describe_stacks", bootstrap_outputs(), {"StackName": "CDKToolkit"})
    repository(session, "MUTABLE")
    assert account.bootstrap_image_repository(context(session, cdk_out, images=images)) == [
        Result("bootstrap-image-repository", FAIL, f"{ASSETS} has MUTABLE tags, so an image pushed again under an "
               "asset hash could change what the Registry stack copies: `aws ecr put-image-tag-mutability "
               f"--repository-name {ASSETS} --image-tag-mutability IMMUTABLE --region us-east-1` (the pinned CLI's "
               "bootstrap template makes it IMMUTABLE)")]


def test_no_asset_repository_output_fails(session: StubbedSession, cdk_out: Path, images: dict[str, Any]) -> None:
    session.stub("cloudformation").add_response("describe_stacks", bootstrap_outputs(None), {"StackName": "CDKToolkit"})
    assert account.bootstrap_image_repository(context(session, cdk_out, images=images)) == [
        Result("bootstrap-image-repository", FAIL, "CDKToolkit names no ImageRepositoryName output; bootstrap again: "
               "`npx cdk bootstrap aws://111111111111/us-east-1`")]


def test_the_asset_repository_check_skips_without_a_bootstrap_or_an_image(session: StubbedSession, cdk_out: Path,
                                                                          images: dict[str, Any]) -> None:
    no_stack(session, "CDKToolkit")
    assert account.bootstrap_image_repository(context(session, cdk_out, images=images)) == [
        Result("bootstrap-image-repository", SKIP, "no CDKToolkit stack (see cdk-bootstrap)")]
    assert account.bootstrap_image_repository(context(session, cdk_out)) == [
        Result("bootstrap-image-repository", SKIP, "the project builds no image")]


# ------------------------------------------------------------------------------------------ existing resources

TOPIC_ARN = "arn:aws:sns:us-east-1:111111111111:dev-training-runs"
RUN_LOGS = "/aws/vendedlogs/states/dev-training"


def log_groups(session: StubbedSession, prefix: str, *names: str, **settings: Any) -> None:
    session.stub("logs").add_response("describe_log_groups", {"logGroups": [{"logGroupName": n, **settings}
                                                                            for n in names]},
                                      {"logGroupNamePrefix": prefix})


def owned(session: StubbedSession, physical_id: str, stack_name: str | None) -> None:
    stub = session.stub("cloudformation")
    if stack_name is None:
        stub.add_client_error("describe_stack_resources", "ValidationError", f"Stack for {physical_id} does not exist",
                              400, expected_params={"PhysicalResourceId": physical_id})
        return
    stub.add_response("describe_stack_resources", {"StackResources": [{
        "StackName": stack_name, "LogicalResourceId": "X", "ResourceType": "T", "Timestamp": "2025-01-01T00:00:00Z",
        "ResourceStatus": "CREATE_COMPLETE", "PhysicalResourceId": physical_id}]}, {"PhysicalResourceId": physical_id})


def test_no_fixed_name_taken_passes(session: StubbedSession, cdk_out: Path) -> None:
    log_groups(session, RUN_LOGS)
    session.stub("sns").add_client_error("get_topic_attributes", "NotFound", "Topic does not exist", 404)
    assert existing.existing_resources(context(session, cdk_out)) == [
        Result("existing-resources", PASS, "2 fixed names, 0 already managed by their stack, none taken otherwise "
               "(buckets, repositories, keys and the file system get generated names, so a retained one of an earlier "
               "deploy does not conflict)")]


def test_a_name_managed_by_its_own_stack_passes(session: StubbedSession, cdk_out: Path) -> None:
    log_groups(session, RUN_LOGS, RUN_LOGS)
    owned(session, RUN_LOGS, "dev-Runs")
    session.stub("sns").add_response("get_topic_attributes", {"Attributes": {}}, {"TopicArn": TOPIC_ARN})
    owned(session, TOPIC_ARN, "dev-Runs")
    (row,) = existing.existing_resources(context(session, cdk_out))
    assert row.status == PASS and row.detail.startswith("2 fixed names, 2 already managed by their stack, ")


def test_a_retained_leftover_fails_with_what_to_do(session: StubbedSession, cdk_out: Path) -> None:
    log_groups(session, RUN_LOGS, RUN_LOGS)
    owned(session, RUN_LOGS, None)
    session.stub("sns").add_response("get_topic_attributes", {"Attributes": {}}, {"TopicArn": TOPIC_ARN})
    owned(session, TOPIC_ARN, "old-Runs")
    assert existing.existing_resources(context(session, cdk_out)) == [
        Result("existing-resources", FAIL, "/aws/vendedlogs/states/dev-training (AWS::Logs::LogGroup) exists outside "
               "any stack (left by an earlier deploy?): save what you need, then `aws logs delete-log-group "
               "--log-group-name /aws/vendedlogs/states/dev-training`, or adopt it into dev-Runs with `npx cdk "
               "import`"),
        Result("existing-resources", FAIL, "dev-training-runs (AWS::SNS::Topic) belongs to stack old-Runs, not "
               "dev-Runs: delete or rename it there before deploying"),
    ]


SM_ARN = "arn:aws:states:us-east-1:111111111111:stateMachine:dev-gpt-x"
KINDS = [  # kind, name property, name, service, operation, its params, an answer that it exists, its not-found code,
    # the physical ID CloudFormation knows it by, the delete command preflight names
    ("AWS::StepFunctions::StateMachine", "StateMachineName", "dev-gpt-x", "stepfunctions", "describe_state_machine",
     {"stateMachineArn": SM_ARN}, {"stateMachineArn": SM_ARN, "name": "dev-gpt-x", "definition": "{}",
                                   "roleArn": "arn:aws:iam::111111111111:role/r", "type": "STANDARD",
                                   "creationDate": "2025-01-01T00:00:00Z"}, "StateMachineDoesNotExist", SM_ARN,
     f"aws stepfunctions delete-state-machine --state-machine-arn {SM_ARN}"),
    ("AWS::CloudWatch::Dashboard", "DashboardName", "dev-training", "cloudwatch", "get_dashboard",
     {"DashboardName": "dev-training"}, {"DashboardName": "dev-training"}, "ResourceNotFound", "dev-training",
     "aws cloudwatch delete-dashboards --dashboard-names dev-training"),
    ("AWS::S3::Bucket", "BucketName", "dev-data", "s3", "head_bucket", {"Bucket": "dev-data"}, {}, "404", "dev-data",
     "aws s3 rb s3://dev-data"),
    ("AWS::ECR::Repository", "RepositoryName", "dev-trainer", "ecr", "describe_repositories",
     {"repositoryNames": ["dev-trainer"]}, {"repositories": [{"repositoryName": "dev-trainer"}]},
     "RepositoryNotFoundException", "dev-trainer", "aws ecr delete-repository --repository-name dev-trainer"),
    ("AWS::Scheduler::Schedule", "Name", "dev-gpt-x", "scheduler", "get_schedule", {"Name": "dev-gpt-x"}, {
        "Name": "dev-gpt-x", "GroupName": "default", "ScheduleExpression": "cron(0 2 ? * MON-FRI *)"},
     "ResourceNotFoundException", "dev-gpt-x", "aws scheduler delete-schedule --name dev-gpt-x"),
    ("AWS::IAM::Role", "RoleName", "dev-runner", "iam", "get_role", {"RoleName": "dev-runner"}, {"Role": {
        "Path": "/", "RoleName": "dev-runner", "RoleId": "AROAEXAMPLEEXAMPLE1", "CreateDate": "2025-01-01T00:00:00Z",
        "Arn": "arn:aws:iam::111111111111:role/dev-runner"}}, "NoSuchEntity", "dev-runner",
     "aws iam delete-role --role-name dev-runner"),
]


def one_named(tmp_path: Path, kind: str, prop: str, name: str) -> Path:
    cdk_out = write_assembly(tmp_path / "cdk.out")
    runs = cdk_out / "assembly-dev" / "devRuns.template.json"
    template = json.loads(runs.read_text())
    template["Resources"] = {"Named": {"Type": kind, "Properties": {prop: name}}}
    runs.write_text(json.dumps(template))
    return cdk_out


@pytest.mark.parametrize(("kind", "prop", "name", "service", "operation", "params", "found", "missing", "physical",
                          "command"), KINDS, ids=[k[0] for k in KINDS])
def test_each_kind_with_a_fixed_name_is_looked_up(session: StubbedSession, tmp_path: Path, kind: str, prop: str,
                                                  name: str, service: str, operation: str, params: dict[str, Any],
                                                  found: dict[str, Any], missing: str, physical: str,
                                                  command: str) -> None:
    cdk_out = one_named(tmp_path, kind, prop, name)
    session.stub(service).add_client_error(operation, missing, "not here", 404, expected_params=params)
    assert [r.status for r in existing.existing_resources(context(session, cdk_out))] == [PASS]
    session.stub(service).add_response(operation, found, params)
    owned(session, physical, None)
    assert existing.existing_resources(context(session, cdk_out)) == [
        Result("existing-resources", FAIL, f"{name} ({kind}) exists outside any stack (left by an earlier deploy?): "
               f"save what you need, then `{command}`, or adopt it into dev-Runs with `npx cdk import`")]


def test_a_fixed_alarm_name_is_looked_up(session: StubbedSession, tmp_path: Path) -> None:
    cdk_out = one_named(tmp_path, "AWS::CloudWatch::Alarm", "AlarmName", "dev-capacity")
    session.stub("cloudwatch").add_response("describe_alarms", {"MetricAlarms": []}, {"AlarmNames": ["dev-capacity"]})
    assert [r.status for r in existing.existing_resources(context(session, cdk_out))] == [PASS]
    session.stub("cloudwatch").add_response("describe_alarms", {"MetricAlarms": [{"AlarmName": "dev-capacity"}]},
                                            {"AlarmNames": ["dev-capacity"]})
    owned(session, "dev-capacity", "dev-Monitoring")
    assert existing.existing_resources(context(session, cdk_out)) == [
        Result("existing-resources", FAIL, "dev-capacity (AWS::CloudWatch::Alarm) belongs to stack dev-Monitoring, not "
               "dev-Runs: delete or rename it there before deploying")]


BUDGET_FILTER = {"TagKeyValue": ["user:environment$dev", "user:training-platform:environment$dev"]}


def with_budget(tmp_path: Path, cost_filters: dict[str, Any] | None = None) -> Path:
    """The assembly with the budget platform_constructs/budget.py makes for dev (its name is nested in Budget)."""
    cdk_out = write_assembly(tmp_path / "cdk.out")
    runs = cdk_out / "assembly-dev" / "devRuns.template.json"
    template = json.loads(runs.read_text())
    template["Resources"] = {"Budget": {"Type": "AWS::Budgets::Budget", "Properties": {"Budget": {
        "BudgetName": "dev-training", "BudgetType": "COST", "TimeUnit": "MONTHLY",
        "BudgetLimit": {"Amount": 2000, "Unit": "USD"}, "CostFilters": cost_filters or BUDGET_FILTER}}}}
    runs.write_text(json.dumps(template))
    return cdk_out


def test_a_budget_name_taken_outside_the_stacks_fails(session: StubbedSession, tmp_path: Path) -> None:
    cdk_out = with_budget(tmp_path)
    params = {"AccountId": "111111111111", "BudgetName": "dev-training"}
    session.stub("budgets").add_client_error("describe_budget", "NotFoundException", "no budget", 404,
                                             expected_params=params)
    assert [r.status for r in existing.existing_resources(context(session, cdk_out))] == [PASS]
    session.stub("budgets").add_response("describe_budget", {"Budget": {
        "BudgetName": "dev-training", "BudgetType": "COST", "TimeUnit": "MONTHLY"}}, params)
    owned(session, "dev-training", None)
    assert existing.existing_resources(context(session, cdk_out)) == [
        Result("existing-resources", FAIL, "dev-training (AWS::Budgets::Budget) exists outside any stack (left by an "
               "earlier deploy?): save what you need, then `aws budgets delete-budget --account-id 111111111111 "
               "--budget-name dev-training`, or adopt it into dev-Runs with `npx cdk import`")]
    session.stub("budgets").add_response("describe_budget", {"Budget": {
        "BudgetName": "dev-training", "BudgetType": "COST", "TimeUnit": "MONTHLY"}}, params)
    owned(session, "dev-training", "dev-Runs")
    [row] = existing.existing_resources(context(session, cdk_out))
    assert row.status == PASS and row.detail.startswith("1 fixed names, 1 already managed by their stack")


# ------------------------------------------------------------------------------------- cost allocation tags

TAG_KEYS = ["environment", "training-platform:environment"]


def tags_listed(session: StubbedSession, statuses: dict[str, str], token: str | None = None,
                given: str | None = None) -> None:
    params: dict[str, Any] = {"TagKeys": TAG_KEYS, "Type": "UserDefined", **({"NextToken": given} if given else {})}
    answer: dict[str, Any] = {"CostAllocationTags": [{"TagKey": k, "Type": "UserDefined", "Status": s}
                                                     for k, s in statuses.items()]}
    if token:
        answer["NextToken"] = token
    session.stub("ce").add_response("list_cost_allocation_tags", answer, params)


def test_without_a_budget_no_tag_is_asked_for(session: StubbedSession, cdk_out: Path) -> None:
    assert costs.cost_allocation_tags(context(session, cdk_out)) == [
        Result("cost-allocation-tags", PASS, "dev has no monthly budget (monthly_budget_usd in cdk.json): no tag to "
               "activate")]
    assert session.called == set()


def test_active_budget_tags_pass_across_pages(session: StubbedSession, tmp_path: Path) -> None:
    cdk_out = with_budget(tmp_path)
    tags_listed(session, {"environment": "Active"}, token="next")
    tags_listed(session, {"training-platform:environment": "Active"}, given="next")
    assert costs.cost_allocation_tags(context(session, cdk_out)) == [
        Result("cost-allocation-tags", PASS, "environment, training-platform:environment active: budget dev-training "
               "counts the environment's resources and jobs")]


def test_an_inactive_tag_fails_with_the_command_and_an_unseen_one_is_a_skip(session: StubbedSession,
                                                                           tmp_path: Path) -> None:
    cdk_out = with_budget(tmp_path)
    tags_listed(session, {"environment": "Inactive"})
    inactive, unseen = costs.cost_allocation_tags(context(session, cdk_out))
    assert inactive == Result("cost-allocation-tags", FAIL, "tag key(s) environment are inactive cost allocation tags, "
                              "so budget dev-training counts none of their cost: `aws ce "
                              "update-cost-allocation-tags-status --cost-allocation-tags-status "
                              "TagKey=environment,Status=Active` (payer account)")
    assert unseen.status == SKIP and unseen.detail.startswith(
        "Billing has not seen tag key(s) training-platform:environment yet")
    assert "TagKey=training-platform:environment,Status=Active" in unseen.detail


def test_a_member_account_refused_the_listing_fails_naming_the_payer(session: StubbedSession, tmp_path: Path) -> None:
    cdk_out = with_budget(tmp_path)
    session.stub("ce").add_client_error("list_cost_allocation_tags", "AccessDeniedException", "not allowed", 400)
    [row] = costs.cost_allocation_tags(context(session, cdk_out))
    assert row.status == FAIL and "ce:ListCostAllocationTags" in row.detail and "management (payer)" in row.detail


def test_the_tag_keys_come_from_the_budgets_filter() -> None:
    from trainctl.common.assembly import Stack

    template = {"Resources": {"B": {"Type": "AWS::Budgets::Budget", "Properties": {"Budget": {
        "BudgetName": "dev-training", "CostFilters": {"TagKeyValue": ["user:team$ml", "not-a-tag", "user:cc$1$2"]}}}}}}
    assert costs.budget_tag_keys([Stack("dev-Runs", template)]) == {"team": "dev-training", "cc": "dev-training"}


def stacks_listed(session: StubbedSession, **statuses: str) -> None:
    session.stub("cloudformation").add_response("describe_stacks", {"Stacks": [
        {"StackName": n, "StackStatus": s, "CreationTime": "2025-01-01T00:00:00Z"}
        for n, s in {"CDKToolkit": "UPDATE_COMPLETE", "other-app": "ROLLBACK_COMPLETE", **statuses}.items()]}, {})


def test_deployed_stacks_a_deploy_can_update_pass(session: StubbedSession, cdk_out: Path) -> None:
    stacks_listed(session, **{"dev-Network": "UPDATE_ROLLBACK_COMPLETE", "dev-Runs": "CREATE_COMPLETE"})
    assert existing.environment_stacks(context(session, cdk_out)) == [
        Result("environment-stacks", PASS, "2 of 3 stacks deployed and updatable, 1 new")]


def test_stacks_a_deploy_cannot_update_fail_with_the_way_out(session: StubbedSession, cdk_out: Path) -> None:
    stacks_listed(session, **{"dev-Network": "ROLLBACK_COMPLETE", "dev-Runs": "UPDATE_ROLLBACK_FAILED",
                              "dev-Storage": "UPDATE_IN_PROGRESS"})
    assert existing.environment_stacks(context(session, cdk_out)) == [
        Result("environment-stacks", FAIL, "dev-Network is ROLLBACK_COMPLETE (its first deploy failed) and can only be "
               "deleted: `aws cloudformation delete-stack --stack-name dev-Network --region us-east-1`, then deploy "
               "again"),
        Result("environment-stacks", FAIL, "dev-Runs is UPDATE_ROLLBACK_FAILED: fix what its events name, then `aws "
               "cloudformation continue-update-rollback --stack-name dev-Runs --region us-east-1`"),
        Result("environment-stacks", FAIL, "dev-Storage is UPDATE_IN_PROGRESS: wait until it ends (CloudFormation "
               "console, stack events), then deploy"),
    ]


def test_a_stack_that_failed_to_delete_fails(session: StubbedSession, cdk_out: Path) -> None:
    stacks_listed(session, **{"dev-Storage": "DELETE_FAILED"})
    assert existing.environment_stacks(context(session, cdk_out)) == [
        Result("environment-stacks", FAIL, "dev-Storage is DELETE_FAILED: read its events in the CloudFormation "
               "console and repair or delete it")]


def test_the_sagemaker_log_group_missing_is_fine(session: StubbedSession, cdk_out: Path) -> None:
    log_groups(session, "/aws/sagemaker/TrainingJobs", "/aws/sagemaker/TrainingJobsOther")
    assert existing.sagemaker_log_group(context(session, cdk_out)) == [
        Result("sagemaker-log-group", PASS, "/aws/sagemaker/TrainingJobs does not exist yet: SageMaker creates it at "
               "the account's first training job; the platform sets nothing on it")]


def test_the_sagemaker_log_group_with_the_accounts_own_key_is_left_alone(session: StubbedSession,
                                                                        cdk_out: Path) -> None:
    """A key no stack of the environment holds (the account's own, or another stack's) is the account's choice."""
    log_groups(session, "/aws/sagemaker/TrainingJobs", "/aws/sagemaker/TrainingJobs", retentionInDays=30,
               kmsKeyId="arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab")
    owned(session, "/aws/sagemaker/TrainingJobs", None)
    owned(session, "1234abcd-12ab-34cd-56ef-1234567890ab", "security-baseline")
    assert existing.sagemaker_log_group(context(session, cdk_out)) == [
        Result("sagemaker-log-group", PASS, "/aws/sagemaker/TrainingJobs exists (30-day retention, a KMS key): the "
               "account's settings, which the platform leaves as they are")]


def test_the_sagemaker_log_group_under_the_environments_key_fails_naming_the_command(session: StubbedSession,
                                                                                     cdk_out: Path) -> None:
    """An Access stack from before issue 34 associated dev's key of its Storage stack: dev's destroy would delete it
    and leave every team's logs written meanwhile unreadable (CloudWatch Logs API reference, AssociateKmsKey)."""
    log_groups(session, "/aws/sagemaker/TrainingJobs", "/aws/sagemaker/TrainingJobs", retentionInDays=30,
               kmsKeyId="arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab")
    owned(session, "/aws/sagemaker/TrainingJobs", None)
    owned(session, "1234abcd-12ab-34cd-56ef-1234567890ab", "dev-Storage")
    assert existing.sagemaker_log_group(context(session, cdk_out)) == [
        Result("sagemaker-log-group", FAIL, "/aws/sagemaker/TrainingJobs, every team's training logs of the account, "
               "is encrypted with dev's key of stack dev-Storage (set before issue 34), which a destroy of dev would "
               "take away: `aws logs disassociate-kms-key --log-group-name /aws/sagemaker/TrainingJobs`, and keep the "
               "key until the events it encrypted expire (docs/teardown.md)")]


def test_a_key_of_no_stack_is_the_accounts(session: StubbedSession, cdk_out: Path) -> None:
    log_groups(session, "/aws/sagemaker/TrainingJobs", "/aws/sagemaker/TrainingJobs",
               kmsKeyId="arn:aws:kms:us-east-1:111111111111:key/k")
    owned(session, "/aws/sagemaker/TrainingJobs", None)
    owned(session, "k", None)
    (row,) = existing.sagemaker_log_group(context(session, cdk_out))
    assert row == Result("sagemaker-log-group", PASS, "/aws/sagemaker/TrainingJobs exists (no retention (never "
                         "expires), a KMS key): the account's settings, which the platform leaves as they are")


def test_a_sagemaker_log_group_an_old_access_stack_owns_is_noted(session: StubbedSession, cdk_out: Path) -> None:
    log_groups(session, "/aws/sagemaker/TrainingJobs", "/aws/sagemaker/TrainingJobs")
    owned(session, "/aws/sagemaker/TrainingJobs", "dev-Access")
    (row,) = existing.sagemaker_log_group(context(session, cdk_out))
    assert row.status == PASS
    assert row.detail.startswith("/aws/sagemaker/TrainingJobs is owned by stack dev-Access (deployed before the Access "
                                 "stack stopped owning it): with removal_policy destroy the next deploy deletes it")


def test_the_sagemaker_log_group_against_moto(aws: None, cdk_out: Path) -> None:
    """The group as moto's CloudWatch Logs describes it (the other CLI tests' jobs may have made it: left as found)."""
    logs = boto3.client("logs", region_name="us-east-1")
    group = "/aws/sagemaker/TrainingJobs"
    found = [g for g in logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"] if g["logGroupName"] == group]
    if not found:
        logs.create_log_group(logGroupName=group)
    logs.put_retention_policy(logGroupName=group, retentionInDays=30)
    session = StubbedSession(moto=("logs",))
    owned(session, group, None)
    try:
        (row,) = existing.sagemaker_log_group(context(session, cdk_out))
    finally:
        if not found:
            logs.delete_log_group(logGroupName=group)
        elif "retentionInDays" in found[0]:
            logs.put_retention_policy(logGroupName=group, retentionInDays=found[0]["retentionInDays"])
        else:
            logs.delete_retention_policy(logGroupName=group)
    session.verify()
    assert row == Result("sagemaker-log-group", PASS, "/aws/sagemaker/TrainingJobs exists (30-day retention, no KMS "
                         "key): the account's settings, which the platform leaves as they are")


# ------------------------------------------------------------------------------------------------------ docker


@pytest.fixture
def images() -> dict[str, Any]:
    return project_images(PROJECT, {"dev": DEV})


def test_docker_missing_from_path_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session: StubbedSession,
                                        cdk_out: Path, images: dict[str, Any]) -> None:
    monkeypatch.setenv("PATH", str(fake_docker(tmp_path / "bin", "exit 0", name="not-docker")))
    monkeypatch.delenv("CDK_DOCKER", raising=False)
    assert docker.docker(context(session, cdk_out, images=images)) == [
        Result("docker", FAIL, "no `docker` on PATH: `cdk deploy` builds the training image on this machine; install "
               "Docker (or set CDK_DOCKER to a compatible CLI)")]


def test_docker_without_its_daemon_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session: StubbedSession,
                                         cdk_out: Path, images: dict[str, Any]) -> None:
    said = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
    monkeypatch.setenv("PATH", str(fake_docker(tmp_path / "bin", f"echo '{said}' >&2; exit 1")))
    monkeypatch.delenv("CDK_DOCKER", raising=False)
    assert docker.docker(context(session, cdk_out, images=images)) == [
        Result("docker", FAIL, f"`docker version` failed ({said}): start the Docker daemon")]


def test_docker_that_answers_passes_and_names_the_login(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                        session: StubbedSession, cdk_out: Path,
                                                        images: dict[str, Any]) -> None:
    monkeypatch.setenv("PATH", str(fake_docker(tmp_path / "bin", 'test "$1 $2 $3" = "version --format '
                                               '{{.Server.Version}}" && echo 27.3.1')))
    monkeypatch.delenv("CDK_DOCKER", raising=False)
    assert docker.docker(context(session, cdk_out, images=images)) == [
        Result("docker", PASS, f"Docker server 27.3.1; before the deploy, log in to the base image's registry (the "
               f"token lasts 12 hours): `{LOGIN}`")]


def test_cdk_docker_names_the_program(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session: StubbedSession,
                                      cdk_out: Path, images: dict[str, Any]) -> None:
    monkeypatch.setenv("PATH", str(fake_docker(tmp_path / "bin", "echo 5.2.0", name="podman")))
    monkeypatch.setenv("CDK_DOCKER", "podman")
    (row,) = docker.docker(context(session, cdk_out, images=images))
    assert row.status == PASS and row.detail.startswith("Docker server 5.2.0; ")


def test_docker_that_hangs_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session: StubbedSession,
                                 cdk_out: Path, images: dict[str, Any]) -> None:
    monkeypatch.setenv("PATH", str(fake_docker(tmp_path / "bin", f"exec {shutil.which('sleep')} 5")))
    monkeypatch.delenv("CDK_DOCKER", raising=False)
    monkeypatch.setattr(docker, "TIMEOUT_S", 0.2)
    assert docker.docker(context(session, cdk_out, images=images)) == [
        Result("docker", FAIL, "`docker version` did not answer in 0.2 s: start or restart the Docker daemon")]


def test_without_an_image_to_build_docker_is_not_needed(session: StubbedSession, cdk_out: Path) -> None:
    assert docker.docker(context(session, cdk_out)) == [
        Result("docker", PASS, "the project builds no image (training-platform:images is empty): Docker not needed")]


# ---------------------------------------------------------------------------------------------- training quotas


def compiled(name: str, instance_type: str, count: int, *, spot: bool = False, fallbacks: tuple[str, ...] = (),
             ceiling: int | None = None, plan: str | None = None) -> Any:
    """A workload of dev (the shipped gpt-smddp with another cluster), as the pipeline hands it over."""
    base_workload = {w.name: w for w in loaded().workloads("dev")}["gpt-smddp"]
    workload = replace(base_workload, name=name,
                       run=replace(base_workload.run, use_spot_instances=spot, max_instance_count=ceiling),
                       compute=Compute(instance_type=instance_type, instance_count=count, training_plan=plan),
                       capacity_retry=CapacityRetry(fallback_instance_types=fallbacks))
    return SimpleNamespace(name=name, workload=workload)


def test_quotas_that_cover_every_workload_pass(session: StubbedSession, cdk_out: Path) -> None:
    stub_quotas(session, "sagemaker", [quota(P4D, "L-P4D", 0), quota("ml.g5.2xlarge for spot training job usage",
                                                                      "L-G5S", 4)],
                [quota(P4D, "L-P4D", 4)])
    ctx = context(session, cdk_out, compiled=[compiled("big", "ml.p4d.24xlarge", 2, ceiling=4),
                                              compiled("small", "ml.g5.2xlarge", 1, spot=True)])
    assert quotas.training_quotas(ctx) == [Result("training-quotas", PASS, "ml.g5.2xlarge for spot training job "
                                                  "usage 4 >= 1; ml.p4d.24xlarge for training job usage 4 >= 4")]


def test_a_quota_too_small_names_the_shortfall_and_the_request(session: StubbedSession, cdk_out: Path) -> None:
    stub_quotas(session, "sagemaker", [quota(P4D, "L-P4D", 0)], [quota(P4D, "L-P4D", 1)])
    ctx = context(session, cdk_out, compiled=[compiled("gpt-smddp", "ml.p4d.24xlarge", 2)])
    assert quotas.training_quotas(ctx) == [
        Result("training-quotas", FAIL, "gpt-smddp needs 2 x 'ml.p4d.24xlarge for training job usage', the quota is 1 "
               "(short by 1): `aws service-quotas request-service-quota-increase --service-code sagemaker --quota-code "
               "L-P4D --desired-value 2 --region us-east-1`")]


def test_spot_and_fallback_types_need_their_own_quotas(session: StubbedSession, cdk_out: Path) -> None:
    stub_quotas(session, "sagemaker", [quota("ml.p5.48xlarge for spot training job usage", "L-P5S", 2),
                                       quota("ml.p4de.24xlarge for spot training job usage", "L-P4DES", 0)], [])
    ctx = context(session, cdk_out, compiled=[compiled("fsdp", "ml.p5.48xlarge", 2, spot=True,
                                                       fallbacks=("ml.p4de.24xlarge", "ml.p5e.48xlarge"))])
    assert quotas.training_quotas(ctx) == [
        Result("training-quotas", FAIL, "fsdp needs 2 x 'ml.p4de.24xlarge for spot training job usage', the quota is 0 "
               "(short by 2): `aws service-quotas request-service-quota-increase --service-code sagemaker --quota-code "
               "L-P4DES --desired-value 2 --region us-east-1`"),
        Result("training-quotas", FAIL, "fsdp needs 2 x 'ml.p5e.48xlarge for spot training job usage', which Service "
               "Quotas does not list in us-east-1: the type is not offered for training there; pick another"),
    ]


def test_workloads_on_a_training_plan_are_not_counted(session: StubbedSession, cdk_out: Path) -> None:
    ctx = context(session, cdk_out, compiled=[compiled("reserved", "ml.p5.48xlarge", 2, plan="my-plan")])
    assert quotas.training_quotas(ctx) == [
        Result("training-quotas", SKIP, "no workload of dev runs on on-demand or spot capacity")]


def test_workloads_that_do_not_compile_fail_the_checks_that_need_them(session: StubbedSession, cdk_out: Path) -> None:
    ctx = context(session, cdk_out, compile_error="1 problem(s), first: x.yaml: instance_type: unknown")
    expected = "the workloads do not compile (1 problem(s), first: x.yaml: instance_type: unknown); run `trainctl " \
               "validate`"
    assert quotas.training_quotas(ctx) == [Result("training-quotas", FAIL, expected)]
    assert definitions.definitions(ctx) == [Result("definitions", FAIL, expected)]


# ------------------------------------------------------------------------------------------- VPC and FSx limits

VPC_QUOTAS = [quota("VPCs per Region", "L-F678F1CE", 5, "vpc"), quota("Subnets per VPC", "L-407747CB", 200, "vpc"),
              quota("Interface VPC endpoints per VPC", "L-29B6F2EB", 50, "vpc")]


def vpcs(session: StubbedSession, count: int) -> None:
    session.stub("ec2").add_response("describe_vpcs", {"Vpcs": [{"VpcId": f"vpc-{n}"} for n in range(count)]}, {})


def test_a_new_vpc_within_the_quotas_passes(session: StubbedSession, cdk_out: Path) -> None:
    stub_quotas(session, "vpc", VPC_QUOTAS, [])
    vpcs(session, 2)
    no_stack(session, "dev-Network")
    assert quotas.network_limits(context(session, cdk_out)) == [
        Result("network-limits", PASS, "2 VPCs + 1 new, 1 subnets and 2 interface endpoints per VPC: within the "
               "account's VPC quotas")]


def test_a_new_vpc_beyond_the_region_quota_fails(session: StubbedSession, cdk_out: Path) -> None:
    stub_quotas(session, "vpc", VPC_QUOTAS, [quota("Interface VPC endpoints per VPC", "L-29B6F2EB", 1, "vpc")])
    vpcs(session, 5)
    no_stack(session, "dev-Network")
    assert quotas.network_limits(context(session, cdk_out)) == [
        Result("network-limits", FAIL, "5 existing VPCs + 1 new needs 6, the quota 'VPCs per Region' is 5 (quota code "
               "L-F678F1CE); request an increase in Service Quotas (service vpc) or remove unused VPCs"),
        Result("network-limits", FAIL, "dev-Network's VPC needs 2, the quota 'Interface VPC endpoints per VPC' is 1 "
               "(quota code L-29B6F2EB); request an increase in Service Quotas (service vpc) or remove unused VPCs"),
    ]


def test_a_deployed_network_adds_no_vpc(session: StubbedSession, cdk_out: Path) -> None:
    stub_quotas(session, "vpc", VPC_QUOTAS, [])
    vpcs(session, 5)
    session.stub("cloudformation").add_response("describe_stacks", stack(), {"StackName": "dev-Network"})
    (row,) = quotas.network_limits(context(session, cdk_out))
    assert row.status == PASS and row.detail.startswith("5 VPCs + 0 new, ")


LUSTRE_SCRATCH = "Lustre Scratch SSD storage capacity (GiB)"
FSX_QUOTAS = [quota(LUSTRE_SCRATCH, "L-SCRATCH", 3600, "fsx"), quota("Lustre persistent SSD storage capacity (GiB)",
                                                                     "L-PERSIST", 0, "fsx"),
              quota("Lustre HDD storage capacity (GiB)", "L-HDD", 0, "fsx"), quota("File systems", "L-FS", 0, "fsx")]


def file_systems(session: StubbedSession, *systems: tuple[int, str | None]) -> None:
    session.stub("fsx").add_response("describe_file_systems", {"FileSystems": [
        {"FileSystemId": f"fs-0123456789abcdef{n}", "FileSystemType": "LUSTRE", "StorageCapacity": size,
         "Tags": [{"Key": "aws:cloudformation:stack-name", "Value": owner or "none"}]}
        for n, (size, owner) in enumerate(systems)] + [{"FileSystemId": "fs-0123456789abcdefw",
                                                        "FileSystemType": "WINDOWS", "StorageCapacity": 9999}]}, {})


def test_the_file_system_within_the_lustre_quota_passes(session: StubbedSession, cdk_out: Path) -> None:
    stub_quotas(session, "fsx", FSX_QUOTAS, [])
    file_systems(session, (1200, "other"), (1200, "dev-Storage"))  # dev's own, from an earlier deploy: counted once
    assert quotas.fsx_limits(context(session, cdk_out)) == [
        Result("fsx-limits", PASS, "1200 GiB SCRATCH_2 + 1200 GiB in use within 'Lustre Scratch SSD storage capacity "
               "(GiB)' (3600 GiB)")]


def test_the_file_system_beyond_the_lustre_quota_fails(session: StubbedSession, cdk_out: Path) -> None:
    stub_quotas(session, "fsx", FSX_QUOTAS, [])
    file_systems(session, (2400, None), (1200, "prod-Storage"))
    assert quotas.fsx_limits(context(session, cdk_out)) == [
        Result("fsx-limits", FAIL, "dev's 1200 GiB SCRATCH_2 file system + 3600 GiB of other Lustre file systems "
               "exceeds 'Lustre Scratch SSD storage capacity (GiB)' (3600 GiB): delete unused file systems or `aws "
               "service-quotas request-service-quota-increase --service-code fsx --quota-code L-SCRATCH "
               "--desired-value 4800 --region us-east-1`")]


def test_no_lustre_quota_listed_skips(session: StubbedSession, cdk_out: Path) -> None:
    stub_quotas(session, "fsx", [quota("File systems", "L-FS", 0, "fsx")], [])
    assert quotas.fsx_limits(context(session, cdk_out)) == [
        Result("fsx-limits", SKIP, "Service Quotas lists no FSx for Lustre storage-capacity quota in us-east-1 (FSx "
               "then refuses only at deploy)")]


def test_an_environment_without_a_file_system_skips(session: StubbedSession, cdk_out: Path) -> None:
    ctx = replace(context(session, cdk_out), env=replace(DEV, fsx=None))
    assert quotas.fsx_limits(ctx) == [Result("fsx-limits", SKIP, "dev has no file system (cdk.json fsx)")]


# ------------------------------------------------------------------------------------------------- definitions


@pytest.fixture(scope="module")
def smddp() -> Any:
    return compile_one(PROJECT, "gpt-smddp", "dev")


def test_the_definition_sent_has_every_deploy_time_value(session: StubbedSession, cdk_out: Path, smddp: Any) -> None:
    text = definitions.deployable_text(smddp, context(session, cdk_out))
    assert "${" not in text
    assert '"arn:aws:sns:us-east-1:111111111111:dev-training-runs"' in text
    assert "subnet-0123456789abcdef0" in text


def validate(session: StubbedSession, result: str, *diagnostics: dict[str, str]) -> None:
    session.stub("stepfunctions").add_response("validate_state_machine_definition", {
        "result": result, "diagnostics": list(diagnostics)})


def test_an_accepted_definition_passes(session: StubbedSession, cdk_out: Path, smddp: Any) -> None:
    validate(session, "OK")
    assert definitions.definitions(context(session, cdk_out, compiled=[smddp])) == [
        Result("definitions", PASS, "1 of 1 accepted: gpt-smddp")]


def test_warnings_are_shown_on_an_accepted_definition(session: StubbedSession, cdk_out: Path, smddp: Any) -> None:
    validate(session, "OK", {"severity": "WARNING", "code": "UNREACHABLE_STATE", "message": "never reached",
                             "location": "/States/Old"})
    assert definitions.definitions(context(session, cdk_out, compiled=[smddp])) == [
        Result("definitions", PASS, "1 of 1 accepted: gpt-smddp (WARNING UNREACHABLE_STATE at /States/Old: never "
               "reached)")]


def test_each_diagnostic_of_a_refused_definition_is_a_failed_row(session: StubbedSession, cdk_out: Path,
                                                                 smddp: Any) -> None:
    validate(session, "FAIL", {"severity": "ERROR", "code": "SCHEMA_VALIDATION_FAILED",
                               "message": 'The field "RetryStrategy" is not supported by Step Functions',
                               "location": "/States/Train/Parameters"},
             {"severity": "ERROR", "code": "SCHEMA_VALIDATION_FAILED", "message": "bad"})
    assert definitions.definitions(context(session, cdk_out, compiled=[smddp])) == [
        Result("definitions", FAIL, 'gpt-smddp: ERROR SCHEMA_VALIDATION_FAILED at /States/Train/Parameters: The field '
               '"RetryStrategy" is not supported by Step Functions; the deploy would fail on it: fix the spec, or '
               "report it against compiler/state_machine/ if the spec is right"),
        Result("definitions", FAIL, "gpt-smddp: ERROR SCHEMA_VALIDATION_FAILED: bad; the deploy would fail on it: fix "
               "the spec, or report it against compiler/state_machine/ if the spec is right"),
    ]


def describe_missing(session: StubbedSession, code: str, message: str = "Requested resource not found.") -> None:
    session.stub("sagemaker").add_client_error("describe_training_job", code, message, 400, expected_params={
        "TrainingJobName": "trainctl-preflight-no-such-job"})


def test_a_missing_job_answered_resource_not_found(session: StubbedSession, cdk_out: Path) -> None:
    describe_missing(session, "ResourceNotFound", "Training job x does not exist.")
    assert definitions.missing_training_job(context(session, cdk_out)) == [
        Result("missing-training-job", PASS, "DescribeTrainingJob of a missing job answers ResourceNotFound (Training "
               "job x does not exist.): a run whose job was never created ends as not created, with SageMaker's "
               "message")]


def test_a_missing_job_answered_as_sagemaker_does_reads_as_not_created(session: StubbedSession, cdk_out: Path) -> None:
    # What the service is reported to send (aws/aws-sdk#165, boto/boto3#2808), and what the definitions read.
    describe_missing(session, "ValidationException")
    assert definitions.missing_training_job(context(session, cdk_out)) == [
        Result("missing-training-job", PASS, "DescribeTrainingJob of a missing job answers ValidationException "
               "(Requested resource not found.): a run whose job was never created ends as not created, with "
               "SageMaker's message")]


def test_another_validation_message_for_a_missing_job_is_shown(session: StubbedSession, cdk_out: Path) -> None:
    describe_missing(session, "ValidationException", "Could not find training job.")
    assert definitions.missing_training_job(context(session, cdk_out)) == [
        Result("missing-training-job", PASS, "DescribeTrainingJob of a missing job answers ValidationException "
               "without \"Requested resource not found\" (Could not find training job.): a run whose job was never "
               "created stops it by name and ends Unknown (\"unknown, stopped\") instead of not created")]


def test_another_answer_for_a_missing_job_is_a_failed_row(session: StubbedSession, cdk_out: Path) -> None:
    describe_missing(session, "AccessDeniedException", "not allowed")
    (row,) = preflight.run_check(definitions.missing_training_job, context(session, cdk_out))
    assert row.status == FAIL and row.detail.startswith("AWS refused or failed: An error occurred "
                                                        "(AccessDeniedException) when calling the DescribeTrainingJob")


# ------------------------------------------------------------------------------------------------ the command


def test_an_aws_error_in_a_check_is_a_failed_row(session: StubbedSession, cdk_out: Path) -> None:
    session.stub("logs").add_client_error("describe_log_groups", "AccessDeniedException", "no", 400)
    assert preflight.run_check(existing.sagemaker_log_group, context(session, cdk_out)) == [
        Result("sagemaker-log-group", FAIL, "AWS refused or failed: An error occurred (AccessDeniedException) when "
               "calling the DescribeLogGroups operation: no; give the credentials the read-only actions README "
               '"Preflight" lists')]


def test_aws_checks_skip_without_the_accounts_credentials(session: StubbedSession, cdk_out: Path) -> None:
    assert preflight.run_check(account.cdk_bootstrap, context(session, cdk_out, credentials_ok=False)) == [
        Result("cdk-bootstrap", SKIP, "needs credentials of the environment's account (see credentials)")]


def test_the_table_keeps_each_row_one_row() -> None:
    assert preflight.table([Result("docker", PASS, "a | b\nc")]) == (
        "| Check | Result | Detail / fix |\n| --- | --- | --- |\n| docker | PASS | a \\| b c |")


def everything_passes(session: StubbedSession) -> None:
    """The answers of an account ready for dev, in the order the checks ask."""
    session.stub("sts").add_response("get_caller_identity", IDENTITY)
    session.stub("cloudformation").add_response("describe_stacks", stack(), {"StackName": "CDKToolkit"})
    session.stub("cloudformation").add_response("describe_stacks", bootstrap_outputs(), {"StackName": "CDKToolkit"})
    repository(session, "IMMUTABLE")
    log_groups(session, RUN_LOGS)
    session.stub("sns").add_client_error("get_topic_attributes", "NotFound", "Topic does not exist", 404)
    stacks_listed(session)
    log_groups(session, "/aws/sagemaker/TrainingJobs")
    stub_quotas(session, "sagemaker", [quota(name, f"L-{n}", 8) for n, name in enumerate(
        [P4D, "ml.p5.48xlarge for training job usage", "ml.p5e.48xlarge for training job usage",
         "ml.p4de.24xlarge for training job usage", "ml.g5.2xlarge for spot training job usage",
         "ml.c5.xlarge for training job usage", "ml.g4dn.8xlarge for training job usage",
         "ml.m5.xlarge for training job usage"])], [])
    stub_quotas(session, "vpc", VPC_QUOTAS, [])
    vpcs(session, 1)
    no_stack(session, "dev-Network")
    stub_quotas(session, "fsx", FSX_QUOTAS, [])
    file_systems(session)
    for _ in range(10):  # dev's ten shipped workloads
        validate(session, "OK")
    describe_missing(session, "ResourceNotFound")


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], session: StubbedSession,
            cdk_out: Path, docker_script: str, tmp_path: Path) -> tuple[int, str, str]:
    monkeypatch.setattr(base.Aws, "session", lambda self: session)
    monkeypatch.setattr(base.Aws, "configured_region", lambda self: None)
    monkeypatch.setenv("PATH", str(fake_docker(tmp_path / "bin", docker_script)))
    monkeypatch.delenv("CDK_DOCKER", raising=False)
    capsys.readouterr()
    code = main(["--project-dir", str(ROOT), "preflight", "--env", "dev", "--cdk-out", str(cdk_out)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_ready_account_exits_0_with_one_table(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                session: StubbedSession, cdk_out: Path, tmp_path: Path) -> None:
    everything_passes(session)
    code, out, err = run_cli(monkeypatch, capsys, session, cdk_out, "echo 27.3.1", tmp_path)
    lines = out.splitlines()
    assert code == 0
    assert lines[:2] == ["| Check | Result | Detail / fix |", "| --- | --- | --- |"]
    assert [line.split(" | ")[:2] for line in lines[2:]] == [
        ["| credentials", "PASS"], ["| cdk-bootstrap", "PASS"], ["| bootstrap-image-repository", "PASS"],
        ["| existing-resources", "PASS"], ["| environment-stacks", "PASS"],
        ["| sagemaker-log-group", "PASS"], ["| docker", "PASS"], ["| training-quotas", "PASS"],
        ["| network-limits", "PASS"], ["| fsx-limits", "PASS"], ["| definitions", "PASS"],
        ["| missing-training-job", "PASS"], ["| cost-allocation-tags", "PASS"]]
    assert lines[-3] == ("| definitions | PASS | 10 of 10 accepted: gpt-finetune-single, gpt-horovod-mpi, gpt-smddp, "
                         "gpt-smp-v1, gpt-torchrun-fsx, linear-learner-tabular, platform-smoke, platform-smoke-gpu, "
                         "sklearn-tabular, xgboost-tabular |")
    assert err == "preflight dev: 13 pass, 0 fail, 0 skip\n"
    assert session.called == {  # read-only and free: Describe, List, Get, Validate
        "sts:GetCallerIdentity", "cloudformation:DescribeStacks", "ecr:DescribeRepositories", "logs:DescribeLogGroups",
        "sns:GetTopicAttributes", "service-quotas:ListAWSDefaultServiceQuotas", "service-quotas:ListServiceQuotas",
        "ec2:DescribeVpcs", "fsx:DescribeFileSystems", "stepfunctions:ValidateStateMachineDefinition",
        "sagemaker:DescribeTrainingJob"}


def test_one_failed_check_exits_1(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                  session: StubbedSession, cdk_out: Path, tmp_path: Path) -> None:
    everything_passes(session)
    code, out, err = run_cli(monkeypatch, capsys, session, cdk_out, "echo 'daemon down' >&2; exit 1", tmp_path)
    assert code == 1
    assert "| docker | FAIL | `docker version` failed (daemon down): start the Docker daemon |" in out.splitlines()
    assert err == "preflight dev: 12 pass, 1 fail, 0 skip\n"


def test_no_credentials_exit_1_without_a_traceback(no_aws_config: None, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], cdk_out: Path,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(fake_docker(tmp_path / "bin", "echo 27.3.1")))
    capsys.readouterr()
    code = main(["--project-dir", str(ROOT), "preflight", "--env", "dev", "--cdk-out", str(cdk_out)])
    out, err = capsys.readouterr()
    assert code == 1
    assert [line.split(" | ")[:2] for line in out.splitlines()[2:]] == [
        ["| credentials", "FAIL"], ["| cdk-bootstrap", "SKIP"], ["| bootstrap-image-repository", "SKIP"],
        ["| existing-resources", "SKIP"], ["| environment-stacks", "SKIP"],
        ["| sagemaker-log-group", "SKIP"], ["| docker", "PASS"], ["| training-quotas", "SKIP"],
        ["| network-limits", "SKIP"], ["| fsx-limits", "SKIP"], ["| definitions", "SKIP"],
        ["| missing-training-job", "SKIP"], ["| cost-allocation-tags", "SKIP"]]
    assert "Traceback" not in out + err


def test_an_unknown_environment_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(ROOT), "preflight", "--env", "staging"]) == 2
    assert capsys.readouterr().err == "unknown environment 'staging'; cdk.json declares dev, prod\n"
