"""SageMaker's limits, read from botocore's CreateTrainingJob model wherever the model states them.

The service model is the single source for lengths, counts, ranges and name patterns; only the few limits it
does not state (service quotas and rules documented elsewhere) are written here, each with its reason. Every
check in the compiler and every ceiling in the state machine reads its number from this module.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from compiler.sdk.service_model import service_model

# Not in the model: MaxRuntimeInSeconds has only a minimum there; 28 days is SageMaker's documented maximum
# ("Amazon SageMaker endpoints and quotas": longest run time for a training job).
MAX_RUNTIME_SECONDS = 28 * 24 * 3600


@dataclass(frozen=True)
class Limits:
    """The numbers the compiler checks specs against, each from the named shape of botocore's model."""

    job_name_max: int  # TrainingJobName
    hyperparameters_max: int  # HyperParameters (entries)
    hyperparameter_key_max: int  # HyperParameterKey
    hyperparameter_value_max: int  # HyperParameterValue
    hyperparameter_value_pattern: str
    environment_max: int  # TrainingEnvironmentMap (entries)
    environment_key_max: int  # TrainingEnvironmentKey
    environment_key_pattern: str
    environment_value_max: int  # TrainingEnvironmentValue
    channels_max: int  # InputDataConfig
    channel_name_max: int  # ChannelName
    channel_name_pattern: str
    tags_max: int  # TagList
    tag_key_max: int  # TagKey
    tag_value_max: int  # TagValue
    tag_pattern: str  # TagKey and TagValue share it
    metrics_max: int  # MetricDefinitionList
    metric_name_max: int  # MetricName
    metric_regex_max: int  # MetricRegex
    keep_alive_max: int  # KeepAlivePeriodInSeconds
    retry_attempts_min: int  # MaximumRetryAttempts
    retry_attempts_max: int
    instance_groups_max: int  # InstanceGroups
    instance_group_name_max: int  # InstanceGroupName
    training_plan_pattern: str  # TrainingPlanArn
    entrypoint_min: int  # ContainerEntrypoint (items)
    entrypoint_max: int
    arguments_min: int  # ContainerArguments (items)
    arguments_max: int
    instance_types: tuple[str, ...]  # TrainingInstanceType: every type a training job may use


def _shape(name: str) -> dict[str, Any]:
    """A shape's constraints as botocore states them: min, max, pattern and enum."""
    shape = service_model().shape_for(name)
    return {**shape.metadata, "enum": list(getattr(shape, "enum", []) or [])}


@functools.cache
def limits() -> Limits:
    """The limits of the installed botocore's SageMaker model (read once per process)."""

    def top(name: str) -> int:
        return int(_shape(name)["max"])

    def low(name: str) -> int:
        return int(_shape(name)["min"])

    return Limits(
        job_name_max=top("TrainingJobName"),
        hyperparameters_max=top("HyperParameters"),
        hyperparameter_key_max=top("HyperParameterKey"),
        hyperparameter_value_max=top("HyperParameterValue"),
        hyperparameter_value_pattern=_shape("HyperParameterValue")["pattern"],
        environment_max=top("TrainingEnvironmentMap"),
        environment_key_max=top("TrainingEnvironmentKey"),
        environment_key_pattern=_shape("TrainingEnvironmentKey")["pattern"],
        environment_value_max=top("TrainingEnvironmentValue"),
        channels_max=top("InputDataConfig"),
        channel_name_max=top("ChannelName"),
        channel_name_pattern=_shape("ChannelName")["pattern"],
        tags_max=top("TagList"),
        tag_key_max=top("TagKey"),
        tag_value_max=top("TagValue"),
        tag_pattern=_shape("TagKey")["pattern"],
        metrics_max=top("MetricDefinitionList"),
        metric_name_max=top("MetricName"),
        metric_regex_max=top("MetricRegex"),
        keep_alive_max=top("KeepAlivePeriodInSeconds"),
        retry_attempts_min=low("MaximumRetryAttempts"),
        retry_attempts_max=top("MaximumRetryAttempts"),
        instance_groups_max=top("InstanceGroups"),
        instance_group_name_max=top("InstanceGroupName"),
        training_plan_pattern=_shape("TrainingPlanArn")["pattern"],
        entrypoint_min=low("ContainerEntrypoint"),
        entrypoint_max=top("ContainerEntrypoint"),
        arguments_min=low("ContainerArguments"),
        arguments_max=top("ContainerArguments"),
        instance_types=tuple(_shape("TrainingInstanceType")["enum"]),
    )


def matches(pattern: str, value: str) -> bool:
    """Whether a value fully matches one of the model's (Java) patterns, as the service checks it."""
    from compiler.sdk.service_model import compiled_pattern

    return compiled_pattern(pattern).fullmatch(value) is not None


@functools.cache
def allowed(shape_name: str) -> tuple[str, ...]:
    """The values an enum shape of the model allows (e.g. TrainingInputMode: Pipe, File, FastFile)."""
    return tuple(_shape(shape_name)["enum"])
