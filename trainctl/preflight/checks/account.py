"""The account itself: whose credentials these are, and whether the CDK bootstrap the templates need is there."""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ProfileNotFound

from trainctl.preflight.checks import templates
from trainctl.preflight.checks.base import FAIL, PASS, SKIP, Context, Result

BOOTSTRAP_STACK = "CDKToolkit"
# CloudFormation states in which the bootstrap stack's resources are all there and settled.
SETTLED = {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_COMPLETE",
           "IMPORT_ROLLBACK_COMPLETE"}


def credentials(ctx: Context) -> list[Result]:
    """STS says whose credentials these are: a wrong profile is one clear row, and every AWS check after it skips."""
    env = ctx.env
    where = f"account {env.account} (environment {env.name})"
    try:
        identity = ctx.aws.client("sts").get_caller_identity()
        configured = ctx.aws.configured_region()
    except ProfileNotFound as error:
        return [Result("credentials", FAIL, f"{error}; name a profile that `aws configure list-profiles` shows")]
    except NoCredentialsError:
        return [Result("credentials", FAIL, f"no AWS credentials found; configure them for {where}, e.g. "
                       "`aws sso login --profile NAME` and AWS_PROFILE=NAME")]
    except ClientError as error:
        return [Result("credentials", FAIL, f"STS GetCallerIdentity failed: {error}; refresh the credentials for "
                       f"{where}")]
    except BotoCoreError as error:
        return [Result("credentials", FAIL, f"STS GetCallerIdentity failed: {error}; check this machine's network "
                       "(proxy, VPN, firewall) and the credentials' configuration, then run preflight again")]
    account = identity["Account"]
    if account != env.account:
        return [Result("credentials", FAIL, f"the credentials are for account {account}, but cdk.json pins {where}; "
                       "switch to a profile of that account (--profile or AWS_PROFILE)")]
    if configured and configured != env.region:
        return [Result("credentials", FAIL, f"account {account} matches, but the configured region is {configured} "
                       f"and {env.name} is in {env.region} (cdk.json); `export AWS_REGION={env.region}` so `aws` "
                       "commands without --region reach the environment")]
    ctx.credentials_ok = True
    return [Result("credentials", PASS, f"account {account} ({identity.get('Arn', '?')}), region {env.region}")]


def _bootstrap_command(ctx: Context) -> str:
    return f"`npx cdk bootstrap aws://{ctx.env.account}/{ctx.env.region}`"


def _deployed_version(ctx: Context, outputs: list[dict[str, str]], parameter: str) -> str | None:
    """The bootstrap stack's `BootstrapVersion` output, else the SSM parameter the templates read."""
    for output in outputs:
        if output.get("OutputKey") == "BootstrapVersion":
            return output.get("OutputValue")
    try:
        value: str = ctx.aws.client("ssm").get_parameter(Name=parameter)["Parameter"]["Value"]
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ParameterNotFound":
            return None
        raise
    return value


def cdk_bootstrap(ctx: Context) -> list[Result]:
    """`CDKToolkit` exists, settled, with at least the version every synthesized template's CheckBootstrapVersion
    rule asks for (read from cdk.out, so a CDK upgrade that raises it is seen here without a code change)."""
    name = "cdk-bootstrap"
    try:
        found = ctx.stacks
    except templates.NoAssembly as error:
        return [Result(name, FAIL, f"{error}, so preflight can read the bootstrap version the templates check")]
    required = templates.required_bootstrap_version(found)
    try:
        (stack,) = ctx.aws.client("cloudformation").describe_stacks(StackName=BOOTSTRAP_STACK)["Stacks"]
    except ClientError as error:
        if "does not exist" not in str(error):
            raise
        return [Result(name, FAIL, f"no {BOOTSTRAP_STACK} stack in {ctx.env.account}/{ctx.env.region}; bootstrap "
                       f"once: {_bootstrap_command(ctx)}")]
    status = stack.get("StackStatus", "")
    if status not in SETTLED:
        return [Result(name, FAIL, f"{BOOTSTRAP_STACK} is {status}; wait for it to settle, or repair it (CloudFormation "
                       f"console: stack events) and run {_bootstrap_command(ctx)} again")]
    version = _deployed_version(ctx, stack.get("Outputs", []), templates.version_parameter(found))
    if version is None or not version.isdigit():
        return [Result(name, FAIL, f"{BOOTSTRAP_STACK} reports no bootstrap version ({version!r}); bootstrap again: "
                       f"{_bootstrap_command(ctx)}")]
    if required is not None and int(version) < required:
        return [Result(name, FAIL, f"{BOOTSTRAP_STACK} is version {version}, the templates need {required} or later; "
                       f"upgrade it with the pinned CLI: {_bootstrap_command(ctx)}")]
    need = f"the templates need {required} or later" if required is not None else "the templates check no version"
    return [Result(name, PASS, f"{BOOTSTRAP_STACK} {status}, version {version} ({need})")]


def bootstrap_image_repository(ctx: Context) -> list[Result]:
    """The bootstrap's container-asset repository keeps its tags immutable, so the Registry stack's copy source
    `<repository>:<asset hash>` is always the image first built for that hash (docs/aws-assumptions.md)."""
    name = "bootstrap-image-repository"
    if not ctx.images:
        return [Result(name, SKIP, "the project builds no image")]
    try:
        (stack,) = ctx.aws.client("cloudformation").describe_stacks(StackName=BOOTSTRAP_STACK)["Stacks"]
    except ClientError as error:
        if "does not exist" not in str(error):
            raise
        return [Result(name, SKIP, f"no {BOOTSTRAP_STACK} stack (see cdk-bootstrap)")]
    outputs = {o.get("OutputKey"): o.get("OutputValue") for o in stack.get("Outputs", [])}
    repository = outputs.get("ImageRepositoryName")
    if not repository:
        return [Result(name, FAIL, f"{BOOTSTRAP_STACK} names no ImageRepositoryName output; bootstrap again: "
                       f"{_bootstrap_command(ctx)}")]
    (found,) = ctx.aws.client("ecr").describe_repositories(repositoryNames=[repository])["repositories"]
    mutability = found.get("imageTagMutability", "MUTABLE")
    if mutability != "IMMUTABLE":
        return [Result(name, FAIL, f"{repository} has {mutability} tags, so an image pushed again under an asset hash "
                       f"could change what the Registry stack copies: `aws ecr put-image-tag-mutability "
                       f"--repository-name {repository} --image-tag-mutability IMMUTABLE --region {ctx.env.region}` "
                       "(the pinned CLI's bootstrap template makes it IMMUTABLE)")]
    return [Result(name, PASS, f"{repository}: IMMUTABLE tags")]
