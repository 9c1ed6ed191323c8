"""The AWS Deep Learning Container the training image builds FROM, read from the pinned SageMaker SDK.

`sagemaker.image_uris.retrieve("pytorch", region, version="2.3.0", py_version="py311",
instance_type="ml.p5.48xlarge", image_scope="training")` is the reference, but importing the SDK costs seconds
on every synth; its image table is plain JSON, read here through `compiler.sdk_rules` (a test checks both
agree). The registry account and repository also scope the execution role's pull permission.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler import sdk_rules

FRAMEWORK = "pytorch"
FRAMEWORK_VERSION = "2.3.0"
PY_VERSION = "py311"
PROCESSOR = "gpu"  # the training instances are GPU instances (ml.p5.48xlarge in the reference call)


@dataclass(frozen=True)
class BaseImage:
    """One Deep Learning Container image in one region's DLC registry."""

    account: str
    region: str
    repository: str
    tag: str
    domain: str = "amazonaws.com"

    @property
    def uri(self) -> str:
        return f"{self.account}.dkr.ecr.{self.region}.{self.domain}/{self.repository}:{self.tag}"

    def repository_arn(self, partition: str = "aws") -> str:
        return f"arn:{partition}:ecr:{self.region}:{self.account}:repository/{self.repository}"


def training_base_image(region: str) -> BaseImage:
    """The PyTorch training DLC for a region, or ValueError naming what to change."""
    config = sdk_rules.image_config(FRAMEWORK)
    version = config.get("version_aliases", {}).get(FRAMEWORK_VERSION, FRAMEWORK_VERSION)
    entry = config["versions"].get(version)
    if entry is None:
        raise ValueError(f"the pinned SageMaker SDK has no {FRAMEWORK} {FRAMEWORK_VERSION} training image")
    account = entry["registries"].get(region)
    if account is None:
        raise ValueError(
            f"no {FRAMEWORK} {FRAMEWORK_VERSION} training image is published in region {region}: "
            f"choose another region in cdk.json, or regions: {', '.join(sorted(entry['registries']))}"
        )
    domain = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    tag = f"{version}-{PROCESSOR}-{PY_VERSION}"
    container = entry.get("container_version", {}).get(PROCESSOR)
    if container:
        tag = f"{tag}-{container}"
    return BaseImage(account=account, region=region, repository=entry["repository"], tag=tag, domain=domain)
