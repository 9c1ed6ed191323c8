"""An image from another account runs with the workload's role: it must be the image that was reviewed.

A tag (`:latest`, `:1.0`, or none, which means `latest`) is a name its owner can point at another image at any
time; a digest names one image for good. So an `image_uri` outside this environment's own account is accepted
only pinned by digest, except from the AWS accounts that publish the SDK's catalog images (Deep Learning
Containers and the like, which the compiler also resolves itself from framework and versions).
"""

from __future__ import annotations

from compiler.compilation.images import aws_image_accounts, ecr_parts, pinned_by_digest
from compiler.inputs.environments import Environment
from compiler.inputs.model import UriImage, Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import environment_rule


@environment_rule
def foreign_images_are_pinned_by_digest(w: Workload, env: Environment, f: Findings) -> None:
    if not isinstance(w.image, UriImage):
        return
    uri = w.image.uri
    parts = ecr_parts(uri)
    if parts is None or pinned_by_digest(uri):
        return  # not ECR: the_image_exists_in_the_region says so
    account = parts["account"]
    if account == env.account or account in aws_image_accounts(env.region):
        return
    host, _, path = uri.partition("/")
    repository = f"{host}/{parts['repository']}"
    reference = path[len(parts["repository"]):].lstrip(":@") or "latest"
    f.problem("image_uri", f"account {account} is not environment '{env.name}''s ({env.account}) and the image is "
              f"named by {reference!r}, a tag its owner can move to another image, not a sha256 digest: pin it, "
              f"{repository}@sha256:<64 hex digits> (find the digest with `docker buildx imagetools inspect {uri}` or "
              f"`aws ecr describe-images --registry-id {account} --repository-name {parts['repository']} "
              f"--image-ids imageTag={reference}`)")
