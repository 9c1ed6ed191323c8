"""What an AWS framework training image holds: the image each URI names, and the data read from its Dockerfile.

The data (compiler/facts/data/image_packages.json) is written from aws/deep-learning-containers by hand (`installs`)
and by scripts/image_packages.py (`packages`, their dependencies as pip resolves them); these tests hold it to its own
shape and to literals read from the Dockerfiles it names.
"""

from __future__ import annotations

import importlib.util
import json
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

import pytest

from compiler.facts.image_packages import PACKAGES_FILE, dlc_packages, image_key

DATA = json.loads(resources.files("compiler.facts").joinpath(*PACKAGES_FILE).read_text())


@pytest.mark.parametrize(("repository", "tag", "key"), [
    ("pytorch-training", "2.3.0-gpu-py311", "pytorch-training 2.3 gpu"),
    ("pytorch-training", "2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker", "pytorch-training 2.3 gpu"),
    ("pytorch-training", "2.8.0-cpu-py312", "pytorch-training 2.8 cpu"),
    ("tensorflow-training", "2.14.1-gpu-py310-cu118-ubuntu20.04-sagemaker", "tensorflow-training 2.14 gpu"),
    ("tensorflow-training", "2.14-cpu-py310", "tensorflow-training 2.14 cpu"),
    ("huggingface-pytorch-training", "2.1.0-transformers4.36.0-gpu-py310-cu121-ubuntu20.04",
     "huggingface-pytorch-training 2.1 gpu"),
    ("pytorch-training-neuronx", "1.13.1-neuronx-py310-sdk2.18.0-ubuntu20.04", None),  # no cpu or gpu in the tag
    ("pytorch-training", "latest", None),
    ("pytorch-training", "2-gpu-py311", None),
])
def test_an_images_key_is_its_repository_version_and_processor(repository: str, tag: str, key: str | None) -> None:
    assert image_key(repository, tag) == key


def test_an_image_whose_dockerfile_was_not_read_has_no_packages() -> None:
    assert dlc_packages("pytorch-training", "1.12.1-gpu-py38") is None  # not among the Dockerfiles read
    assert dlc_packages("pytorch-training-neuronx", "1.13.1-neuronx-py310-sdk2.18.0-ubuntu20.04") is None
    assert dlc_packages("my-trainer", "2.3.0-gpu-py311") is None


@pytest.mark.parametrize("key", sorted(DATA["images"]))
def test_each_image_holds_what_its_dockerfile_installs_and_names_its_source(key: str) -> None:
    image = DATA["images"][key]
    repository, version, processor = key.split(" ")
    assert image_key(repository, f"{version}.0-{processor}-py3") == key
    assert image["source"].startswith("aws/deep-learning-containers ") and f"/{version}/" in image["source"]
    assert image["python"] in {"3.9", "3.10", "3.11", "3.12"}
    assert set(image["installs"]) <= set(image["packages"])
    assert set(image["pins"]) <= set(image["installs"])


@pytest.mark.parametrize(("key", "installed"), [
    # pytorch/training/docker/2.3/py3/cu121/Dockerfile.gpu: the mamba and pip lines of the SageMaker image's stages
    ("pytorch-training 2.3 gpu", {"torch", "torchvision", "torchaudio", "torchtext", "accelerate", "fastai",
                                  "opencv-python", "torchtnt", "flash-attn", "requests", "pyyaml", "tqdm"}),
    # huggingface/pytorch/training/docker/2.1/py3/cu121/Dockerfile.gpu, and its FROM pytorch-training:2.1.0
    ("huggingface-pytorch-training 2.1 gpu", {"transformers", "datasets", "diffusers", "evaluate", "accelerate", "trl",
                                              "peft", "bitsandbytes", "torch", "torchvision"}),
])
def test_the_dockerfiles_literals_are_there(key: str, installed: set[str]) -> None:
    assert installed <= set(DATA["images"][key]["installs"])


def test_what_an_image_uninstalls_for_good_is_not_there() -> None:
    """The HuggingFace images from PyTorch 2.1 on run `pip uninstall -y transformer-engine flash-attn pyarrow
    cryptography` and install all but transformer-engine again."""
    packages = dlc_packages("huggingface-pytorch-training", "2.1.0-transformers4.36.0-gpu-py310-cu121-ubuntu20.04")
    assert packages is not None
    assert "transformer-engine" not in packages and {"flash-attn", "pyarrow", "cryptography"} <= packages


def test_a_package_built_from_source_brings_what_its_setup_py_requires() -> None:
    """The PyTorch 2.3 GPU image builds flash-attn 2.0.4 from source (no wheel on the index), and flash-attn's setup.py
    requires `torch`, `einops`, `packaging`, `ninja`: einops is in the image through it alone."""
    assert DATA["without_wheels"]["flash-attn"]["requires"] == ["torch", "einops", "packaging", "ninja"]
    assert "einops" in DATA["images"]["pytorch-training 2.3 gpu"]["packages"]
    assert "flash-attn" not in DATA["images"]["pytorch-training 2.3 cpu"]["installs"]  # a GPU build only
    assert all(entry["source"] for entry in DATA["without_wheels"].values())


def _script():
    """scripts/image_packages.py, which writes `packages` (a script, not a package: loaded by path)."""
    spec = importlib.util.spec_from_file_location("image_packages_script",
                                                  Path(__file__).parents[3] / "scripts" / "image_packages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


METADATA = {  # requirement -> Requires-Dist, as pip's report gives it (None: pip found no wheel)
    "a[x]": ["b>=1", "c ; extra == 'x'", "d ; python_version < '3.10'", "e ; sys_platform == 'win32'"],
    "b": ["A"],  # a cycle, and a name written otherwise
    "c": [], "d": [], "e": [], "built-from-source": None, "c-d": [],
}


@pytest.mark.parametrize(("python", "expected"), [("3.11", ["a", "b", "built-from-source", "c", "c-d"]),
                                                   ("3.9", ["a", "b", "built-from-source", "c", "c-d", "d"])])
def test_the_closure_follows_extras_markers_and_what_a_source_build_requires(monkeypatch, python, expected) -> None:
    script = _script()
    monkeypatch.setattr(script, "requires_dist", METADATA.__getitem__)
    with ThreadPoolExecutor(2) as pool:
        walker = script.Walker(pool, {"built-from-source": ["C_D"]})
        assert walker.closure({"a": "a[x]", "built-from-source": "built-from-source"}, python) == expected
