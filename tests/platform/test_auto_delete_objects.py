"""`removal_policy: destroy` -> `retain` deletes the CDK's bucket-emptying custom resources, and deleting one must not
empty its bucket (docs/infrastructure-changes.md).

The handler empties a bucket on Delete only while the bucket carries the tag `aws-cdk:auto-delete-objects: true`;
the tag goes with `auto_delete_objects`, and CloudFormation updates the bucket (removing the tag) before its cleanup
pass deletes the custom resource. Read from the handler aws-cdk-lib ships, so an upgrade that changes it fails here.
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk import assertions
from aws_cdk import aws_s3 as s3

pytestmark = pytest.mark.synth
TAG = "aws-cdk:auto-delete-objects"
HANDLER = "package/custom-resource-handlers/dist/aws-s3/auto-delete-objects-handler/index.js"


def _handler() -> str:
    (bundle,) = (Path(cdk.__file__).parent / "_jsii").glob("aws-cdk-lib@*.jsii.tgz")
    with tarfile.open(bundle) as archive:
        member = archive.extractfile(HANDLER)
        assert member is not None
        return member.read().decode()


def test_the_handler_empties_only_a_bucket_that_still_carries_the_tag() -> None:
    code = _handler()
    tag = re.search(r'(\w+)="aws-cdk:auto-delete-objects"', code)
    assert tag is not None
    # On Delete: ask whether the bucket has the tag set to "true"; without it, log and return before emptying.
    check = re.search(r"async function (\w+)\(\w+\)\{return\(await \w+\.getBucketTagging\(\{Bucket:\w+\}\)\)"
                      rf"\.TagSet\?\.some\(\w+=>\w+\.Key==={tag[1]}&&\w+\.Value===\"true\"\)\}}", code)
    assert check is not None
    assert re.search(rf"if\(!await {check[1]}\(\w+\)\)\{{console\.log\(`Bucket does not have '\$\{{{tag[1]}\}}' tag, "
                     r"skipping cleaning\.`\);return\}", code)


def test_the_tag_goes_with_auto_delete_objects() -> None:
    stack = cdk.Stack(cdk.App(), "Buckets")
    s3.Bucket(stack, "Destroyed", auto_delete_objects=True, removal_policy=cdk.RemovalPolicy.DESTROY)
    s3.Bucket(stack, "Retained", removal_policy=cdk.RemovalPolicy.RETAIN)
    buckets = assertions.Template.from_stack(stack).find_resources("AWS::S3::Bucket")
    tags = {name.rstrip("0123456789ABCDEF"): {t["Key"]: t["Value"] for t in b.get("Properties", {}).get("Tags", [])}
            for name, b in buckets.items()}
    assert tags == {"Destroyed": {TAG: "true"}, "Retained": {}}
