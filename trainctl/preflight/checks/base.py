"""What every preflight check shares: its result row (trainctl/common/verdicts.py), the context it reads, and AWS
access in the environment."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.inputs.environments import Environment
from compiler.inputs.image_builds import ImageBuild
from compiler.pipeline import CompiledWorkload
from trainctl.common.assembly import Stack
from trainctl.common.verdicts import FAIL, PASS, SKIP, Result
from trainctl.preflight.checks import templates

__all__ = ["FAIL", "PASS", "SKIP", "Aws", "Check", "Context", "Result"]


class Aws:
    """boto3 in the environment's region (cdk.json), made on first use so a check without AWS needs no credentials.

    Tests pass a `session` whose clients are stubbed; `configured_region` is the region the user's own
    configuration names (what `aws` commands without --region use), which the credentials check compares.
    """

    def __init__(self, env: Environment, profile: str | None = None, session: Any = None,
                 configured_region: str | None = None) -> None:
        self.env, self.profile = env, profile
        self._session = session
        self._configured_region = configured_region
        self._clients: dict[str, Any] = {}

    def session(self) -> Any:
        if self._session is None:
            import boto3

            self._session = boto3.Session(profile_name=self.profile, region_name=self.env.region)
        return self._session

    def configured_region(self) -> str | None:
        if self._session is not None:
            return self._configured_region
        import boto3

        region: str | None = boto3.Session(profile_name=self.profile).region_name
        return region

    def client(self, service: str) -> Any:
        """One client per service, with a few retries and short timeouts (a preflight should not hang)."""
        if service not in self._clients:
            from botocore.config import Config

            config = Config(retries={"max_attempts": 4, "mode": "standard"}, connect_timeout=10, read_timeout=30)
            self._clients[service] = self.session().client(service, region_name=self.env.region, config=config)
        return self._clients[service]


@dataclass
class Context:
    """What the checks read: the environment, its compiled workloads, the synthesized templates and AWS."""

    env: Environment
    aws: Aws
    cdk_out: Path
    compiled: list[CompiledWorkload] = field(default_factory=list)
    images: dict[str, ImageBuild] = field(default_factory=dict)
    compile_error: str | None = None  # why the workloads did not compile (then the checks that need them fail)
    credentials_ok: bool = False  # set by the credentials check; the AWS checks skip without it

    @functools.cached_property
    def stacks(self) -> list[Stack]:
        """The environment's synthesized stacks, read once for every check (NoAssembly when there are none)."""
        return templates.stacks(self.cdk_out, self.env.name)


Check = Callable[[Context], list[Result]]
