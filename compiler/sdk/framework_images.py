"""Training image URIs of SageMaker framework estimators, resolved exactly as the pinned SageMaker Python SDK
resolves them, without importing it.

`import sagemaker` costs ~3 s, which dominated `cdk synth` and `trainctl validate`. The SDK's image catalog is plain
JSON (`sagemaker/image_uri_config/*.json`, read through `compiler.sdk.sdk_rules`), so this module reads that catalog and
mirrors the SDK's logic around it: `sagemaker.image_uris.get_training_image_uri` and `retrieve` (what an estimator's
`training_image_uri()` calls), quirks included, with the SDK's `compiler_config` (Training Compiler) and JumpStart
paths left out. tests/compiler/sdk/test_framework_images.py proves both give the same URI, or both fail, across the catalog.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from compiler.sdk import sdk_rules

# Frameworks whose estimators (sagemaker.estimator.Framework subclasses) resolve images through
# get_training_image_uri. XGBoost and SKLearn call `retrieve` themselves, as the built-in algorithms' users do (below).
SUPPORTED_FRAMEWORKS = ("pytorch", "tensorflow", "huggingface", "mxnet", "chainer")

TRAINING = "training"
_INFERENCE_GRAVITON = "inference_graviton"
_HUGGINGFACE = "huggingface"
_SMP = "pytorch-smp"
_ECR_URI = "{registry}.dkr.{hostname}/{repository}"

# Rules that live in the SDK's code rather than its JSON, copied from sagemaker/image_uris.py and sagemaker/fw_utils.py
# (the tests check each against the SDK):
# TRAINIUM_ALLOWED_FRAMEWORKS is the *string* "pytorch", which the SDK tests with `framework in ...`: a substring test.
TRAINIUM_ALLOWED_FRAMEWORKS = "pytorch"
GRAVITON_ALLOWED_FRAMEWORKS = frozenset({"tensorflow", "pytorch", "xgboost", "sklearn"})
FRAMEWORKS_WITH_CONTAINER_VERSION_SUFFIX = frozenset({"huggingface", "pytorch-smp", "spark"})
# retrieve(): these repositories' tags carry the newest Neuron SDK version before the container version.
_NEURON_SDK_REPOSITORIES = ("pytorch-training-neuron", "pytorch-training-neuronx", "huggingface-vllm-inference-neuronx")
# get_training_image_uri(): HuggingFace GPU images without a container_version in the catalog get this one.
_HUGGINGFACE_GPU_CONTAINER_VERSION = "cu110-ubuntu18.04"
# get_training_image_uri(): the CUDA build of the SMP v2 image, chosen by substrings of framework_version.
_SMP_CU124_VERSIONS = ("2.5",)
_SMP_CU121_VERSIONS = ("2.1", "2.2", "2.3", "2.4")
# _get_image_tag(): on p4d instances, or with any `smdistributed` distribution, these tags get a container suffix.
_AUTO_CONTAINER_VERSIONS = {
    "tensorflow-2.3-gpu-py37": "cu110-ubuntu18.04-v3",
    "tensorflow-2.3.1-gpu-py37": "cu110-ubuntu18.04",
    "tensorflow-2.3.2-gpu-py37": "cu110-ubuntu18.04",
    "tensorflow-1.15-gpu-py37": "cu110-ubuntu18.04-v8",
    "tensorflow-1.15.4-gpu-py37": "cu110-ubuntu18.04",
    "tensorflow-1.15.5-gpu-py37": "cu110-ubuntu18.04",
    "mxnet-1.8-gpu-py37": "cu110-ubuntu16.04-v1",
    "mxnet-1.8.0-gpu-py37": "cu110-ubuntu16.04",
    "pytorch-1.6-gpu-py36": "cu110-ubuntu18.04-v3",
    "pytorch-1.6.0-gpu-py36": "cu110-ubuntu18.04",
    "pytorch-1.6-gpu-py3": "cu110-ubuntu18.04-v3",
    "pytorch-1.6.0-gpu-py3": "cu110-ubuntu18.04",
}
# _get_image_tag(): XGBoost and scikit-learn images on Graviton take these tags (any other version fails there).
_ARM64_TAGS = {"xgboost": {"1.5-1": "1.5-1-arm64", "1.3-1": "1.3-1-arm64"}, "sklearn": {"1.0-1": "1.0-1-arm64-cpu-py3"}}
# _validate_instance_deprecation(): no p2 images from these versions on.
_FIRST_VERSION_WITHOUT_P2 = {"pytorch": "1.13", "tensorflow": "2.12"}

_INSTANCE_FAMILY = re.compile(r"^ml[\._]([a-z\d\-]+)\.?\w*$")  # sagemaker.utils.get_instance_type_family
_BASE_FRAMEWORK = re.compile(r"^(pytorch|tensorflow)(.*)$")
_RELEASE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)\s*$")
_INSTANCE_TYPES_URL = "https://aws.amazon.com/sagemaker/pricing/instance-types"


class ImageNotFound(ValueError):
    """The SageMaker SDK has no training image for these arguments (it would raise too)."""


def training_image_uri(
    region: str,
    framework: str,
    framework_version: str | None = None,
    py_version: str | None = None,
    instance_type: str | None = None,
    distribution: Mapping[str, Any] | None = None,
    tensorflow_version: str | None = None,
    pytorch_version: str | None = None,
) -> str:
    """What `sagemaker.image_uris.get_training_image_uri(...)` returns for these arguments (no image_uri, no
    compiler_config); raises ImageNotFound wherever that function raises."""
    if framework not in SUPPORTED_FRAMEWORKS:
        raise ImageNotFound(
            f"framework {framework!r} is not resolved here; supported frameworks: {', '.join(SUPPORTED_FRAMEWORKS)}."
        )
    base_framework_version, container_version = _base_framework(instance_type, tensorflow_version, pytorch_version)
    if _uses_smp_v2(distribution):
        framework = _SMP
        container_version = _smp_container_version(framework_version, instance_type)
    return _retrieve(
        framework, region, framework_version, py_version, instance_type, distribution, base_framework_version,
        container_version,
    )


def retrieve(
    framework: str,
    region: str,
    version: str | None = None,
    py_version: str | None = None,
    instance_type: str | None = None,
) -> str:
    """What `sagemaker.image_uris.retrieve(framework, region, version, py_version, instance_type,
    image_scope="training")` returns; raises ImageNotFound wherever it raises.

    The XGBoost and SKLearn estimators make this call in their constructors (with `framework_version` as the version),
    and a built-in algorithm is an `Estimator` whose image comes from it (`retrieve("linear-learner", region, "1")`, as
    the SageMaker Developer Guide writes it). HuggingFace needs its base framework: use `training_image_uri`.
    """
    if framework == _HUGGINGFACE:
        raise ImageNotFound("huggingface images need a base framework version: resolve them with training_image_uri")
    return _retrieve(framework, region, version, py_version, instance_type, None, None, None)


# get_training_image_uri()


def _base_framework(
    instance_type: str | None, tensorflow_version: str | None, pytorch_version: str | None
) -> tuple[str | None, str | None]:
    """The HuggingFace base framework ("pytorch2.1") and the container version the SDK starts from."""
    if tensorflow_version is None and pytorch_version is None:
        return None, None
    processor = _processor(instance_type, ("cpu", "gpu"), "HuggingFace training images")
    container_version = _HUGGINGFACE_GPU_CONTAINER_VERSION if processor == "gpu" else None
    if tensorflow_version is not None:
        return f"tensorflow{tensorflow_version}", container_version
    return f"pytorch{pytorch_version}", container_version


def _uses_smp_v2(distribution: Mapping[str, Any] | None) -> bool:
    """Whether the SDK swaps in the SageMaker model parallel v2 image (torch_distributed + smdistributed.modelparallel)."""
    if distribution is None:
        return False
    try:
        if "torch_distributed" not in distribution or "smdistributed" not in distribution:
            return False
        smdistributed = distribution["smdistributed"]
        return "modelparallel" in smdistributed and bool(smdistributed["modelparallel"].get("enabled", True))
    except (TypeError, AttributeError, KeyError) as error:
        raise ImageNotFound(
            f"distribution {distribution!r} is malformed: smdistributed.modelparallel must be a mapping"
        ) from error


def _smp_container_version(framework_version: str | None, instance_type: str | None) -> str:
    """The SDK's CUDA pick for SMP v2, by substring: "2.5" in the version, else p5 or "2.1".."2.4", else cu118."""
    if not isinstance(framework_version, str):
        raise ImageNotFound("SageMaker model parallel (smdistributed.modelparallel) images need a framework_version")
    if any(version in framework_version for version in _SMP_CU124_VERSIONS):
        return "cu124"
    if not isinstance(instance_type, str):
        raise ImageNotFound("SageMaker model parallel (smdistributed.modelparallel) images need an instance_type")
    if "p5" in instance_type or any(version in framework_version for version in _SMP_CU121_VERSIONS):
        return "cu121"
    return "cu118"


# retrieve(), for image_scope="training"


def _retrieve(
    framework: str,
    region: str,
    version: str | None,
    py_version: str | None,
    instance_type: str | None,
    distribution: Mapping[str, Any] | None,
    base_framework_version: str | None,
    container_version: str | None,
) -> str:
    inference_tool, catalog = _catalog(framework, instance_type)
    config = catalog.config
    original_version = version
    version = _resolved_version(version, catalog, framework)
    version_config = _version_config(config, version, framework)
    if framework == _HUGGINGFACE:
        version_config = _huggingface_base_config(version_config, base_framework_version, version)
    what = f"{catalog.name} {version} {catalog.scope} image"
    py_version = _resolved_py_version(py_version, version_config, framework, what)
    version_config = (version_config.get(py_version) if py_version is not None else None) or version_config
    registry = _registry(region, version_config, what)
    hostname = ecr_hostname(region)
    repository = _required(version_config, "repository", what)
    processor = _processor(instance_type, config.get("processors") or version_config.get("processors"), what)
    requested_container_version = container_version
    container_version = _container_version(version_config, repository, processor, container_version, what)
    if framework == _HUGGINGFACE:
        tag_prefix = _huggingface_tag_prefix(base_framework_version, original_version)
    else:
        tag_prefix = version_config.get("tag_prefix", version)
    if repository == f"{framework}-inference-graviton":
        container_version = f"{container_version}-sagemaker"
    _check_instance_not_deprecated(framework, instance_type, version)
    if requested_container_version is not None and not version_config.get("container_version"):
        _check_container_version_in_tag(framework, repository, requested_container_version, version)
    if framework in _ARM64_TAGS and catalog.scope == _INFERENCE_GRAVITON:
        tag = _arm64_tag(framework, version)
    else:
        tag = _image_tag(framework, tag_prefix, processor, py_version, container_version, inference_tool, instance_type,
                         distribution)
    if tag:
        repository += f":{tag}"
    return _ECR_URI.format(registry=registry, hostname=hostname, repository=repository)


class _Catalog(NamedTuple):
    name: str  # the image_uri_config file: the framework, "pytorch-neuron", "pytorch-smp"...
    scope: str  # "training", or "inference_graviton" on Graviton, or a file's only scope
    config: dict[str, Any]


def _catalog(framework: str, instance_type: str | None) -> tuple[str | None, _Catalog]:
    """The Neuron tool the instance calls for (or None) and the catalog scope the SDK reads the image from."""
    config_name, inference_tool = framework, None
    # `framework in TRAINIUM_ALLOWED_FRAMEWORKS` is the SDK's substring test against "pytorch".
    if framework == _HUGGINGFACE or framework in TRAINIUM_ALLOWED_FRAMEWORKS:
        family = instance_family(instance_type)
        if family.startswith(("inf", "trn")):
            inference_tool = "neuron"
            config_name = f"{framework}-{inference_tool}"
    scope = _INFERENCE_GRAVITON if _is_graviton(framework, instance_type) else TRAINING
    _check_instance_allows_framework(framework, instance_type)
    return inference_tool, _config_for_scope(config_name, scope)


def _is_graviton(framework: str, instance_type: str | None) -> bool:
    graviton_families = sdk_rules.constant("GRAVITON_ALLOWED_TARGET_INSTANCE_FAMILY")
    return framework in GRAVITON_ALLOWED_FRAMEWORKS and instance_family(instance_type) in graviton_families


def _check_instance_allows_framework(framework: str, instance_type: str | None) -> None:
    """Trainium takes only PyTorch ("trn" anywhere in the type, as the SDK tests); Graviton only a few frameworks."""
    if instance_type is None:
        return
    if "trn" in instance_type and framework not in TRAINIUM_ALLOWED_FRAMEWORKS:
        raise ImageNotFound(
            f"{framework} has no Trainium ({instance_type}) training image; frameworks for Trainium instances: "
            f"{TRAINIUM_ALLOWED_FRAMEWORKS}. Pick another instance_type."
        )
    graviton_families = sdk_rules.constant("GRAVITON_ALLOWED_TARGET_INSTANCE_FAMILY")
    if instance_family(instance_type) in graviton_families and framework not in GRAVITON_ALLOWED_FRAMEWORKS:
        raise ImageNotFound(
            f"{framework} has no Graviton ({instance_type}) image; frameworks for Graviton instances: "
            f"{', '.join(sorted(GRAVITON_ALLOWED_FRAMEWORKS))}. Pick another instance_type."
        )


def _config_for_scope(config_name: str, scope: str) -> _Catalog:
    """_config_for_framework_and_scope: a file with a single scope answers for every scope, as in the SDK."""
    config = sdk_rules.image_uri_config_file(config_name)
    if config is None:
        raise ImageNotFound(f"the SageMaker SDK has no image catalog {config_name}.json")
    scopes = config.get("scope", list(config))
    if len(scopes) == 1:
        scope = scopes[0]
    if scope not in scopes:
        raise ImageNotFound(f"{config_name} has no {scope} images; scopes: {', '.join(scopes)}.")
    return _Catalog(config_name, scope, config if "scope" in config else config[scope])


def _resolved_version(version: str | None, catalog: _Catalog, framework: str) -> str:
    """_validate_version_and_set_if_needed: a lone catalog version wins over any version asked for but its aliases;
    no version means the newest of the framework's training catalog (even when the image comes from another one)."""
    versions: list[str] = list(catalog.config["versions"])
    aliases: list[str] = list(catalog.config.get("version_aliases", {}))
    if len(versions) == 1 and version not in aliases:
        return versions[0]
    if not version:
        version = _latest_version(framework)
    if version is None or version not in versions + aliases:
        raise ImageNotFound(
            f"{catalog.name} has no {catalog.scope} image for framework_version {version!r}; change it to one of: "
            f"{', '.join(versions + aliases)}."
        )
    return version


def _version_config(config: Mapping[str, Any], version: str, framework: str) -> dict[str, Any]:
    full_version = config.get("version_aliases", {}).get(version, version)
    if full_version not in config["versions"]:
        raise ImageNotFound(f"{framework} version alias {version!r} points at {full_version!r}, which has no images")
    version_config: dict[str, Any] = config["versions"][full_version]
    return version_config


def _latest_version(framework: str) -> str | None:
    """_get_latest_version for the training scope, read from the framework's own catalog file."""
    config = sdk_rules.image_uri_config_file(framework)
    if not config:
        raise ImageNotFound(f"invalid framework {framework!r}: the SageMaker SDK has no image catalog for it")
    return _latest_version_in(config, TRAINING)


def _latest_version_in(config: Mapping[str, Any], scope: str) -> str | None:
    """_fetch_latest_version_from_config: a "latest" alias, else the newer of the first and last catalog versions."""
    scope_config = config.get(scope) or {}
    if "latest" in scope_config.get("version_aliases", {}):
        latest: str = scope_config["version_aliases"]["latest"]
        return latest
    versions: list[str]
    if "versions" in config:
        versions = list(config["versions"])
        if len(versions) == 1:
            return versions[0]
        if "latest" in (versions[0], versions[-1]):
            return None
    elif "versions" in scope_config:
        versions = list(scope_config["versions"])
    elif "versions" in config.get("processing", {}):
        versions = list(config["processing"]["versions"])
    else:
        return None
    top, bottom = versions[0], versions[-1]
    if top.endswith(".x") or bottom.endswith(".x"):
        return f"{max(int(top[:-2]), int(bottom[:-2]))}.x"
    return top if _catalog_order(top) >= _catalog_order(bottom) else bottom


_POST_RELEASE = re.compile(r"^(?P<release>[^-]+)-(?P<post>\d+)$")


def _catalog_order(version: str) -> tuple[tuple[int, ...], int]:
    """packaging's Version ordering for the catalog's versions: plain releases, and XGBoost's and scikit-learn's
    "1.4-2", which packaging reads as the post-release 1.4.post2 (after 1.4, before 1.4.1)."""
    match = _POST_RELEASE.match(version)
    if match is None:
        return release(version), -1
    return release(match["release"]), int(match["post"])


def _huggingface_base_config(
    version_config: Mapping[str, Any], base_framework_version: str | None, version: str
) -> dict[str, Any]:
    """A transformers version's entry for its base framework ("pytorch2.1" or an alias of it)."""
    aliases = version_config.get("version_aliases")
    if not aliases:  # the SDK fails here too (an UnboundLocalError)
        raise ImageNotFound(f"huggingface {version} lists no base framework versions")
    full_base = aliases.get(base_framework_version, base_framework_version)
    if full_base not in version_config:
        bases = [key for key in version_config if key != "version_aliases"] + list(aliases)
        raise ImageNotFound(
            f"huggingface {version} has no training image for base framework {base_framework_version!r} "
            f"(set pytorch_version or tensorflow_version); base frameworks offered: {', '.join(bases)}."
        )
    base_config: dict[str, Any] = version_config[full_base]
    return base_config


def _resolved_py_version(
    py_version: str | None, version_config: Mapping[str, Any], framework: str, what: str
) -> str | None:
    """_validate_py_version_and_set_if_needed: ignored where the catalog lists none, defaulted where it lists one."""
    # An entry with a repository lists its Python versions; otherwise it holds one entry per Python version.
    offered = version_config.get("py_versions") if "repository" in version_config else list(version_config)
    if not offered:
        return None
    if py_version is None and framework == "spark":
        return None
    if py_version is None and len(offered) == 1:
        only: str = offered[0]
        return only
    if py_version not in offered:
        raise ImageNotFound(f"{what}: py_version {py_version!r} is not offered; change it to one of: {', '.join(offered)}.")
    return py_version


def _registry(region: str, version_config: Mapping[str, Any], what: str) -> str:
    registries = _required(version_config, "registries", what)
    if region not in registries:
        raise ImageNotFound(f"{what}: not published in region {region!r}; regions: {', '.join(registries)}.")
    account: str = registries[region]
    return account


def _required(version_config: Mapping[str, Any], key: str, what: str) -> Any:
    if key not in version_config:
        raise ImageNotFound(f"{what}: the SDK's catalog entry has no {key}")
    return version_config[key]


def _container_version(
    version_config: Mapping[str, Any], repository: str, processor: str | None, container_version: str | None, what: str
) -> str | None:
    """The catalog's container version for the processor wins; Neuron repositories prefix the newest Neuron SDK."""
    by_processor = version_config.get("container_version")
    if by_processor:
        if processor not in by_processor:
            raise ImageNotFound(f"{what}: no container version for processor {processor!r}; offered: "
                                f"{', '.join(by_processor)}.")
        container_version = by_processor[processor]
    if repository in _NEURON_SDK_REPOSITORIES:
        sdk_versions = version_config.get("sdk_versions") or []
        if not sdk_versions or container_version is None:
            raise ImageNotFound(f"{what}: the catalog gives no Neuron SDK or container version for {repository}")
        container_version = f"{sorted(sdk_versions, reverse=True)[0]}-{container_version}"
    return container_version


def _huggingface_tag_prefix(base_framework_version: str | None, original_version: str | None) -> str:
    """"<base version>-transformers<version>", with both versions as the caller gave them (aliases and all, even a
    missing transformers version, which the SDK writes as "None")."""
    match = _BASE_FRAMEWORK.match(base_framework_version or "")
    if match is None:  # unreachable: the base framework was found in the catalog under this name
        raise ImageNotFound(f"huggingface base framework {base_framework_version!r} is neither pytorch nor tensorflow")
    return f"{match.group(2)}-transformers{original_version}"


def _check_instance_not_deprecated(framework: str, instance_type: str | None, version: str) -> None:
    first_without_p2 = _FIRST_VERSION_WITHOUT_P2.get(framework)
    if instance_family(instance_type) == "p2" and first_without_p2 and release(version) >= release(first_without_p2):
        raise ImageNotFound(
            f"P2 instances have no {framework} {version} images (none from PyTorch 1.13 and TensorFlow 2.12 on); "
            f"pick another instance_type ({_INSTANCE_TYPES_URL})."
        )


def _check_container_version_in_tag(framework: str, repository: str, container_version: str, version: str) -> None:
    """A container version the catalog does not define only belongs in the tags of a few image families (#3702)."""
    if (
        framework not in FRAMEWORKS_WITH_CONTAINER_VERSION_SUFFIX
        and repository != f"{framework}-inference-graviton"
        and "neuron" not in repository
    ):
        raise ImageNotFound(
            f"container_version {container_version!r} is not supported for framework {framework!r} version {version!r}"
            " (tensorflow_version and pytorch_version apply to huggingface only): the tag would name no published image."
        )


def _image_tag(
    framework: str,
    tag_prefix: str,
    processor: str | None,
    py_version: str | None,
    container_version: str | None,
    inference_tool: str | None,
    instance_type: str | None,
    distribution: Mapping[str, Any] | None,
) -> str:
    """_get_image_tag and _format_tag (XGBoost and scikit-learn on Graviton: `_arm64_tag`; Triton is not training)."""
    device = inference_tool or processor
    tag = "-".join(part for part in (tag_prefix, device, py_version, container_version) if part)
    if instance_type is not None and _auto_selects_container_version(instance_type, distribution):
        suffix = _AUTO_CONTAINER_VERSIONS.get(f"{framework}-{tag}")
        if suffix:
            tag = f"{tag}-{suffix}"
    return tag


def _arm64_tag(framework: str, version: str) -> str:
    """_get_image_tag's Graviton tags for XGBoost and scikit-learn: a fixed table (the SDK fails on a version it lacks)."""
    tags = _ARM64_TAGS[framework]
    if version not in tags:
        raise ImageNotFound(f"{framework} {version} has no Graviton (arm64) image; versions with one: {', '.join(tags)}.")
    return tags[version]


def _auto_selects_container_version(instance_type: str, distribution: Mapping[str, Any] | None) -> bool:
    """_should_auto_select_container_version: a p4d instance or an smdistributed distribution (tested either way)."""
    try:
        smdistributed = bool(distribution) and "smdistributed" in distribution  # type: ignore[operator]
    except TypeError as error:
        raise ImageNotFound(f"distribution {distribution!r} is not a mapping") from error
    return instance_family(instance_type) == "p4d" or smdistributed


# Shared helpers


def cluster_image_instance_type(instance_types: Iterable[str]) -> str:
    """EstimatorBase._get_instance_type for a heterogeneous cluster (instance_groups, no instance_type): the image is
    resolved for the first group whose family is GPU (g*, p*), else for the first group's type."""
    types = list(instance_types)
    if not types:
        raise ImageNotFound("instance_groups must name at least one group when instance_type is not set")
    for instance_type in types:
        family = instance_family(instance_type)
        if not family:
            raise ImageNotFound(f"invalid SageMaker instance type for training with heterogeneous clusters: "
                                f"{instance_type!r}; for options see {_INSTANCE_TYPES_URL}")
        if family[0] in ("g", "p"):
            return instance_type
    return types[0]


def instance_family(instance_type: str | None) -> str:
    """sagemaker.utils.get_instance_type_family: "p4d" for "ml.p4d.24xlarge" (or "ml_p4d"), else ""."""
    if not isinstance(instance_type, str):
        return ""
    match = _INSTANCE_FAMILY.match(instance_type)
    return match[1] if match else ""


def _processor(instance_type: str | None, processors: Iterable[str] | None, what: str) -> str | None:
    """_processor: the catalog's processor for an instance type (an exact family, inf, trn, gpu for g*/p*, else cpu)."""
    offered = list(processors or [])
    if not offered:
        return None
    if len(offered) == 1 and not instance_type:
        return offered[0]
    if not instance_type:
        raise ImageNotFound(f"{what}: an instance_type is needed to pick the image ({', '.join(offered)}).")
    family = instance_family(instance_type)
    if instance_type.startswith("local"):
        processor = "cpu" if instance_type == "local" else "gpu"
    elif instance_type.startswith("neuron"):
        processor = "neuron"
    elif not family:
        raise ImageNotFound(f"invalid SageMaker instance type {instance_type!r}; for options see {_INSTANCE_TYPES_URL}")
    elif family in offered:
        processor = family
    elif family.startswith("inf"):
        processor = "inf"
    elif family.startswith("trn"):
        processor = "trn"
    else:
        processor = "gpu" if family[0] in ("g", "p") else "cpu"
    if processor not in offered:
        raise ImageNotFound(
            f"{what}: no {processor} image (instance_type {instance_type}); processors offered: {', '.join(offered)}. "
            "Pick an instance_type with one of them."
        )
    return processor


def release(version: str) -> tuple[int, ...]:
    """packaging's Version ordering for the plain release numbers the catalog uses ("2.0" == "2.0.0")."""
    match = _RELEASE.match(version)
    if match is None:
        raise ImageNotFound(f"version {version!r} is not a plain release number")
    numbers = [int(part) for part in match[1].split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def release_or_none(version: str) -> tuple[int, ...] | None:
    """`release`, or None for a version that is not a plain release number (the catalog's own check reports it)."""
    try:
        return release(version)
    except ImageNotFound:
        return None


def ecr_hostname(region: str) -> str:
    """The ECR host the SDK puts in image URIs: botocore's EndpointResolver.construct_endpoint("ecr", region),
    so "ecr.<region>.amazonaws.com", ".amazonaws.com.cn" in China, and each partition's own DNS suffix."""
    for partition in sdk_rules.botocore_endpoints()["partitions"]:
        hostname = _partition_hostname(partition, "ecr", region)
        if hostname is not None:
            return hostname
    if region == "il-central-1":  # the SDK's fallback for botocore releases that predate the region
        return f"ecr.{region}.amazonaws.com"
    raise ImageNotFound(f"region {region!r} is in no AWS partition botocore knows")


def _partition_hostname(partition: Mapping[str, Any], service: str, region: str) -> str | None:
    """EndpointResolver._endpoint_for_partition + _resolve, without the FIPS and dual-stack variants."""
    service_data = partition["services"].get(service, {"endpoints": {}})
    endpoint_name = region
    if region not in service_data["endpoints"]:
        if not _region_in_partition(partition, region):
            return None
        if service_data.get("partitionEndpoint") and not service_data.get("isRegionalized", True):
            endpoint_name = service_data["partitionEndpoint"]
    endpoint = service_data.get("endpoints", {}).get(endpoint_name, {})
    # botocore merges the endpoint's own keys over the service's defaults over the partition's defaults.
    merged = {**partition.get("defaults", {}), **service_data.get("defaults", {}), **endpoint}
    if "hostname" not in merged:  # botocore fails too (a KeyError)
        raise ImageNotFound(f"botocore's endpoint data gives no {service} hostname for {region!r}")
    dns_suffix = endpoint.get("dnsSuffix", partition["dnsSuffix"])
    return str(merged["hostname"]).format(service=service, region=endpoint_name, dnsSuffix=dns_suffix)


def _region_in_partition(partition: Mapping[str, Any], region: str) -> bool:
    if region in partition["regions"]:
        return True
    return "regionRegex" in partition and re.match(partition["regionRegex"], region) is not None
