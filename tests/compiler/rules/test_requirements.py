"""A bundle's requirements.txt installs without a network, or validate refuses it before anything is billed (issue 36).

The base spec (tests/compiler/conftest.py) is a two-node torchrun job on the PyTorch 2.3.0 image with `source_dir:
code`, isolated by default. Each case compiles it through the pipeline's own `compile_workload`, which runs every
compiled rule. pip itself is the judge of what needs an index: `test_pip_itself_agrees` runs the test environment's
pip with an index that cannot be reached and compares its verdict with the rule's.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from compiler.inputs.environments import Environment
from compiler.inputs.image_builds import BaseImage, ImageBuild
from compiler.inputs.requirements import read_requirements
from compiler.inputs.sourcedir import scan
from compiler.inputs.tracked import NotInGitWarning
from compiler.pipeline import CompiledWorkload, _Bundles, compile_workload
from compiler.rules.requirements import ImageContents, image_contents, judge
from tests.project import ENVIRONMENTS

DEV, PROD = ENVIRONMENTS["dev"], ENVIRONMENTS["prod"]  # dev: no NAT gateway; prod: no NAT, DNS firewall blocks
REASON = "installs its requirements from PyPI at start"


def compiled(make, spec_dir: Path, requirements: str | None, env: Environment = DEV,
             images: dict[str, ImageBuild] | None = None, **changes) -> tuple[CompiledWorkload, list[str]]:
    if requirements is not None:
        (spec_dir / "code" / "requirements.txt").write_text(requirements)
    workload = make(**changes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotInGitWarning)  # the test's folder is not a git work tree: every file ships
        result, problems = compile_workload(workload, env, images or {}, _Bundles(spec_dir))
    return result, [str(p) for p in problems]


def refused(make, spec_dir: Path, requirements: str, *words: str, **changes) -> str:
    _, problems = compiled(make, spec_dir, requirements, **changes)
    found = [p for p in problems if "source_dir: " in p and "requirements.txt" in p]
    assert found, problems
    for word in words:
        assert word in found[0], (word, found[0])
    return found[0]


def passes(make, spec_dir: Path, requirements: str | None, **changes) -> tuple[str, ...]:
    result, problems = compiled(make, spec_dir, requirements, **changes)
    assert problems == [], problems
    return result.warnings


# ------------------------------------------------------------------------------------------------ framework images


def test_a_package_the_image_lacks_is_refused_with_every_way_out(make, spec_dir) -> None:
    refused(make, spec_dir, "transformers==4.41.2\ndatasets>=2.19  # the data\n",
            "`transformers==4.41.2` (line 1)", "`datasets>=2.19` (line 2)", "not in the PyTorch 2.3.0 training image",
            "network isolation", "training-platform:images", "enable_network_isolation: false",
            "network_isolation_off_reason", "nat_gateway: true for environment dev")


def test_the_framework_and_the_toolkits_packages_pass(make, spec_dir) -> None:
    """The PyTorch image holds torch at framework_version; the training toolkit's install_requires (aws/sagemaker-
    training-toolkit setup.py: numpy, boto3, six, pip, retrying, gevent, inotify_simple, werkzeug, paramiko, psutil,
    protobuf, scipy, botocore) are in every framework image: written as people write them."""
    assert passes(make, spec_dir, "torch>=2.3\nnumpy\nscipy\nboto3\nInotify_Simple\nprotobuf ; sys_platform == "
                  "'linux'\n") == ()


@pytest.mark.parametrize(("line", "ok"), [("torch>=2.3", True), ("torch==2.3.0", True), ("torch>2.3.0", False),
                                           ("torch>=2.4", False), ("torch<2.3", False), ("torch~=2.3.0", True)])
def test_the_framework_version_is_held_to_the_line_at_its_boundary(make, spec_dir, line, ok) -> None:
    if ok:
        assert passes(make, spec_dir, f"{line}\n") == ()
    else:
        refused(make, spec_dir, f"{line}\n", f"`{line}` (line 1) refuses the torch 2.3.0 of the PyTorch 2.3.0")


def test_a_version_of_a_toolkit_package_is_a_warning_not_a_refusal(make, spec_dir) -> None:
    warned = passes(make, spec_dir, "numpy>=1.24\n")
    assert len(warned) == 1 and "numpy" in warned[0] and "version not known here" in warned[0]


# What the image's own Dockerfile installs is in the image (aws/deep-learning-containers,
# pytorch/training/docker/2.3/py3/cu121/Dockerfile.gpu): `mamba install ... pytorch=${PYTORCH_VERSION} ... torchvision
# torchaudio torchtext`, `mamba install -c conda-forge -c fastai accelerate fastai`, `pip install opencv-python`,
# `pip install torchtnt`, and conda's `requests`, `pyyaml`, `pillow`, `h5py`, `tqdm`, `fsspec`.
DOCKERFILE_PYTORCH_2_3 = ["torchvision", "torchaudio", "torchtext", "accelerate", "fastai", "opencv-python", "torchtnt",
                          "requests", "PyYAML", "Pillow", "h5py", "tqdm", "fsspec"]


def test_what_the_images_dockerfile_installs_passes(make, spec_dir) -> None:
    assert passes(make, spec_dir, "\n".join(DOCKERFILE_PYTORCH_2_3) + "\n") == ()


def test_what_those_packages_depend_on_passes(make, spec_dir) -> None:
    """fastai requires matplotlib, pandas, scikit-learn and spacy (fastai's settings.ini, `requirements`): pip put them
    in the image with it."""
    assert passes(make, spec_dir, "matplotlib\npandas\nscikit-learn\nspacy\n") == ()


def test_a_version_of_a_dockerfile_package_is_a_warning_not_a_refusal(make, spec_dir) -> None:
    """The Dockerfile names torchvision without a version here: which one the image holds is not known."""
    warned = passes(make, spec_dir, "torchvision>=0.18\n")
    assert len(warned) == 1 and "`torchvision>=0.18` (line 1)" in warned[0] and "version not known" in warned[0]


# huggingface/pytorch/training/docker/2.1/py3/cu121/Dockerfile.gpu (transformers 4.36 on PyTorch 2.1):
# `pip install transformers[sklearn,sentencepiece,audio,vision,pipelines]==${TRANSFORMERS_VERSION}
# datasets==${DATASETS_VERSION} diffusers evaluate accelerate trl peft ...`, FROM pytorch-training:2.1.0-gpu-py310.
HUGGINGFACE_4_36 = {"framework": "huggingface", "transformers_version": "4.36.0", "pytorch_version": "2.1.0",
                    "py_version": "py310", "framework_version": ...}


def test_a_huggingface_image_holds_its_libraries_and_its_base_images(make, spec_dir) -> None:
    """The HuggingFace notebooks' requirements: the image's own installs, the `sentencepiece` extra of transformers,
    and the PyTorch base image's torchvision."""
    assert passes(make, spec_dir, "transformers\ndatasets\naccelerate\nevaluate\npeft\ntrl\ndiffusers\n"
                  "sentencepiece\ntorchvision\n", **HUGGINGFACE_4_36) == ()
    refused(make, spec_dir, "datasets\nwandb\n", "`wandb` (line 2) is not in the HuggingFace 4.36.0 training image",
            **HUGGINGFACE_4_36)


def test_an_image_whose_dockerfile_was_not_read_warns_and_refuses_nothing(make, spec_dir) -> None:
    """PyTorch 1.12.1 (the pinned SDK's catalog has it) is not among the Dockerfiles read: a line that is neither the
    framework nor the toolkit's is "not known", a warning naming the image, never "not in"."""
    result, problems = compiled(make, spec_dir, "wandb\n", framework_version="1.12.1", py_version="py38",
                                distribution=..., instance_count=1)
    assert problems == []
    [warning] = [w for w in result.warnings if "requirements.txt" in w]
    assert "`wandb` (line 1) must already be in the PyTorch 1.12.1 training image" in warning


@pytest.mark.parametrize("line", ["peft @ https://example.com/peft-0.1-py3-none-any.whl",
                                  "git+https://github.com/huggingface/peft.git#egg=peft"])
def test_a_url_is_refused_even_for_a_package_the_image_holds(make, spec_dir, line) -> None:
    refused(make, spec_dir, f"{line}\n", "from a URL")


def test_a_line_for_another_platform_or_python_does_not_count(make, spec_dir) -> None:
    """Markers are evaluated for the container: Linux, x86_64, the image's Python (py311 in the base spec)."""
    assert passes(make, spec_dir, "pywin32 ; sys_platform == 'win32'\ntomli ; python_version < '3.11'\n") == ()
    refused(make, spec_dir, "tomli ; python_version < '3.12'\n", "`tomli ; python_version < '3.12'` (line 1)")


def test_an_included_file_is_read_and_named(make, spec_dir) -> None:
    (spec_dir / "code" / "extra.txt").write_text("# more\nwandb\n")
    refused(make, spec_dir, "-r extra.txt\n", "`wandb` (extra.txt line 2)")


def test_wheels_shipped_in_the_bundle_satisfy_their_lines(make, spec_dir) -> None:
    (spec_dir / "code" / "wheels").mkdir()
    (spec_dir / "code" / "wheels" / "peft-0.11.1-py3-none-any.whl").write_bytes(b"PK")
    assert passes(make, spec_dir, "--no-index\n--find-links wheels\npeft==0.11.1\n") == ()
    refused(make, spec_dir, "--no-index\n--find-links wheels\npeft==0.11.1\nwandb\n", "`wandb` (line 4)")


def test_a_shell_entry_point_installs_nothing(make, spec_dir) -> None:
    """The toolkit pip-installs requirements.txt only for a Python program (entry_point._entry_point_type)."""
    assert passes(make, spec_dir, "transformers\n", entry_point="run.sh", distribution=...) == ()


def test_no_requirements_file_no_finding(make, spec_dir) -> None:
    assert passes(make, spec_dir, None) == ()


# ----------------------------------------------------------------------------------------- isolation off, egress


def test_isolation_off_needs_a_nat_gateway_and_the_index_names_where_the_firewall_blocks(make, spec_dir) -> None:
    off = {"enable_network_isolation": False, "network_isolation_off_reason": REASON}
    text = refused(make, spec_dir, "transformers\n", "isolation off", "nat_gateway: true for environment dev", **off)
    assert "enable_network_isolation: false" not in text  # it is already off
    with_nat = Environment(**{**DEV.__dict__, "nat_gateway": True})
    _, problems = compiled(make, spec_dir, "transformers\n", env=with_nat, **off)
    assert problems == []
    blocking = Environment(**{**PROD.__dict__, "nat_gateway": True})
    assert blocking.dns_firewall.mode == "block"  # cdk.json: prod is production, where the firewall blocks
    _, problems = compiled(make, spec_dir, "transformers\n", env=blocking, **off)
    assert any("pypi.org and files.pythonhosted.org in the allow list of training-platform:dns-firewall.prod" in p
               for p in problems), problems
    # a `*.` entry admits the names below it, not the name itself (Route 53 Resolver DNS Firewall domain lists)
    firewall = dataclasses.replace(blocking.dns_firewall, allow=("pypi.org", "*.pythonhosted.org"))
    _, problems = compiled(make, spec_dir, "transformers\n", env=dataclasses.replace(blocking, dns_firewall=firewall),
                           **off)
    assert problems == [], problems
    firewall = dataclasses.replace(blocking.dns_firewall, allow=("*.pypi.org", "files.pythonhosted.org"))
    _, problems = compiled(make, spec_dir, "transformers\n", env=dataclasses.replace(blocking, dns_firewall=firewall),
                           **off)
    assert any("pypi.org in the allow list of training-platform:dns-firewall.prod" in p for p in problems), problems


# ------------------------------------------------------------------------------------------- the project's images


def _image(tmp_path: Path, dockerfile: str, requirements: str | None) -> dict[str, ImageBuild]:
    context = tmp_path / "image"
    context.mkdir(exist_ok=True)
    (context / "Dockerfile").write_text(dockerfile)
    if requirements is not None:
        (context / "requirements.txt").write_text(requirements)
    return {"trainer": ImageBuild("trainer", context, "Dockerfile", BaseImage("pytorch", "2.3.0", "py311",
                                                                              "ml.p4d.24xlarge"))}


def test_an_image_that_installs_this_very_file_passes(make, spec_dir, tmp_path) -> None:
    wanted = "transformers==4.41.2\npeft\n"
    images = _image(tmp_path, "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY requirements.txt /tmp/\nRUN pip install \\\n"
                    "    -r /tmp/requirements.txt\n", wanted)
    result, problems = compiled(make, spec_dir, wanted, images=images, framework_version=..., py_version="py311",
                                image={"repository": "trainer"})
    assert problems == [] and result.warnings == ()


def test_an_image_not_known_to_hold_a_line_is_a_warning_naming_it(make, spec_dir, tmp_path) -> None:
    images = _image(tmp_path, "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n", "transformers\n")  # a different file
    result, problems = compiled(make, spec_dir, "transformers\ntorch>=2.3\n", images=images, framework_version=...,
                                py_version="py311", image={"repository": "trainer"})
    assert problems == []
    assert len(result.warnings) == 1
    assert "`transformers` (line 1)" in result.warnings[0] and "the image trainer" in result.warnings[0]
    assert "torch" not in result.warnings[0].split("must already be in")[0]  # the base image's torch 2.3.0 does


def test_an_image_built_from_a_dlc_holds_what_its_base_holds(make, spec_dir, tmp_path) -> None:
    """The project's image is built FROM the PyTorch 2.3.0 GPU image, whose Dockerfile installs torchvision and
    accelerate: no warning for them; a package the base lacks is still only "not known" (the project's Dockerfile
    may add it)."""
    images = _image(tmp_path, "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n", None)
    result, problems = compiled(make, spec_dir, "torchvision\naccelerate\nwandb\n", images=images,
                                framework_version=..., py_version="py311", image={"repository": "trainer"})
    assert problems == []
    [warning] = result.warnings
    assert "`wandb` (line 3) must already be in the image trainer" in warning and "torchvision" not in warning


# ------------------------------------------------------------------------------------------------ pip, the judge


@pytest.mark.parametrize("line", ["numpy>=1.0", "numpy>=99", "PyYAML", "pyyaml==6.0.3", "surely-not-a-package-i36",
                                  "packaging<1"])
def test_pip_itself_agrees(tmp_path, line) -> None:
    """This test's own environment stands for the image: what it has installed is all the image holds. pip, with an
    index it cannot reach (as in an isolated job), succeeds exactly where the rule finds nothing to download."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text("print(1)\n")
    (code / "requirements.txt").write_text(f"{line}\n")
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()}
    image = ImageContents("this environment", installed, True, f"{sys.version_info.major}.{sys.version_info.minor}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotInGitWarning)
        found = read_requirements(scan(code, code / "train.py", (), tmp_path))
    assert found is not None
    downloads = judge(found, image).downloads
    pip = subprocess.run([sys.executable, "-m", "pip", "--isolated", "install", "--dry-run", "--disable-pip-version-"
                          "check", "--retries", "0", "--timeout", "2", "--index-url", "http://127.0.0.1:9/simple",
                          "-r", "requirements.txt"], cwd=code, capture_output=True, text=True, timeout=120)
    assert (pip.returncode == 0) == (downloads == []), (pip.stdout, pip.stderr, downloads)


@pytest.mark.parametrize("key", ["requirements_file", "requirements"])
def test_the_sdk_keyword_that_does_nothing_points_to_what_works_under_isolation(rejects, key) -> None:
    """PyTorch(requirements_file=...) is swallowed by the SDK's **kwargs; the refusal no longer sends people to a
    requirements.txt that an isolated job cannot install from."""
    rejects(key, "ignores it silently", "network isolation", "already be in the image",
            "image: {repository: NAME}", "docs/workload-spec.md#packages-the-job-needs", **{key: "requirements.txt"})


def test_an_xgboost_image_names_itself_and_warns_for_what_it_is_not_known_to_hold(make, spec_dir) -> None:
    """The SageMaker XGBoost image (framework_version 1.7-1: XGBoost 1.7) is a framework image, not an image_uri;
    what it holds beside xgboost is not listed offline, so a line is "not known", a warning, never a refusal."""
    result, problems = compiled(make, spec_dir, "xgboost\npandas\n", framework="xgboost", framework_version="1.7-1",
                                py_version="py3", distribution=..., instance_type="ml.m5.xlarge", instance_count=1)
    assert problems == []
    [warning] = [w for w in result.warnings if "requirements.txt" in w]
    assert "the XGBoost 1.7-1 training image" in warning and "`pandas` (line 2)" in warning
    assert "image_uri" not in warning and "`xgboost`" not in warning


def test_a_base_image_the_catalog_lacks_leaves_nothing_known_and_raises_nothing(make, spec_dir, tmp_path) -> None:
    """cdk.json's image rule refuses a base image the SDK's catalog has no image for; this rule only knows nothing of
    what it holds."""
    build = ImageBuild("trainer", tmp_path, "Dockerfile", BaseImage("pytorch", "9.9.9", "py311", "ml.p4d.24xlarge"))
    workload = make(framework_version=..., py_version="py311", image={"repository": "trainer"})
    contents = image_contents(workload, {"trainer": build}, None, DEV.region)
    assert contents.complete is False and "torchvision" not in contents.versions
