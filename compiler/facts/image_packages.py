"""What Python distributions an AWS framework training image is known to hold, for the requirements check
(compiler/rules/requirements.py): with network isolation on, the training toolkit's `pip install -r requirements.txt`
finds only what the image already has.

Only what a public source says is listed, so a package missing here is "not known to be there", never "known absent":

- every SageMaker framework training image (PyTorch, TensorFlow, HuggingFace) runs the SageMaker training toolkit,
  whose `install_requires` are therefore installed too (aws/sagemaker-training-toolkit, `setup.py`,
  `required_packages`); which versions is not said anywhere we can read offline;
- the framework itself, at the version the image is named by (the SDK's image catalog, `image_uri_config/<framework>.
  json`: a PyTorch 2.2.0 image holds torch 2.2.0, a HuggingFace image transformers at `transformers_version` and its
  base framework at `pytorch_version` or `tensorflow_version`).
"""

from __future__ import annotations

# aws/sagemaker-training-toolkit, setup.py `required_packages` (and the toolkit itself), names normalised as pip
# compares them (PEP 503).
TOOLKIT_PACKAGES = frozenset({
    "sagemaker-training", "numpy", "boto3", "botocore", "six", "pip", "retrying", "gevent", "inotify-simple",
    "werkzeug", "paramiko", "psutil", "protobuf", "scipy",
})

# The distribution each framework image is named for.
FRAMEWORK_PACKAGE = {"pytorch": "torch", "tensorflow": "tensorflow", "huggingface": "transformers"}
