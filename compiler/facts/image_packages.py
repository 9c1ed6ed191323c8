"""What Python distributions an AWS framework training image is known to hold, for the requirements check
(compiler/rules/requirements.py): with network isolation on, the training toolkit's `pip install -r requirements.txt`
finds only what the image already has.

Only what a public source says is listed:

- every SageMaker framework training image (PyTorch, TensorFlow, HuggingFace) runs the SageMaker training toolkit,
  whose `install_requires` are therefore installed too (aws/sagemaker-training-toolkit, `setup.py`,
  `required_packages`); which versions is not said anywhere we can read offline;
- the framework itself, at the version the image is named by (the SDK's image catalog, `image_uri_config/<framework>.
  json`: a PyTorch 2.2.0 image holds torch 2.2.0, a HuggingFace image transformers at `transformers_version` and its
  base framework at `pytorch_version` or `tensorflow_version`);
- for the AWS Deep Learning Containers whose Dockerfile was read (data/image_packages.json, by repository, framework
  version and processor: `pytorch-training 2.3 gpu`), what the Dockerfile installs (pip, conda and mamba lines of the
  stages the SageMaker image is built from, and what a HuggingFace image's base image holds), with what those
  packages depend on as pip resolves them (`scripts/image_packages.py` rewrites that from the installs). Names only:
  which version the image holds of each is not said here. For such an image a package outside the list is taken to be
  absent; for any other image, only "not known".
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

# aws/sagemaker-training-toolkit, setup.py `required_packages` (and the toolkit itself), names normalised as pip
# compares them (PEP 503).
TOOLKIT_PACKAGES = frozenset({
    "sagemaker-training", "numpy", "boto3", "botocore", "six", "pip", "retrying", "gevent", "inotify-simple",
    "werkzeug", "paramiko", "psutil", "protobuf", "scipy",
})

# The distribution each framework image is named for.
FRAMEWORK_PACKAGE = {"pytorch": "torch", "tensorflow": "tensorflow", "huggingface": "transformers"}

# The image packages data, inside this package (for messages and the script that rewrites it).
PACKAGES_FILE = ("data", "image_packages.json")


@cache
def _images() -> dict[str, frozenset[str]]:
    data = json.loads(resources.files("compiler.facts").joinpath(*PACKAGES_FILE).read_text())
    return {key: frozenset(entry["packages"]) for key, entry in data["images"].items()}


def image_key(repository: str, tag: str) -> str | None:
    """`pytorch-training`, `2.3.0-gpu-py311` -> `pytorch-training 2.3 gpu` (a HuggingFace tag leads with its base
    framework's version: `2.1.0-transformers4.36.0-gpu-py310-cu121-ubuntu20.04`); None without a version or a
    processor in the tag."""
    version = re.match(r"(\d+)\.(\d+)", tag)
    processor = next((p for p in tag.split("-") if p in ("gpu", "cpu")), None)
    if version is None or processor is None:
        return None
    return f"{repository} {version[1]}.{version[2]} {processor}"


def dlc_packages(repository: str, tag: str) -> frozenset[str] | None:
    """The distributions (PEP 503 names) an AWS framework training image holds, where its Dockerfile was read; None
    for any other image."""
    key = image_key(repository, tag)
    return _images().get(key) if key is not None else None
