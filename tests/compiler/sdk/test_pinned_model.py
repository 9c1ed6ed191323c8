"""The pinned botocore and the SageMaker model facts the compiler relies on (issue 21).

botocore's service model drives request validation (`compiler.sdk.service_model`) and the definition check
(`compiler.state_machine.integrations`); a pin update changes what is accepted, so it must be a deliberate act: this
test names the version and the model members the compiler uses, and fails when either moves.
"""

from __future__ import annotations

import re
from pathlib import Path

import boto3
import botocore
from botocore.loaders import Loader
from botocore.model import ServiceModel

ROOT = Path(__file__).resolve().parents[3]


def _pin(package: str, file: str) -> str:
    match = re.search(rf"^{package}==([0-9.]+)", (ROOT / file).read_text(), re.MULTILINE)
    assert match, f"{file} does not pin {package}"
    return match.group(1)


def _sagemaker() -> ServiceModel:
    return ServiceModel(Loader().load_service_model("sagemaker", "service-2"), service_name="sagemaker")


def test_installed_botocore_is_the_pinned_one():
    assert botocore.__version__ == "1.44.8"
    assert _pin("botocore", "requirements.txt") == _pin("botocore", "constraints.txt") == botocore.__version__
    assert _pin("boto3", "requirements.txt") == _pin("boto3", "constraints.txt") == boto3.__version__


def test_sagemaker_model_has_instance_preferences():
    # ResourceConfig.InstancePreferences: 1-5 ordered {InstanceType, InstanceCount, TrainingPlanArns}; the
    # description reports the type SageMaker chose (ResourceConfig.SelectedInstanceType / SelectedInstanceCount).
    config = _sagemaker().shape_for("ResourceConfig")
    preferences = config.members["InstancePreferences"]
    assert (preferences.type_name, preferences.metadata.get("min"), preferences.metadata.get("max")) == ("list", 1, 5)
    assert preferences.member.required_members == ["InstanceType"]
    assert set(preferences.member.members) == {"InstanceType", "InstanceCount", "TrainingPlanArns"}
    assert {"SelectedInstanceType", "SelectedInstanceCount"} <= set(config.members)
    assert "mutually exclusive with <code>InstanceType</code>" in preferences.documentation


def test_sagemaker_model_facts_the_run_loop_uses():
    model = _sagemaker()
    describe = model.operation_model("DescribeTrainingJob").output_shape
    # The poll loop waits while InProgress or Stopping; every other status ends the wait (Deleting too).
    assert set(describe.members["TrainingJobStatus"].enum) == {"InProgress", "Completed", "Failed", "Stopping",
                                                               "Stopped", "Deleting"}
    assert {"Starting", "Pending", "Training", "Stopping", "Stopped"} <= set(describe.members["SecondaryStatus"].enum)
    errors = {shape.name for shape in model.operation_model("CreateTrainingJob").error_shapes}
    assert errors == {"ResourceInUse", "ResourceLimitExceeded", "ResourceNotFound"}
