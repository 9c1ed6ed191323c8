"""Realistic stand-ins for deploy-time and run-time values, to check compiled requests before deploy.

`validate`, `render` and the tests fill placeholders with these and run the full service-model check, so a request
that SageMaker would refuse (a name too long, a pattern broken) fails here, not in production. Values have the
shape and the longest length the real ones take (CDK-generated names, hash-named assets, the run id).
"""

from __future__ import annotations

from typing import Any

from compiler.facts import placeholders as ph

ACCOUNT = "123456789012"
REGION = "us-east-1"
ASSET_NAME = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.gz"


def deploy_values(region: str = REGION, account: str = ACCOUNT) -> dict[str, str]:
    """A value of the real shape for every fixed deploy-time placeholder."""
    return {
        ph.EXECUTION_ROLE_ARN: f"arn:aws:iam::{account}:role/dev-Workloads00-gptpretrainRole1A2B3C4D-ABCDEFGHIJKL",
        ph.TRAINING_SUBNET_ID: "subnet-0123456789abcdef0",
        ph.TRAINING_SECURITY_GROUP_ID: "sg-0123456789abcdef0",
        ph.FILE_SYSTEM_ID: "fs-0123456789abcdef0",
        ph.FSX_MOUNT_NAME: "abcdefgh",
        ph.DATA_BUCKET: "dev-storage-databucket1a2b3c4d-abcdefghijkl",
        ph.OUTPUT_BUCKET: "dev-storage-outputbucket1a2b3c4d-abcdefghijkl",
        ph.CHECKPOINT_BUCKET: "dev-storage-checkpointbucket1a2b3c4d-abcdefgh",
        ph.KMS_KEY_ARN: f"arn:aws:kms:{region}:{account}:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        ph.SOURCE_DIR_S3_URI: f"s3://cdk-hnb659fds-assets-{account}-{region}/{ASSET_NAME}",
        ph.SOURCE_DIR_FILE_NAME: ASSET_NAME,
    }


DEPLOY_VALUES = deploy_values()
RUN_VALUES: dict[str, str] = {ph.RUN_ID: "0123456789ab", ph.ATTEMPT: "0"}


def sample_values(request: Any, base: dict[str, str] | None = None, *, region: str = REGION, account: str = ACCOUNT,
                  **overrides: str) -> dict[str, str]:
    """A value for every placeholder in the request, project repositories and images included.

    `base` replaces the deploy and run values (the SDK parity harness names a few values as the SDK does);
    `overrides` win over both.
    """
    values = (deploy_values(region, account) | dict(RUN_VALUES) if base is None else dict(base)) | overrides
    for name in ph.names_in(request):
        for prefix, tag in ((ph.REPOSITORY_PREFIX, ""), (ph.IMAGE_URI_PREFIX, ":0123456789abcdef")):
            if name.startswith(prefix) and name not in values:
                repository = name.removeprefix(prefix).replace("_", "-")
                values[name] = f"{account}.dkr.ecr.{region}.amazonaws.com/{repository}{tag}"
    return values
