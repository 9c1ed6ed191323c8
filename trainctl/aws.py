"""AWS access for the commands that need it: the usual boto3 credential chain, checked against the environment.

cdk.json pins each environment's account and region. A command about environment `dev` must talk to dev's account
in dev's region, whatever the shell's default profile says: the region is taken from cdk.json, and the credentials'
account is compared with it first, so a wrong profile is one clear message instead of a confusing AWS error.
"""

from __future__ import annotations

from typing import Any

from compiler.environments import Environment
from compiler.errors import Problem, SpecError


def session(env: Environment, profile: str | None = None) -> Any:
    """A boto3 session in the environment's region, refusing credentials of another account."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ProfileNotFound

    try:
        boto = boto3.Session(profile_name=profile, region_name=env.region)
    except ProfileNotFound:
        raise SpecError(Problem("", "profile", f"no AWS profile named {profile!r} in this machine's AWS config; "
                                "name one that `aws configure list-profiles` shows")) from None
    try:
        account = boto.client("sts").get_caller_identity()["Account"]
    except NoCredentialsError:
        raise SpecError(Problem("", "credentials", f"no AWS credentials found; configure them for account {env.account} "
                                f"(environment {env.name}), e.g. `aws sso login` or AWS_PROFILE")) from None
    except (BotoCoreError, ClientError) as error:
        raise SpecError(Problem("", "credentials", f"could not check the credentials' account: {error}")) from None
    if account != env.account:
        raise SpecError(Problem("", "credentials", f"the credentials are for account {account}, but environment "
                                f"{env.name} is account {env.account} (cdk.json); switch profile (--profile or "
                                "AWS_PROFILE) to one of that account"))
    return boto
