"""Issue 36's "done when": a new team's three first workloads either validate and would run, or are refused before
deploy with the fix, and following the fix validates. Each is what such a team writes from AWS's examples: a PyTorch
FSDP fine-tune with its own requirements.txt, a TensorFlow MultiWorkerMirroredStrategy job, and a built-in algorithm
by its image (SageMaker XGBoost, whose registry accounts per region are the SDK's `image_uri_config/xgboost.json`).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml

from compiler.errors import SpecError
from compiler.inputs.project import Project
from compiler.inputs.tracked import NotInGitWarning
from compiler.pipeline import compile_project
from tests.project import project_copy

DIGEST = "sha256:" + "ab" * 32
FINETUNE = {"name": "llama-finetune", "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311",
            "entry_point": "train.py", "source_dir": "../finetune", "instance_type": "ml.p4d.24xlarge",
            "instance_count": 2, "distribution": {"torch_distributed": {"enabled": True}},
            "hyperparameters": {"epochs": 1}, "inputs": {"train": "datasets/alpaca/"}}
MWMS = {"name": "resnet-mwms", "framework": "tensorflow", "framework_version": "2.14.1", "py_version": "py310",
        "entry_point": "train.py", "source_dir": "../tf", "instance_type": "ml.g5.12xlarge", "instance_count": 2,
        "distribution": {"multi_worker_mirrored_strategy": {"enabled": True}}, "inputs": {"train": "datasets/images/"}}
XGBOOST = {"name": "churn-xgboost", "instance_type": "ml.m5.xlarge", "instance_count": 1,
           "image_uri": "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1",
           "hyperparameters": {"objective": "binary:logistic", "num_round": 100},
           "inputs": {"train": {"s3_data": "datasets/churn/train/", "content_type": "text/csv"}}}
REQUIREMENTS = "transformers==4.41.2\ndatasets>=2.19\naccelerate\npeft\ntorch>=2.3\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = project_copy(tmp_path)
    for folder, script in (("finetune", "import transformers, peft\n"), ("tf", "import tensorflow\n")):
        (root / folder).mkdir()
        (root / folder / "train.py").write_text(script)
    (root / "finetune" / "requirements.txt").write_text(REQUIREMENTS)
    declare_datasets(root)
    return root


def declare_datasets(root: Path) -> None:
    """What a new team adds to cdk.json first: the data bucket's datasets its workloads read, naming them readers."""
    settings = json.loads((root / "cdk.json").read_text())
    for env in settings["context"]["training-platform:environments"].values():
        env["datasets"].update({"alpaca": {"readers": ["llama-finetune"]}, "images": {"readers": ["resnet-mwms"]},
                                "churn": {"readers": ["churn-xgboost"]}})
    (root / "cdk.json").write_text(json.dumps(settings))


def write(root: Path, spec: dict) -> None:
    (root / "workloads" / f"{spec['name']}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))


def problems(root: Path) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotInGitWarning)
        try:
            compile_project(Project(root))
        except SpecError as error:
            return [str(p) for p in error.problems]
    return []


def test_a_dataset_the_environment_does_not_declare_is_refused_naming_the_entry_to_add(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    (root / "tf").mkdir()
    (root / "tf" / "train.py").write_text("import tensorflow\n")
    write(root, {**MWMS, "model_dir": "/opt/ml/model"})
    found = problems(root)
    assert any("inputs.train: dataset 'images' is not declared for environment prod" in p
               and "add it to cdk.json, prod.datasets.images: {readers: [resnet-mwms]}" in p for p in found)
    declare_datasets(root)
    assert problems(root) == []


def test_the_fsdp_fine_tune_is_refused_with_the_fix_and_its_own_image_validates(root: Path) -> None:
    write(root, FINETUNE)
    found = problems(root)
    assert found and all(p.startswith("workloads/llama-finetune.yaml: source_dir: finetune/requirements.txt") for p in found)
    assert "`transformers==4.41.2` (line 1)" in found[0] and "training-platform:images" in found[0]
    # the first way out: an image of the project whose Dockerfile pip-installs the file
    (root / "finetune" / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY requirements.txt .\n"
                                                  "RUN pip install --no-cache-dir -r requirements.txt\n")
    settings = json.loads((root / "cdk.json").read_text())
    settings["context"]["training-platform:images"]["finetune"] = {"build_context": "finetune", "base_image": {
        "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311", "instance_type": "ml.p4d.24xlarge"}}
    (root / "cdk.json").write_text(json.dumps(settings))
    write(root, {**{k: v for k, v in FINETUNE.items() if k != "framework_version"}, "image": {"repository": "finetune"}})
    assert problems(root) == []


def test_the_fsdp_fine_tune_with_isolation_off_needs_an_egress_path(root: Path) -> None:
    off = {"enable_network_isolation": False, "network_isolation_off_reason": "installs requirements.txt from PyPI"}
    write(root, {**FINETUNE, **off})
    found = problems(root)
    assert any("nat_gateway: true for environment dev" in p for p in found)
    settings = json.loads((root / "cdk.json").read_text())
    envs = settings["context"]["training-platform:environments"]
    envs["dev"]["nat_gateway"] = envs["prod"]["nat_gateway"] = True
    settings["context"]["training-platform:dns-firewall"] = {"prod": {"allow": ["pypi.org", "files.pythonhosted.org"]}}
    (root / "cdk.json").write_text(json.dumps(settings))
    assert problems(root) == []


def test_the_mwms_job_is_refused_for_its_s3_model_dir_and_validates_with_a_local_one(root: Path) -> None:
    write(root, MWMS)
    found = problems(root)
    assert found and all("resnet-mwms.yaml: model_dir: " in p and "model_dir: /opt/ml/model" in p for p in found)
    write(root, {**MWMS, "model_dir": "/opt/ml/model"})
    assert problems(root) == []


def test_the_built_in_algorithm_by_its_image_is_refused_with_the_fix_and_validates_pinned_per_region(root) -> None:
    write(root, XGBOOST)
    found = problems(root)
    assert any("image_uri: the image is in us-east-1, but environment 'prod' trains in us-west-2" in p for p in found)
    assert any("pin it" in p and "@sha256:" in p for p in found)
    # us-west-2's XGBoost registry account, from the SDK's image_uri_config/xgboost.json
    write(root, {**XGBOOST, "image_uri": f"683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost@{DIGEST}",
                 "environments": {"dev": {}, "prod": {
                     "image_uri": f"246618743249.dkr.ecr.us-west-2.amazonaws.com/sagemaker-xgboost@{DIGEST}"}}})
    assert problems(root) == []
