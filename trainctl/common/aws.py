"""AWS access for the commands that need it: the usual boto3 credential chain, checked against the environment.

cdk.json pins each environment's account and region. A command about environment `dev` must talk to dev's account
in dev's region, whatever the shell's default profile says: the region is taken from cdk.json, and the credentials'
account is compared with it first, so a wrong profile is one clear message instead of a confusing AWS error.
Each client is made on first use, and AWS errors become messages that say what to do (`aws_errors`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from compiler.errors import Problem, SpecError
from compiler.inputs.environments import Environment
from trainctl.common.errors import problem
from trainctl.common.target import Target


def profile_session(profile: str | None, region: str) -> Any:
    """A boto3 session of the named profile (default: the usual credential chain) in `region`; a profile this machine
    does not have is one message, not botocore's ProfileNotFound."""
    import boto3
    from botocore.exceptions import ProfileNotFound

    try:
        return boto3.Session(profile_name=profile, region_name=region)
    except ProfileNotFound:
        raise SpecError(Problem("", "profile", f"no AWS profile named {profile!r} in this machine's AWS config; "
                                "name one that `aws configure list-profiles` shows")) from None


def session(env: Environment, profile: str | None = None) -> Any:
    """A boto3 session in the environment's region, refusing credentials of another account."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    boto = profile_session(profile, env.region)
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


class Clients:
    """The AWS clients of one environment, from `session` (checked against its account).

    Each client is made on first use: a command pays only for the services it calls.
    """

    def __init__(self, env: Environment, profile: str | None) -> None:
        self.boto = session(env, profile)

    def _client(self, service: str) -> Any:
        from botocore.config import Config

        return self.boto.client(service, config=Config(retries={"mode": "standard", "max_attempts": 8}))

    @functools.cached_property
    def sfn(self) -> Any:
        return self._client("stepfunctions")

    @functools.cached_property
    def sagemaker(self) -> Any:
        return self._client("sagemaker")

    @functools.cached_property
    def logs(self) -> Any:
        return self._client("logs")


@contextlib.contextmanager
def aws_errors(target: Target, doing: str) -> Iterator[None]:
    """Turn AWS errors into messages that say what to do; `doing` names the step for the rest."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        message = error.response.get("Error", {}).get("Message", str(error))
        if code == "StateMachineDoesNotExist":
            raise target.not_deployed() from None
        if code == "ExecutionDoesNotExist":
            raise problem(f"{doing}: no such execution of {target.workload} in {target.env.name}; list recent runs "
                          f"with `trainctl runs {target.workload} --env {target.env.name}`") from None
        if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation"):
            raise problem(f"{doing}: access denied in account {target.env.account}: {message}; use a role that may "
                          f"operate {target.machine_name} (--profile or AWS_PROFILE)") from None
        raise problem(f"{doing}: {code or 'error'}: {message}") from None
    except BotoCoreError as error:
        raise problem(f"{doing}: {error}") from None
