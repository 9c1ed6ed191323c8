"""Realistic stand-ins for deploy-time and run-time values, to check compiled requests before deploy.

`validate` and the tests fill placeholders with these and run the full service-model check, so a request
that would be rejected by SageMaker (a name too long, a pattern broken) fails here, not in production.
The job-name pieces are the longest the state machine can produce.
"""

from __future__ import annotations

from typing import Any

from training.core import placeholders as ph

ACCOUNT = "123456789012"
REGION = "us-east-1"

DEPLOY_VALUES: dict[str, str] = {
    ph.EXECUTION_ROLE_ARN: f"arn:aws:iam::{ACCOUNT}:role/dev-Access-SageMakerExecutionRole1A2B3C4D-ABCDEFGHIJKL",
    ph.TRAINING_SUBNET_ID: "subnet-0123456789abcdef0",
    ph.TRAINING_SECURITY_GROUP_ID: "sg-0123456789abcdef0",
    ph.FILE_SYSTEM_ID: "fs-0123456789abcdef0",
    ph.FSX_MOUNT_NAME: "abcdefgh",
    ph.DATA_BUCKET: "dev-storage-databucket1a2b3c4d-abcdefghijkl",
    ph.OUTPUT_BUCKET: "dev-storage-outputbucket1a2b3c4d-abcdefghijkl",
    ph.CHECKPOINT_BUCKET: "dev-storage-checkpointbucket1a2b3c4d-abcdefgh",
    ph.KMS_KEY_ARN: f"arn:aws:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    ph.SOURCE_DIR_S3_URI: f"s3://cdk-hnb659fds-assets-{ACCOUNT}-{REGION}/"
                          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.gz",
    ph.SOURCE_DIR_FILE_NAME: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.gz",
}
RUN_VALUES: dict[str, str] = {ph.RUN_ID: "0123456789ab", ph.ATTEMPT: "0"}


def sample_values(request: Any) -> dict[str, str]:
    """A value for every placeholder in the request, project images included."""
    values = dict(DEPLOY_VALUES) | dict(RUN_VALUES)
    for name in ph.names_in(request):
        if name.startswith(ph.IMAGE_URI_PREFIX):
            values[name] = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/gpt-trainer:0123456789abcdef"
        elif name.startswith(ph.REPOSITORY_PREFIX):
            values[name] = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/gpt-trainer"
    return values
