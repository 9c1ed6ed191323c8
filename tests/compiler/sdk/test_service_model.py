"""service_model catches what botocore's own validation lets through (FACTS.md section 5).

Each test takes a request the service accepts and breaks exactly one constraint, so a check that
stopped working, or one that fires on valid input, fails here.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from botocore.validate import validate_parameters

from compiler.errors import SpecError
from compiler.sdk import service_model
from compiler.sdk.service_model import (
    RequestValidationError,
    assert_valid,
    compiled_pattern,
    java_pattern_to_python,
    validate_request,
    validate_response,
)

ROLE = "arn:aws:iam::111111111111:role/training-execution"


def valid_request() -> dict[str, Any]:
    """A CreateTrainingJob request as the SageMaker SDK sends one for a two-node PyTorch job."""
    return {
        "TrainingJobName": "gpt-small-0123456789ab-0",
        "AlgorithmSpecification": {
            "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311",
            "TrainingInputMode": "File",
            "MetricDefinitions": [{"Name": "train:loss", "Regex": "loss=([0-9\\.]+)"}],
        },
        "RoleArn": ROLE,
        "HyperParameters": {
            "sagemaker_program": '"train.py"',
            "sagemaker_submit_directory": '"s3://code-bucket/gpt/sourcedir.tar.gz"',
            "epochs": "3",
        },
        "InputDataConfig": [
            {
                "ChannelName": "train",
                "DataSource": {"S3DataSource": {
                    "S3DataType": "S3Prefix",
                    "S3Uri": "s3://data-bucket/train/",
                    "S3DataDistributionType": "ShardedByS3Key",
                }},
                "InputMode": "FastFile",
            },
            {
                "ChannelName": "fsx",
                "DataSource": {"FileSystemDataSource": {
                    "FileSystemId": "fs-0123456789abcdef0", "FileSystemType": "FSxLustre",
                    "FileSystemAccessMode": "ro", "DirectoryPath": "/abcdefgh/datasets",
                }},
            },
        ],
        "OutputDataConfig": {
            "S3OutputPath": "s3://output-bucket/gpt",
            "KmsKeyId": "arn:aws:kms:us-east-1:111111111111:key/0a1b",
        },
        "ResourceConfig": {
            "InstanceType": "ml.p4d.24xlarge",
            "InstanceCount": 2,
            "VolumeSizeInGB": 100,
            "KeepAlivePeriodInSeconds": 1800,
        },
        "VpcConfig": {"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0123456789abcdef0"]},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        "Environment": {"FI_PROVIDER": "efa", "NCCL_DEBUG": "INFO"},
        "RetryStrategy": {"MaximumRetryAttempts": 2},
        "EnableInterContainerTrafficEncryption": True,
        "Tags": [{"Key": "project", "Value": "gpt"}],
    }


def broken(path: str, value: Any) -> dict[str, Any]:
    """valid_request() with the value at a dotted path (list indexes as numbers) replaced."""
    request = copy.deepcopy(valid_request())
    *parents, last = path.split(".")
    node: Any = request
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return request


def test_valid_request_passes_botocore_and_full_validation() -> None:
    request = valid_request()
    validate_parameters(request, service_model.operation_model("CreateTrainingJob").input_shape)
    assert validate_request(request) == []
    assert_valid(request)  # does not raise


# Each case: (what is wrong, the request, the path the problem must name, a word the message must hold)
# Every one of these passes botocore's own validate_parameters; only the full check catches it.
SKIPPED_BY_BOTOCORE = [
    ("job name over 63 characters", broken("TrainingJobName", "a" * 64), "TrainingJobName", "max 63"),
    ("job name with underscore", broken("TrainingJobName", "gpt_small-1"), "TrainingJobName", "pattern"),
    ("job name ending in hyphen", broken("TrainingJobName", "gpt-small-"), "TrainingJobName", "pattern"),
    ("instance type not in the enum", broken("ResourceConfig.InstanceType", "ml.p4d.24xl"),
     "ResourceConfig.InstanceType", "ml.p4d.24xlarge"),
    ("input mode not in the enum", broken("AlgorithmSpecification.TrainingInputMode", "file"),
     "AlgorithmSpecification.TrainingInputMode", "not an allowed value"),
    ("101 hyperparameters", broken("HyperParameters", {f"k{i}": "1" for i in range(101)}), "HyperParameters",
     "101 entries, max 100"),
    ("hyperparameter value of 2501 characters", broken("HyperParameters.epochs", "9" * 2501),
     "HyperParameters.epochs", "2501 characters, max 2500"),
    ("hyperparameter key of 257 characters", broken("HyperParameters", {"k" * 257: "1"}), "HyperParameters key",
     "257 characters, max 256"),
    ("hyperparameter value with a raw newline", broken("HyperParameters.epochs", "3\n4"), "HyperParameters.epochs",
     "pattern"),
    ("environment key starting with a digit", broken("Environment", {"1FI_PROVIDER": "efa"}), "Environment key",
     "pattern"),
    ("environment key with a hyphen", broken("Environment", {"NCCL-DEBUG": "INFO"}), "Environment key", "pattern"),
    ("environment value of 513 characters", broken("Environment.NCCL_DEBUG", "x" * 513), "Environment.NCCL_DEBUG",
     "max 512"),
    ("101 environment variables", broken("Environment", {f"V{i}": "1" for i in range(101)}), "Environment",
     "max 100"),
    ("warm pool over 6 hours", broken("ResourceConfig.KeepAlivePeriodInSeconds", 21601),
     "ResourceConfig.KeepAlivePeriodInSeconds", "21600"),
    ("31 retries", broken("RetryStrategy.MaximumRetryAttempts", 31), "RetryStrategy.MaximumRetryAttempts", "30"),
    ("six security groups", broken("VpcConfig.SecurityGroupIds", [f"sg-{i}" for i in range(6)]),
     "VpcConfig.SecurityGroupIds", "max 5"),
    ("seventeen subnets", broken("VpcConfig.Subnets", [f"subnet-{i}" for i in range(17)]), "VpcConfig.Subnets",
     "max 16"),
    ("21 input channels", broken("InputDataConfig", [valid_request()["InputDataConfig"][0]] * 21), "InputDataConfig",
     "max 20"),
    ("51 tags", broken("Tags", [{"Key": f"k{i}", "Value": "v"} for i in range(51)]), "Tags", "max 50"),
    ("channel name with a slash", broken("InputDataConfig.0.ChannelName", "train/a"), "InputDataConfig[0].ChannelName",
     "pattern"),
    ("gs:// data source", broken("InputDataConfig.0.DataSource.S3DataSource.S3Uri", "gs://bucket/train"),
     "InputDataConfig[0].DataSource.S3DataSource.S3Uri", "pattern"),
    ("FSx id that is not an id",
     broken("InputDataConfig.1.DataSource.FileSystemDataSource.FileSystemId", "fsx-0123456789abc"),
     "FileSystemDataSource.FileSystemId", "pattern"),
    ("FSx access mode in capitals", broken("InputDataConfig.1.DataSource.FileSystemDataSource.FileSystemAccessMode",
                                           "RO"), "FileSystemAccessMode", "not an allowed value"),
    ("role given by name", broken("RoleArn", "role/training-execution-role"), "RoleArn", "pattern"),
    ("role ARN with non-ASCII digits", broken("RoleArn", "arn:aws:iam::" + "\u0661" * 12 + ":role/x"), "RoleArn",
     "pattern"),
    ("KMS key with a space", broken("OutputDataConfig.KmsKeyId", "alias/my key"), "OutputDataConfig.KmsKeyId",
     "pattern"),
    ("tag key with a hash", broken("Tags.0.Key", "cost#centre"), "Tags[0].Key", "pattern"),
    ("empty metric regex", broken("AlgorithmSpecification.MetricDefinitions.0.Regex", ""),
     "MetricDefinitions[0].Regex", ""),
    ("instance count given as true", broken("ResourceConfig.InstanceCount", True), "ResourceConfig.InstanceCount",
     "boolean"),
]


@pytest.mark.parametrize(("request_", "path", "word"), [c[1:] for c in SKIPPED_BY_BOTOCORE],
                         ids=[c[0] for c in SKIPPED_BY_BOTOCORE])
def test_full_validation_catches_what_botocore_misses(request_: dict, path: str, word: str) -> None:
    problems = validate_request(request_)
    matching = [p for p in problems if path in p.split(":")[0] and word in p]
    assert matching, f"expected a problem at {path} mentioning {word!r}, got {problems}"


@pytest.mark.parametrize(("request_", "path"), [(c[1], c[2]) for c in SKIPPED_BY_BOTOCORE if c[0] not in (
    "empty metric regex",  # botocore checks this minimum itself
)], ids=[c[0] for c in SKIPPED_BY_BOTOCORE if c[0] != "empty metric regex"])
def test_botocore_alone_accepts_these(request_: dict, path: str) -> None:
    """Shows why the module exists: every case above (but one) sails through botocore."""
    validate_parameters(request_, service_model.operation_model("CreateTrainingJob").input_shape)


@pytest.mark.parametrize(("request_", "word"), [
    (broken("TrainingJobName", "a" * 63), None),
    (broken("HyperParameters", {f"k{i}": "1" * 2500 for i in range(100)}), None),
    (broken("ResourceConfig.KeepAlivePeriodInSeconds", 21600), None),
    (broken("RetryStrategy.MaximumRetryAttempts", 30), None),
    (broken("Environment", {"_A1": "multi\nline value"}), None),  # [\S\s]* allows newlines here
    (broken("Tags.0.Value", "équipe ML"), None),  # \p{L} and \p{Z} are Unicode
    (broken("TrainingJobName", "a--b"), None),
], ids=["63-char name", "100 max-length hyperparameters", "6 h warm pool", "30 retries", "newline in env value",
        "accented tag value", "double hyphen in name"])
def test_values_at_the_limits_pass(request_: dict, word: None) -> None:
    assert validate_request(request_) == []


def test_botocore_problems_are_reported_too() -> None:
    request = valid_request()
    del request["RoleArn"]
    request["ResourceConfig"]["InstanceCount"] = "2"
    request["Unknown"] = 1
    problems = "\n".join(validate_request(request))
    assert 'Missing required parameter in input: "RoleArn"' in problems
    assert "ResourceConfig.InstanceCount" in problems
    assert '"Unknown"' in problems


def test_assert_valid_raises_a_spec_error_naming_every_problem() -> None:
    request = broken("TrainingJobName", "bad_name")
    request["ResourceConfig"]["InstanceType"] = "ml.p9.48xlarge"
    with pytest.raises(RequestValidationError) as info:
        assert_valid(request, source="gpt.yaml")
    assert isinstance(info.value, SpecError)
    assert len(info.value.problems) == 2
    assert "gpt.yaml" in str(info.value) and "TrainingJobName" in str(info.value)


def test_unknown_operation_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="CreateTrainingJobs"):
        validate_request({}, "CreateTrainingJobs")


def test_describe_training_job_response_shape() -> None:
    response = {
        "TrainingJobName": "gpt-small-0123456789ab-0",
        "TrainingJobArn": "arn:aws:sagemaker:us-east-1:111111111111:training-job/gpt-small-0123456789ab-0",
        "TrainingJobStatus": "Failed",
        "SecondaryStatus": "Failed",
        "FailureReason": "CapacityError: Unable to provision requested ML compute capacity.",
        "AlgorithmSpecification": {"TrainingImage": "img", "TrainingInputMode": "File"},
        "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2, "VolumeSizeInGB": 100},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        "ModelArtifacts": {"S3ModelArtifacts": "s3://output-bucket/gpt/model.tar.gz"},
        "CreationTime": "2026-01-01T00:00:00Z",
        "ResponseMetadata": {"HTTPStatusCode": 200},
    }
    assert validate_response(response) == []
    response["TrainingJobStatus"] = "Exploded"
    assert any(p.startswith("TrainingJobStatus:") for p in validate_response(response))


def test_request_for_another_operation() -> None:
    """The state-machine side validates its StopTrainingJob/DescribeTrainingJob calls the same way."""
    assert validate_request({"TrainingJobName": "gpt-small-0123456789ab-0"}, "DescribeTrainingJob") == []
    assert validate_request({"TrainingJobName": "x" * 64}, "StopTrainingJob")


# Java semantics of the model's patterns, checked against what Java's java.util.regex would answer.
@pytest.mark.parametrize(("pattern", "text", "java_matches"), [
    (".*", "one line", True),
    (".*", "two\nlines", False),  # Java's . stops at line terminators
    (".*", "a\u2028b", False),
    ("[\\S\\s]*", "two\nlines", True),
    ("\\d{3}", "123", True),
    ("\\d{3}", "\u0661\u0662\u0663", False),  # \d is ASCII in Java
    ("\\w+", "héllo", False),  # \w is ASCII in Java
    ("[\\S]+", "a\u00a0b", True),  # NBSP is not ASCII whitespace, so Java's \S takes it
    ("[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*", "équipe 日本 \u0663", True),
    ("arn:[\\p{Alnum}\\-]+:lambda", "arn:aws-cn:lambda", True),
    ("arn:[\\p{Alnum}\\-]+:lambda", "arn:awsé:lambda", False),  # \p{Alnum} is ASCII in Java
    ("[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\t]*", "ok \U0001F600", True),
    ("[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\t]*", "bell\x07", False),
    ("[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", "abc", True),
    ("[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", "xabcx", True),
    ("[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", "abc-", False),  # a full match, not a search
    ("([a-zA-Z0-9]([a-zA-Z0-9-]){0,62})(?<!-)", "abc-", False),
    ("[a||b]+", "a|b", True),  # |, ~ and a doubled - are plain characters in a Java class
    ("[a~~b]+", "~", True),
])
def test_java_pattern_translation(pattern: str, text: str, java_matches: bool) -> None:
    assert bool(compiled_pattern(pattern).fullmatch(text)) is java_matches, java_pattern_to_python(pattern)


def test_every_pattern_in_the_service_model_compiles() -> None:
    """A botocore upgrade that brings a pattern the translation cannot handle fails here, not in a deploy."""
    model = service_model.service_model()
    patterns = {model.shape_for(n).metadata.get("pattern") for n in model.shape_names} - {None}
    assert len(patterns) > 100
    for pattern in patterns:
        compiled_pattern(pattern)
