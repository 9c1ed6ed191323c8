"""An export that deployed stacks import outlives their update (CloudFormation refuses to update a stack that removes
an export another stack imports: "Export ... cannot be deleted as it is in use by ...").

The last landed release (9265785) attached the Access stack's WriteTrainingLogs policy to every execution role through
an import of its ARN; this release gives each role its own jobs' streams instead. `cdk deploy` updates Access before
the workload stacks, so Access keeps the policy, exactly as deployed, and its export for one release, attached to no
role. The literals below are the landed templates' (`trainctl review --base 9265785` reads them the same way).
"""

from __future__ import annotations

import json

import pytest

LOGICAL_ID = "TrainingJobsWriteTrainingLogs1E58AB02"
OUTPUT = "ExportsOutputRefTrainingJobsWriteTrainingLogs1E58AB024DB5198F"
# The landed policy, property by property: a new Description would replace it, and its ARN (the export) with it.
DESCRIPTION = "Training jobs (WriteTrainingLogs): shared by every workload's execution role"
ACTIONS = ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]


@pytest.mark.parametrize(("env", "region", "account"), [("dev", "us-east-1", "111111111111"),
                                                         ("prod", "us-west-2", "222222222222")])
def test_the_landed_write_policy_and_its_export_stay_one_release(synth, env: str, region: str, account: str) -> None:
    access = synth.template(env, "Access")
    assert access["Outputs"][OUTPUT] == {"Value": {"Ref": LOGICAL_ID},
                                         "Export": {"Name": f"{env}-Access:{OUTPUT}"}}
    others = {k: v for k, v in access["Resources"].items() if k != LOGICAL_ID}
    assert LOGICAL_ID not in json.dumps(others)  # nothing of the Access stack uses it either
    properties = access["Resources"][LOGICAL_ID]["Properties"]
    group = f"arn:aws:logs:{region}:{account}:log-group:/aws/sagemaker/TrainingJobs"
    assert properties == {"Description": DESCRIPTION, "Path": "/", "PolicyDocument": {"Version": "2012-10-17",
        "Statement": [{"Sid": "WriteTrainingLogs", "Effect": "Allow", "Action": ACTIONS,
                       "Resource": [group, f"{group}:log-stream:*"]}]}}


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_no_role_of_this_release_attaches_it(synthesized_app, env: str) -> None:
    """Kept for the export only: a role of this release writing every stream would undo issue 32's log-stream scope."""
    for sid, template in synthesized_app.templates[env].items():  # every stack, the workload shards included
        if sid == "Access":
            continue
        assert "WriteTrainingLogs" not in json.dumps(template), sid
