"""How every state machine of the platform is declared: the workloads' and the job reaper's.

Each is a standard state machine with a fixed name (`<env>-<workload>`, `<env>-job-reaper`), its definition the
compiler's pure-Python JSON (an L1 `CfnStateMachine`: the definition is built and tested without the CDK), every
execution logged with its data (level ALL) to the environment's run log group, and traced with X-Ray: what a run's
history, `trainctl logs` and cdk-nag's AwsSolutions-SF1 and -SF2 expect of each one.
"""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct


def state_machine_arn(scope: Construct, name: str) -> str:
    """The ARN of the stack's account and Region's state machine of that name (`...:stateMachine:<name>`; a
    trailing `*` makes it a pattern)."""
    return cdk.Stack.of(scope).format_arn(service="states", resource="stateMachine", resource_name=name,
                                          arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME)


def logged_state_machine(scope: Construct, construct_id: str, *, name: str, role_arn: str, definition: str,
                         log_group_arn: str, substitutions: Mapping[str, str] | None = None) -> sfn.CfnStateMachine:
    """A standard state machine that logs every execution with its data to `log_group_arn` and is traced."""
    return sfn.CfnStateMachine(
        scope, construct_id, state_machine_name=name, state_machine_type="STANDARD", role_arn=role_arn,
        definition_string=definition, definition_substitutions=dict(substitutions) if substitutions else None,
        logging_configuration=sfn.CfnStateMachine.LoggingConfigurationProperty(
            level="ALL", include_execution_data=True,
            destinations=[sfn.CfnStateMachine.LogDestinationProperty(
                cloud_watch_logs_log_group=sfn.CfnStateMachine.CloudWatchLogsLogGroupProperty(
                    log_group_arn=log_group_arn))]),
        tracing_configuration=sfn.CfnStateMachine.TracingConfigurationProperty(enabled=True),
    )
