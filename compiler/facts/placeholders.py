"""Deploy-time and run-time values in compiled requests, written as `${Name}` placeholders.

The compiler cannot know a role ARN or a bucket name before deploy, nor a job name before a run.
It writes `${Name}` where such a value goes. Deploy-time names are filled by Step Functions
definition substitutions (the CDK layer maps each name to a token); run-time names are produced by
the state machine itself. `render` shows them as they are, so its output is stable and reviewable.
"""

from __future__ import annotations

import json
import re
from typing import Any

PLACEHOLDER = re.compile(r"\$\{([A-Za-z][A-Za-z0-9_]*)\}")
# Step Functions substitutes `${...}` anywhere in a definition's text, so no user-written text may hold it.
RESERVED_SEQUENCE = "${"

# Deploy-time values: the definition-substitution keys the CDK layer must provide.
EXECUTION_ROLE_ARN = "ExecutionRoleArn"
TRAINING_SUBNET_ID = "TrainingSubnetId"
TRAINING_SECURITY_GROUP_ID = "TrainingSecurityGroupId"
FILE_SYSTEM_ID = "FileSystemId"
FSX_MOUNT_NAME = "FsxMountName"
DATA_BUCKET = "DataBucket"
OUTPUT_BUCKET = "OutputBucket"
CHECKPOINT_BUCKET = "CheckpointBucket"
KMS_KEY_ARN = "KmsKeyArn"
SOURCE_DIR_S3_URI = "SourceDirS3Uri"
SOURCE_DIR_FILE_NAME = "SourceDirFileName"  # the tarball object's name: where a "code" channel puts it
REPOSITORY_PREFIX = "Repository_"  # + repository name with '-' as '_': the repository URI (for a fixed tag)
IMAGE_URI_PREFIX = "ImageUri_"  # + repository name with '-' as '_': the image the platform built for it

# Run-time values, produced by the state machine for each execution and attempt.
RUN_ID = "RunId"  # per execution: RUN_ID_LENGTH lowercase hex characters
RUN_ID_LENGTH = 12
ATTEMPT = "Attempt"  # per launch within one execution: 0, 1, 2, ...

RUN_TIME = frozenset({RUN_ID, ATTEMPT})


def ref(name: str) -> str:
    """The placeholder text for a value."""
    return "${" + name + "}"


def repository_key(repository: str) -> str:
    """Substitution key for a project ECR repository's URI."""
    return REPOSITORY_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", repository)


def image_uri_key(repository: str) -> str:
    """Substitution key for the URI (with tag) of the image the platform built into a project repository."""
    return IMAGE_URI_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", repository)


def names_in(value: Any) -> set[str]:
    """Every placeholder name that appears anywhere in a JSON-like value."""
    return set(PLACEHOLDER.findall(json.dumps(value)))


def substitute(value: Any, values: dict[str, str], *, strict: bool = True) -> Any:
    """Replace placeholders in every string of a JSON-like value, as Step Functions substitutions do.

    With strict, a placeholder with no value raises KeyError, so a missing substitution is caught in tests.
    """

    def fill(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in values:
                return values[name]
            if strict:
                raise KeyError(f"no value for placeholder ${{{name}}}")
            return match.group(0)

        return PLACEHOLDER.sub(one, text)

    if isinstance(value, str):
        return fill(value)
    if isinstance(value, list):
        return [substitute(v, values, strict=strict) for v in value]
    if isinstance(value, dict):
        return {fill(k): substitute(v, values, strict=strict) for k, v in value.items()}
    return value
