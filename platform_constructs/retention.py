"""CloudWatch Logs retention periods, from the days an environment sets in cdk.json to the CDK's enum."""

from __future__ import annotations

from aws_cdk import aws_logs as logs

from compiler.inputs.environments import LOG_RETENTION_DAYS

# The CDK's RetentionDays members list CloudWatch's allowed periods in ascending order, as LOG_RETENTION_DAYS does
# (a test checks the synthesized RetentionInDays against the setting).
_BY_DAYS = dict(zip(LOG_RETENTION_DAYS, [m for m in logs.RetentionDays if m.name != "INFINITE"], strict=True))


def retention(days: int) -> logs.RetentionDays:
    return _BY_DAYS[days]

