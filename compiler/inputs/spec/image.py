"""Which estimator a spec stands for, and where its image comes from.

- `framework: pytorch | tensorflow | huggingface`: that SDK estimator class. Without `image_uri`/`image` the SDK
  resolves the AWS Deep Learning Container from the versions; with one, the image wins and the versions still
  drive the distribution rules (as in the SDK).
- `framework: xgboost | sklearn`: the XGBoost and SKLearn estimators (script mode), whose constructors resolve their
  image with `image_uris.retrieve` from framework_version (and py_version, py3 by default and the only one).
- no `framework`, with `image_uri` or `image`: the generic `sagemaker.estimator.Estimator` (image only; its
  hyperparameters are sent with `str()`, it adds no `sagemaker_*` keys and ignores `distribution`).
- no `framework`, with `image: {algorithm, version}`: a SageMaker built-in algorithm, which is that generic Estimator
  on the image `image_uris.retrieve(algorithm, region, version)` names in each environment's region.
"""

from __future__ import annotations

from compiler.facts import algorithms
from compiler.inputs.model import (
    FRAMEWORKS,
    SCRIPT_MODE_TABULAR,
    AlgorithmImage,
    Estimator,
    FrameworkImage,
    Image,
    ProjectImage,
    UriImage,
)
from compiler.inputs.reader import Reader, suggest
from compiler.sdk import sdk_rules
from compiler.sdk.framework_images import release, release_or_none

_VERSION_KEYS = ("framework_version", "py_version", "pytorch_version", "tensorflow_version", "transformers_version")
_HF_ONLY = ("transformers_version", "pytorch_version", "tensorflow_version")
# The XGBoost and SKLearn estimators (SCRIPT_MODE_TABULAR) retrieve their own image; py3 is their default py_version
# and the only one.
_TABULAR_PY_VERSION = "py3"
_ALGORITHMS_DOC = "docs/workload-spec.md#built-in-algorithms"
_REPOSITORY = r"[a-z0-9]+(?:[._/-][a-z0-9]+)*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
# An image reference: registry/repository[:tag][@digest]. SageMaker pulls training images from ECR.
IMAGE_URI = (r"[a-z0-9.-]+(?::[0-9]+)?/[a-z0-9]+(?:[._/-][a-z0-9]+)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
             r"(?:@sha256:[0-9a-f]{64})?")


def _version(r: Reader, key: str) -> str | None:
    value = r.raw.get(key)
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        r.problem(key, f"write versions as quoted text ('{value}'): YAML reads {value} as a number, and 2.10 would "
                  "become 2.1")
        return None
    return r.string(key, max_length=32)


def catalog_versions(name: str) -> list[str]:
    """The versions of a built-in algorithm's training images in the SDK's catalog, as it lists them."""
    catalog = sdk_rules.image_uri_config_file(name) or {}
    return list((catalog.get("training") or catalog).get("versions") or ())


def _algorithm_hint(value: object) -> str | None:
    """The built-in algorithm a `framework:` value names (k-means, linear_learner, ...), if any."""
    if not isinstance(value, str):
        return None
    spelled = value.strip().lower().replace("_", "-")
    if spelled in algorithms.ALGORITHMS and spelled not in FRAMEWORKS:
        return spelled
    return suggest(spelled, [n for n in algorithms.names() if n not in FRAMEWORKS], cutoff=0.8)


def _framework(r: Reader) -> str:
    algorithm = _algorithm_hint(r.raw.get("framework"))
    if algorithm is not None:
        versions = catalog_versions(algorithm)
        version = versions[0] if len(versions) == 1 else "<version>"
        r.problem("framework", f"{algorithm} is a SageMaker built-in algorithm, not an estimator: remove framework and "
                  f"write image: {{algorithm: {algorithm}, version: \"{version}\"}}, which resolves its image in every "
                  f"environment's region ({_ALGORITHMS_DOC})")
        return "generic"
    named = r.string("framework", choices=FRAMEWORKS)
    if named is not None:
        return named
    if r.has("framework"):
        return "pytorch"  # reported above; keep checking the rest as PyTorch
    given = [k for k in _VERSION_KEYS if r.has(k)]
    if given:
        r.problem("framework", f"{given[0]} names a framework image: say which framework ({', '.join(FRAMEWORKS)})")
        return "pytorch"
    return "generic"


def _project_image(image: Reader) -> ProjectImage | None:
    image.unknown_keys({"repository", "tag"})
    repository = image.string("repository", required=True, pattern=_REPOSITORY,
                              explain="must name one of this project's ECR repositories, e.g. gpt-trainer")
    tag = image.string("tag", pattern=_TAG, explain="must be a Docker tag (letters, digits, '_', '.', '-'; at most 128)")
    return ProjectImage(repository=repository, tag=tag) if repository else None


def _algorithm_image(image: Reader) -> AlgorithmImage | None:
    """`image: {algorithm, version}`: a name of the table in compiler/facts/algorithms.py, and a version of the SDK's
    catalog (optional where the catalog has one only, as `image_uris.retrieve` picks it then)."""
    image.unknown_keys({"algorithm", "version"})
    name = image.string("algorithm", required=True, choices=algorithms.names())
    version = _version(image, "version")
    if name is None:
        return None
    algorithm = algorithms.ALGORITHMS[name]
    versions = catalog_versions(name)
    if version is None and len(versions) == 1:
        version = versions[0]
    if version is None:
        offered = ", ".join(v for v in versions if v not in algorithm.deprecated_versions)
        image.problem("version", f"{name} has several versions in the SDK's image catalog: name one ({offered})")
        return None
    if version in algorithm.deprecated_versions:
        image.problem("version", f"{name}:{version} is the deprecated {algorithm.title} 0.72 image, which the SageMaker "
                      f"Developer Guide says not to use ({algorithms.XGBOOST_DEPRECATED_SOURCE}): name a version, "
                      "e.g. 1.7-1")
        return None
    return AlgorithmImage(name, version)


def _image_mapping(r: Reader) -> ProjectImage | AlgorithmImage | None:
    image = r.child("image")
    if image is None:
        return None
    if image.has("algorithm") or image.has("version"):
        return _algorithm_image(image)
    return _project_image(image)


def _image(r: Reader, framework: str) -> Image:
    uri = r.string("image_uri", max_length=255, pattern=IMAGE_URI,
                   explain="must be an image URI such as 123456789012.dkr.ecr.us-east-1.amazonaws.com/repo:tag")
    mapped = _image_mapping(r)
    if uri is not None and mapped is not None:
        r.problem("image", "give image_uri or image, not both")
    if uri is not None:
        return UriImage(uri)
    if isinstance(mapped, AlgorithmImage) and r.has("framework"):
        r.problem("framework", f"image: {{algorithm: {mapped.algorithm}}} is a built-in algorithm, which runs its own "
                  "code with the generic Estimator: remove framework (for a script of your own in an AWS framework "
                  "image, keep framework and remove image)")
    if mapped is not None:
        return mapped
    if framework == "generic" and not r.has("image_uri") and not r.has("image"):
        r.problem("image_uri", "an image-only estimator needs image_uri (or image: {repository} for an image this "
                  "project builds, or image: {algorithm, version} for a SageMaker built-in algorithm); for an AWS "
                  "framework image, name the framework and its versions")
    return FrameworkImage()


# TensorFlow._HIGHEST_LEGACY_MODE_ONLY_VERSION: up to here only the legacy (pre-script-mode) containers exist.
_HIGHEST_LEGACY_ONLY_TENSORFLOW = "1.10.0"


def _legacy_only_tensorflow(version: str) -> bool:
    numbers = release_or_none(version)
    return numbers is not None and numbers <= release(_HIGHEST_LEGACY_ONLY_TENSORFLOW)


def _versions_needed(r: Reader, framework: str, estimator: Estimator) -> None:
    """`validate_version_or_image_args` and HuggingFace's `_validate_args`, for framework images only."""
    if framework == "huggingface":
        if estimator.framework_version is None:
            r.problem("transformers_version", "a HuggingFace image needs transformers_version (or give image_uri)")
        if (estimator.pytorch_version is None) == (estimator.tensorflow_version is None):
            r.problem("pytorch_version", "a HuggingFace image needs exactly one of pytorch_version and "
                      "tensorflow_version")
        base = estimator.pytorch_version or estimator.tensorflow_version
        if base and estimator.framework_version and len(base.split(".")) != len(estimator.framework_version.split(".")):
            base_key = "pytorch_version" if estimator.pytorch_version else "tensorflow_version"
            short = " and ".join(".".join(v.split(".")[:2]) for v in (estimator.framework_version, base))
            r.problem("transformers_version", f"{estimator.framework_version} with {base_key} {base}: write both short "
                      f"({short}) or both in full (as the SDK's image catalog lists them, e.g. 4.36.0 and 2.1.0), as "
                      "the SDK requires")
    elif estimator.framework_version is None:
        needs = "framework_version" if framework in SCRIPT_MODE_TABULAR else "framework_version and py_version"
        r.problem("framework_version", f"a {framework} framework image needs {needs} (or give image_uri)")
    elif framework == "tensorflow" and _legacy_only_tensorflow(estimator.framework_version):
        r.problem("framework_version", f"TensorFlow {estimator.framework_version} runs only in the SDK's legacy mode, "
                  "which its estimator refuses without image_uri: use 1.11 or newer, or give the legacy image as "
                  "image_uri with model_dir: false")
    if estimator.py_version is None and (estimator.framework_version or framework == "huggingface"):
        r.problem("py_version", "is required with a framework image, e.g. py311")


def _tabular_versions(r: Reader, estimator: Estimator, own_image: bool) -> None:
    """The XGBoost and SKLearn estimators' own refusals: py3 only (`xgboost.utils.validate_py_version`, SKLearn's
    AttributeError), the XGBoost versions of `XGBOOST_UNSUPPORTED_VERSIONS`, and XGBoost's framework_version, which its
    constructor requires even with an image of your own. XGBoost 1 (and its alias latest) resolves to the 0.72
    built-in algorithm image, which runs no script: refused with the guide's word."""
    framework, version = estimator.framework, estimator.framework_version
    if estimator.py_version not in (None, _TABULAR_PY_VERSION):  # None: not text, reported already
        r.problem("py_version", f"the {framework} estimator takes only py3 (its images have one Python); write py3 or "
                  "remove py_version")
    if framework != "xgboost":
        return
    if version is None:
        if own_image and not r.has("framework_version"):  # without an image, _versions_needed says so
            r.problem("framework_version", "the XGBoost estimator requires framework_version (its first argument after "
                      "entry_point), e.g. 1.7-1")
        return
    unsupported = sdk_rules.module_constants("xgboost/defaults.py")["XGBOOST_UNSUPPORTED_VERSIONS"]
    if version.split("-")[0] in unsupported:
        r.problem("framework_version", f"{unsupported[version.split('-')[0]]} (the SDK refuses {version})")
    elif version in algorithms.ALGORITHMS["xgboost"].deprecated_versions:
        r.problem("framework_version", f"XGBoost {version} resolves to the deprecated XGBoost 0.72 built-in algorithm "
                  "image, which runs no training script and which the SageMaker Developer Guide says not to use "
                  f"({algorithms.XGBOOST_DEPRECATED_SOURCE}): write a version such as 1.7-1")


def _huggingface_framework_version(r: Reader, versions: dict[str, str | None]) -> None:
    """The HuggingFace estimator overwrites framework_version with transformers_version: the value is dropped."""
    base = versions["pytorch_version"] or versions["tensorflow_version"]
    if versions["framework_version"] == base:  # an AWS notebook repeats pytorch_version there: harmless
        r.warn("framework_version", "the HuggingFace estimator ignores it (transformers_version and the base "
               "framework's version choose the image); remove it")
    else:
        r.problem("framework_version", "the HuggingFace estimator ignores it: transformers_version and "
                  "pytorch_version (or tensorflow_version) choose the image; remove it, or put the version there")


def read_estimator(r: Reader) -> tuple[Estimator, Image]:
    framework = _framework(r)
    versions = {k: _version(r, k) for k in _VERSION_KEYS}
    for key in _HF_ONLY:
        if versions[key] is not None and framework != "huggingface":
            r.problem(key, f"is a HuggingFace estimator argument; the {framework} estimator would ignore it")
    if framework == "huggingface" and versions["framework_version"] is not None:
        _huggingface_framework_version(r, versions)
    model_dir = _model_dir(r, framework)
    py_version = versions["py_version"]
    if framework in SCRIPT_MODE_TABULAR and py_version is None and not r.has("py_version"):
        py_version = _TABULAR_PY_VERSION  # the XGBoost and SKLearn estimators' default
    estimator = Estimator(
        framework=framework,  # type: ignore[arg-type]
        framework_version=versions["transformers_version"] if framework == "huggingface" else versions["framework_version"],
        py_version=py_version, pytorch_version=versions["pytorch_version"],
        tensorflow_version=versions["tensorflow_version"], model_dir=model_dir,
    )
    image = _image(r, framework)
    if framework in SCRIPT_MODE_TABULAR:
        _tabular_versions(r, estimator, own_image=not isinstance(image, FrameworkImage))
    if framework != "generic" and isinstance(image, FrameworkImage):
        _versions_needed(r, framework, estimator)
    elif framework == "huggingface" and estimator.py_version is None:
        r.problem("py_version", "the HuggingFace estimator requires py_version even with an image of your own (it is "
                  "its first argument): write the image's Python version, e.g. py310")
    return estimator, image


def _model_dir(r: Reader, framework: str) -> str | bool | None:
    value = r.raw.get("model_dir")
    if value is None:
        return None
    if framework != "tensorflow":
        # The other estimators take it only through **kwargs and drop it: they send no model_dir hyperparameter.
        if value is False:  # what they do anyway: harmless, as AWS's notebooks write it for PyTorch
            r.warn("model_dir", f"is a TensorFlow estimator argument: the {framework} estimator ignores it and sends "
                   "no model_dir hyperparameter, as false asks; remove it")
        else:
            r.problem("model_dir", f"is a TensorFlow estimator argument: the {framework} estimator ignores it and "
                      "sends no model_dir hyperparameter; remove it (the job saves what the script writes to "
                      "/opt/ml/model, SM_MODEL_DIR)")
        return None
    if value is False:
        return False
    if not isinstance(value, str) or not value.startswith("/"):
        r.problem("model_dir", "must be false (no model_dir hyperparameter) or a path in the container such as "
                  "/opt/ml/model; the default, s3://<output bucket>/<workload>/<job>/model, is the platform's")
        return None
    return value
