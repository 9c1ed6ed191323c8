"""Realistic stand-ins for deploy-time and run-time values, to check compiled requests before deploy.

`validate` and the tests fill placeholders with these and run the full service-model check, so a request
that would be rejected by SageMaker (a name too long, a pattern broken) fails here, not in production.
The job-name pieces are the longest the state machine can produce.
"""

from __future__ import annotations

from typing import Any

from compiler import placeholders as ph

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


def sample_values(request: Any, base: dict[str, str] | None = None, **overrides: str) -> dict[str, str]:
    """A value for every placeholder in the request, project repositories and images included.

    `base` replaces DEPLOY_VALUES + RUN_VALUES (the SDK parity harness names a few values as the SDK does);
    `overrides` win over both.
    """
    values = (dict(DEPLOY_VALUES) | dict(RUN_VALUES) if base is None else dict(base)) | overrides
    for name in ph.names_in(request):
        for prefix, tag in ((ph.REPOSITORY_PREFIX, ""), (ph.IMAGE_URI_PREFIX, ":0123456789abcdef")):
            if name.startswith(prefix) and name not in values:
                repository = name.removeprefix(prefix).replace("_", "-")
                values[name] = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/{repository}{tag}"
    return values
