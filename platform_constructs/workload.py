"""One training workload in one environment: its execution role, its state machine, and the state machine's role.

Each workload touches only what is its own. The execution role reads exactly the data prefixes its inputs name
(and the allowed external buckets it names), writes only `<workload>/` of the output and checkpoint buckets, pulls
only its own image, reads only its own code bundle; SageMaker may assume it only for this workload's jobs. Its jobs
run in a security group of their own (EFA's all-traffic self rules then reach only this workload's nodes), which
the role alone may put network interfaces in. The
state machine's role may create, describe, stop and tag only this workload's jobs and pass only this role, and only
Step Functions acting for this state machine may assume it.

The state machine is declared as every state machine of the platform is (`platform_constructs/state_machines.py`: an
L1 with the compiler's pure-Python definition; L2 constructs cost ~25 ms more per workload at 1,000 workloads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from constructs import Construct

from compiler import state_machine as sm
from compiler.compilation.describe import METADATA_KEY
from compiler.compilation.images import ecr_repository_arn
from compiler.facts import run_metrics, secret_refs
from compiler.facts.placeholders import EXECUTION_ROLE_ARN, RUN_ID_LENGTH, TRAINING_SECURITY_GROUP_ID
from compiler.inputs.environments import TRAINING_LOG_GROUP
from compiler.inputs.model import ProjectImage
from compiler.pipeline import CompiledWorkload
from platform_constructs.nag import acknowledge_required_wildcards
from platform_constructs.network import TrainingNetwork
from platform_constructs.source_bundle import SourceBundle
from platform_constructs.state_machines import logged_state_machine, state_machine_arn
from platform_constructs.training_jobs import training_log_group_arns
from platform_constructs.trust import state_machine_principal

OWN_LOG_STREAMS_REASON = (
    "SageMaker names each job's log streams `<job name>/algo-<n>-<epoch>` at run time; the pattern is this workload's "
    "job names exactly (`?` one character each: no other workload's name matches) followed by the host's part.")
READ_JOB_LOGS_REASON = (
    "logs:FilterLogEvents authorizes against the log group only (Service Authorization Reference, CloudWatch Logs): "
    "the /aws/sagemaker/TrainingJobs group in the two forms IAM names a group by. Only a workload with a "
    "stall_watchdog gets it; its definition asks for its own jobs' streams (the job name as the stream prefix).")


def job_names(base_job_name: str, relaunches: int) -> list[str]:
    """IAM patterns that match exactly this workload's job names, `<base>-<12 hex>-<attempt>`.

    `?` matches one character, so another workload's longer or shorter base name never matches.
    """
    return [f"{base_job_name}-{'?' * RUN_ID_LENGTH}-{'?' * digits}" for digits in range(1, len(str(relaunches)) + 1)]


def job_name_patterns(base_job_name: str, relaunches: int) -> list[str]:
    """Training-job ARN suffixes of this workload's jobs (SageMaker writes job ARNs in lowercase)."""
    return [f"training-job/{name}" for name in job_names(base_job_name.lower(), relaunches)]


def log_stream_patterns(base_job_name: str, relaunches: int) -> list[str]:
    """Resource names (after `log-group:`) of this workload's jobs' streams in /aws/sagemaker/TrainingJobs:
    `<job name>/algo-<n>-<epoch>`, the job name as the request gave it."""
    return [f"{TRAINING_LOG_GROUP}:log-stream:{name}/*" for name in job_names(base_job_name, relaunches)]


@dataclass(frozen=True)
class WorkloadPlatform:
    """What a workload uses of its environment's platform (cross-stack references)."""

    data_bucket_arn: str
    output_bucket_arn: str
    checkpoint_bucket_arn: str
    key_arn: str  # the environment's key
    image_repositories: dict[str, str]  # project repository name -> repository ARN
    shared_execution_policies: Sequence[iam.IManagedPolicy]
    shared_state_machine_policies: Sequence[iam.IManagedPolicy]
    run_log_group_arn: str
    network: TrainingNetwork  # makes the workload's own job security group


Statement = dict[str, Any]  # one statement as IAM's JSON policy language writes it


def allow(*, sid: str, actions: list[str], resources: list[str], conditions: Mapping[str, Any] | None = None) -> Statement:
    """An Allow statement of a workload's own policies, as IAM's JSON writes it."""
    return {"Sid": sid, "Effect": "Allow", "Action": actions, "Resource": resources,
            **({"Condition": dict(conditions)} if conditions else {})}


def document(statements: list[Statement]) -> iam.PolicyDocument:
    """A policy's statements, given to the CDK in one call (`PolicyDocument.from_json`, the statements it makes are
    those `PolicyStatement` would): a workload's policies hold a dozen, and each construct call costs a round trip
    to the CDK's JavaScript."""
    return iam.PolicyDocument.from_json({"Version": "2012-10-17", "Statement": statements})


def objects(bucket_arn: str, key_pattern: str) -> str:
    """The ARN of a bucket's objects whose keys match the pattern (`arn:<partition>:s3:::<bucket>/<key>`, as the
    CDK's `arn_for_objects` writes it)."""
    return f"{bucket_arn}/{key_pattern}"


class TrainingWorkload(Construct):
    """The workload's execution role, its jobs' security group, its state machine and the state machine's role."""

    def __init__(self, scope: Construct, construct_id: str, *, compiled: CompiledWorkload, platform: WorkloadPlatform,
                 source: SourceBundle | None, substitutions: dict[str, str]) -> None:
        """`compiled`: the workload as the pipeline compiled it for this environment (its request, definition,
        deploy-time names, image and summary, each computed once there)."""
        super().__init__(scope, construct_id)
        workload = self.workload = compiled.workload
        self.environment = compiled.environment
        stack = cdk.Stack.of(self)
        self.job_arns = [stack.format_arn(service="sagemaker", resource=p.split("/", 1)[0], resource_name=p.split("/", 1)[1])
                         for p in job_name_patterns(workload.base_job_name, workload.max_relaunches)]
        self.security_group: ec2.ISecurityGroup = platform.network.job_security_group(
            self, "JobSecurityGroup", workload=workload.name, lustre=workload.uses_fsx)
        self.execution_role = self._execution_role(platform, source, compiled.image)
        self.state_machine_name = sm.state_machine_name(compiled.environment.name, workload.name)
        self.state_machine_arn = state_machine_arn(self, self.state_machine_name)
        self.role = self._state_machine_role(platform)
        values = {**substitutions, EXECUTION_ROLE_ARN: self.execution_role.role_arn,
                  TRAINING_SECURITY_GROUP_ID: self.security_group.security_group_id}
        self.state_machine = logged_state_machine(
            self, "StateMachine", name=self.state_machine_name, role_arn=self.role.role_arn,
            definition=compiled.definition, log_group_arn=platform.run_log_group_arn,
            substitutions={k: values[k] for k in sorted(compiled.deploy_time_names)})
        self.state_machine.node.add_dependency(self.role)
        # For reviews of a change (trainctl review) and the summary: what runs, on what, at what price.
        self.state_machine.cfn_options.metadata = {METADATA_KEY: compiled.summary}

    # ------------------------------------------------------------------------------------------------- roles

    def _data_buckets(self, platform: WorkloadPlatform) -> list[tuple[str, str, list[str]]]:
        """(statement name, bucket ARN, key prefixes) of each bucket the workload's inputs (and model_uri) read:
        `Data` for the environment's data bucket, `External<n>` for a bucket of its own."""
        by_bucket: dict[str | None, list[str]] = {}
        for _, location in self.workload.s3_reads:
            by_bucket.setdefault(location.bucket, []).append(location.key_prefix)
        return [("Data" if bucket is None else f"External{index}",
                 platform.data_bucket_arn if bucket is None else f"arn:{cdk.Aws.PARTITION}:s3:::{bucket}", prefixes)
                for index, (bucket, prefixes) in enumerate(sorted(by_bucket.items(), key=lambda i: i[0] or ""))]

    def _data_statements(self, buckets: list[tuple[str, str, list[str]]]) -> list[Statement]:
        """Read exactly the S3 prefixes the workload's inputs (and model_uri) name."""
        statements = []
        for sid, arn, prefixes in buckets:
            statements += [
                allow(sid=f"List{sid}", actions=["s3:ListBucket"], resources=[arn],
                      conditions={"StringLike": {"s3:prefix": sorted({f"{p}*" for p in prefixes})}}),
                allow(sid=f"Read{sid}", actions=["s3:GetObject"],
                      resources=sorted({f"{arn}/{p}*" for p in prefixes})),
            ]
        return statements

    def _own_statements(self, platform: WorkloadPlatform, buckets: list[tuple[str, str, list[str]]],
                        source: SourceBundle | None, image_uri: str) -> list[Statement]:
        w = self.workload
        prefix = f"{w.name}/"
        statements = self._data_statements(buckets)
        statements += [
            allow(sid="ListOwnOutputs", actions=["s3:ListBucket"],
                  resources=[platform.output_bucket_arn, platform.checkpoint_bucket_arn],
                  conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}}),
            allow(sid="WriteOutput", actions=["s3:PutObject", "s3:AbortMultipartUpload"],
                  resources=[objects(platform.output_bucket_arn, f"{prefix}*")]),
            allow(sid="UseKey", actions=["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey",
                                        "kms:DescribeKey"], resources=[platform.key_arn]),
            allow(sid="EncryptJobVolumes", actions=["kms:CreateGrant"], resources=[platform.key_arn],
                  conditions={"Bool": {"kms:GrantIsForAWSResource": "true"}}),
            # The shared CreateJobInterfaces policy grants the interface and the subnet; the group is this role's own.
            allow(sid="OwnJobSecurityGroup", actions=["ec2:CreateNetworkInterface"],
                  resources=[cdk.Stack.of(self).format_arn(
                      service="ec2", resource="security-group",
                      resource_name=self.security_group.security_group_id)]),
        ]
        if w.checkpoints:
            statements.append(allow(
                sid="SyncCheckpoints", actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
                resources=[objects(platform.checkpoint_bucket_arn, f"{prefix}*")]))
        repository = (platform.image_repositories.get(w.image.repository) if isinstance(w.image, ProjectImage)
                      else ecr_repository_arn(image_uri))
        if repository:
            statements.append(allow(
                sid="PullImage", actions=["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
                resources=[repository]))
        if source is not None:
            statements.append(allow(
                sid="ReadCode", actions=["s3:GetObject"],
                resources=[objects(source.bucket_arn, source.object_key)]))
            if w.enable_network_isolation:
                # Under network isolation SageMaker downloads the code as the `code` channel, an S3Prefix of the
                # bundle's key, and lists that prefix first (ListObjectsV2 needs s3:ListBucket): this key only.
                statements.append(allow(
                    sid="ListCode", actions=["s3:ListBucket"], resources=[source.bucket_arn],
                    conditions={"StringEquals": {"s3:prefix": source.object_key}}))
        statements.append(allow(
            sid="WriteOwnLogStreams", actions=["logs:CreateLogStream", "logs:PutLogEvents"],
            resources=[cdk.Stack.of(self).format_arn(service="logs", resource="log-group", resource_name=name,
                                                     arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME)
                       for name in log_stream_patterns(w.base_job_name, w.max_relaunches)]))
        statements += self._secret_statements()
        keys = sorted({k for k in (w.output_kms_key, w.compute.volume_kms_key) if k})
        if keys:
            statements.append(allow(sid="UseNamedKeys", resources=keys,
                                    actions=["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey",
                                             "kms:DescribeKey", "kms:CreateGrant"]))
        return statements

    def _secret_statements(self) -> list[Statement]:
        """Read exactly the secrets the spec names (`secrets:`), and decrypt them with their key only through Secrets
        Manager, only for those secrets (the encryption context Secrets Manager sends names the secret's ARN)."""
        w = self.workload
        if not w.secrets:
            return []
        arns = sorted(set(w.secrets.values()))
        statements = [allow(sid="ReadOwnSecrets", actions=["secretsmanager:GetSecretValue"],
                            resources=arns)]
        if w.secrets_kms_key is not None:
            statements.append(allow(
                sid="DecryptOwnSecrets", actions=["kms:Decrypt"], resources=[w.secrets_kms_key],
                conditions={"StringEquals": {"kms:ViaService": secret_refs.kms_via_service(self.environment.region),
                                             "kms:EncryptionContext:SecretARN": arns}}))
        return statements

    def _execution_role(self, platform: WorkloadPlatform, source: SourceBundle | None, image_uri: str) -> iam.Role:
        stack = cdk.Stack.of(self)
        role = iam.Role(
            self, "ExecutionRole",
            description=f"SageMaker training jobs of {self.workload.name} (its own data, outputs and image only)",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com", conditions={
                "StringEquals": {"aws:SourceAccount": stack.account},
                "ArnLike": {"aws:SourceArn": self.job_arns},
            }),
            managed_policies=list(platform.shared_execution_policies),
            max_session_duration=cdk.Duration.hours(12),
        )
        buckets = self._data_buckets(platform)
        policy = iam.Policy(self, "ExecutionPolicy", roles=[role],
                            document=document(self._own_statements(platform, buckets, source, image_uri)))
        data_reason = ("Training jobs read every object under the data prefixes this workload's inputs name (object "
                       "keys are chosen by whoever uploads the data set); limited to those prefixes.")
        acknowledge_required_wildcards(policy, {
            "ReadData": data_reason,
            **{f"Read{sid}": data_reason for sid, _, _ in buckets if sid.startswith("External")},
            "WriteOutput": f"SageMaker writes model artifacts under job names generated per run; limited to the "
                           f"workload's own prefix {self.workload.name}/ of the output bucket.",
            "SyncCheckpoints": f"SageMaker syncs checkpoint files named by the training script under per-run prefixes; "
                               f"limited to the workload's own prefix {self.workload.name}/ of the checkpoint bucket.",
            "WriteOwnLogStreams": OWN_LOG_STREAMS_REASON,
        })
        return role

    def _state_machine_role(self, platform: WorkloadPlatform) -> iam.Role:
        stack = cdk.Stack.of(self)
        role = iam.Role(
            self, "StateMachineRole", description=f"Runs training jobs of {self.workload.name} only",
            assumed_by=state_machine_principal(stack, self.state_machine_arn),
            managed_policies=list(platform.shared_state_machine_policies),
        )
        statements = [
            allow(sid="OwnTrainingJobs", resources=self.job_arns,
                  actions=["sagemaker:CreateTrainingJob", "sagemaker:DescribeTrainingJob", "sagemaker:StopTrainingJob",
                           "sagemaker:AddTags", "sagemaker:ListTags"]),
            allow(sid="PassOwnExecutionRole", actions=["iam:PassRole"], resources=[self.execution_role.role_arn],
                  conditions={"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}),
            *self._own_executions_statement(),
        ]
        watched = self.workload.stall_watchdog is not None
        if watched:
            # The stall watchdog looks for its job's progress lines in the job's streams
            # (compiler/state_machine/watchdog.py).
            statements.append(allow(sid="ReadJobLogs", actions=["logs:FilterLogEvents"],
                                    resources=training_log_group_arns(stack)))
        policy = iam.Policy(self, "StateMachinePolicy", roles=[role], document=document(statements))
        if watched:
            acknowledge_required_wildcards(policy, {"ReadJobLogs": READ_JOB_LOGS_REASON})
        return role

    def _own_executions_statement(self) -> list[Statement]:
        """The check for another run in progress lists this machine's executions (absent with concurrent_runs). The
        ARN is built from the machine's name, not taken from the machine, which depends on this role."""
        if self.workload.concurrent_runs:
            return []
        return [allow(sid="ListOwnExecutions", actions=["states:ListExecutions"],
                      resources=[self.state_machine_arn])]

    # ------------------------------------------------------------------------------------------------- alarms

    def add_failed_runs_alarm(self, topic: sns.ITopic) -> cloudwatch.CfnAlarm:
        """An alarm, to `topic`, on any failed run of this workload (a stopped run is not a failure).

        An L1 alarm on Step Functions' own metric (the names in compiler/facts/run_metrics.py, which the dashboard reads
        too): one call into the CDK per workload, where a `Metric` and its alarm take seven.
        """
        return cloudwatch.CfnAlarm(
            self, "FailedRunsAlarm", namespace=run_metrics.STATES_NAMESPACE, metric_name=run_metrics.EXECUTIONS_FAILED,
            statistic="Sum",
            dimensions=[cloudwatch.CfnAlarm.DimensionProperty(name=run_metrics.STATE_MACHINE, value=self.state_machine_arn)],
            period=300, evaluation_periods=1, threshold=1, comparison_operator="GreaterThanOrEqualToThreshold",
            treat_missing_data="notBreaching", alarm_actions=[topic.topic_arn],
            alarm_description=f"A run of {self.workload.name} ({self.environment.name}) failed: see the execution's "
                              f"error and cause, or `trainctl runs {self.workload.name} --env {self.environment.name}`",
        )


