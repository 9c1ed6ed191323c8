"""What `removal_policy` in cdk.json means for an environment's stateful resources (buckets, keys, file system,
repositories, log groups), and the constructs' safe default.

`retain` keeps each one when its stack is deleted, when it leaves the template and when it is replaced, except when
the deploy that created it rolls back (CloudFormation's `DeletionPolicy: RetainExceptOnCreate`, with
`UpdateReplacePolicy: Retain`): a failed first deploy then leaves no file system billing outside any stack, and no
named log group that fails the next try with AlreadyExists. `destroy` deletes them with their stacks.
"""

from __future__ import annotations

import aws_cdk as cdk

RETAIN = cdk.RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE


def removal_policy(setting: str) -> cdk.RemovalPolicy:
    """The CDK's policy for an environment's `removal_policy` setting (`retain` or `destroy`)."""
    return RETAIN if setting == "retain" else cdk.RemovalPolicy.DESTROY
