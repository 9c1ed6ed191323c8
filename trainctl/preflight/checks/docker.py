"""The image build `cdk deploy` runs on this machine: a Docker daemon that answers, and the login to the registry
of the base image (an AWS Deep Learning Container), whose exact command comes from the project's image settings."""

from __future__ import annotations

import os
import shutil
import subprocess

from trainctl.preflight.checks.base import FAIL, PASS, Context, Result

TIMEOUT_S = 30


def login_commands(ctx: Context) -> list[str]:
    """`docker login` for each registry the environment's image builds pull their base image from."""
    registries = sorted({build.base_image.uri(ctx.env.region).split("/", 1)[0] for build in ctx.images.values()})
    return [f"aws ecr get-login-password --region {ctx.env.region} | docker login --username AWS --password-stdin "
            f"{registry}" for registry in registries]


def docker(ctx: Context) -> list[Result]:
    """`docker version` (local, no network) succeeds: the CLI is there and its daemon answers."""
    name = "docker"
    if not ctx.images:
        return [Result(name, PASS, "the project builds no image (training-platform:images is empty): Docker not needed")]
    program = os.environ.get("CDK_DOCKER") or "docker"
    path = shutil.which(program)
    if path is None:
        return [Result(name, FAIL, f"no `{program}` on PATH: `cdk deploy` builds the training image on this machine; "
                       "install Docker (or set CDK_DOCKER to a compatible CLI)")]
    try:
        done = subprocess.run([path, "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return [Result(name, FAIL, f"`{program} version` did not answer in {TIMEOUT_S} s: start or restart the Docker "
                       "daemon")]
    except OSError as error:
        return [Result(name, FAIL, f"`{program} version` could not run ({error}): reinstall Docker or fix CDK_DOCKER")]
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        said = lines[-1] if lines else f"exit {done.returncode}"
        return [Result(name, FAIL, f"`{program} version` failed ({said}): start the Docker daemon")]
    logins = "; ".join(f"`{c}`" for c in login_commands(ctx))
    return [Result(name, PASS, f"Docker server {done.stdout.strip() or '?'}; before the deploy, log in to the base "
                   f"image's registry (the token lasts 12 hours): {logins}")]
