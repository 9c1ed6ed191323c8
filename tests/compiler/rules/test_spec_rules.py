"""One test per validation rule: the message names the field and says what to change."""

from __future__ import annotations

import pytest

from compiler.compilation import strategies
from compiler.compilation.request import compile_request
from compiler.errors import SpecError
from compiler.inputs.reader import Findings
from compiler.rules import check_in_environment


def test_base_spec_is_valid(make):
    workload = make()
    assert strategies.launch_plan(workload).name == "torch_distributed"
    assert workload.instance.accelerators == 8


# --- keys and types -------------------------------------------------------------------------------------


def test_typo_in_key_suggests_the_right_name(rejects):
    rejects("instance_cout", "did you mean 'instance_count'", instance_cout=2)


def test_typo_in_nested_strategy_key_suggests(rejects):
    rejects("distribution.torch_distributd", "did you mean 'torch_distributed'",
            distribution={"torch_distributd": {"enabled": True}})


def test_unknown_subkey_of_mpi(rejects):
    rejects("distribution.mpi.processes_per_hots", "did you mean 'processes_per_host'",
            distribution={"mpi": {"enabled": True, "processes_per_hots": 8}})


def test_unknown_framework_suggests(rejects):
    rejects("framework", "did you mean 'pytorch'", framework="pytorh")


def test_required_keys(rejects):
    rejects("entry_point", "is required", entry_point=...)
    rejects("instance_type", "is required", instance_type=...)
    rejects("name", "is required", name=...)


def test_workload_name_pattern(rejects):
    rejects("name", "lowercase letters, digits and single hyphens", name="My_Workload")


@pytest.mark.parametrize("field,value,words", [
    ("instance_count", 0, ("from 1 to 32768 instances, not 0",)),
    ("instance_count", "2", ("whole number",)),
    ("instance_count", 2.0, ("whole number", "write 2")),
    ("volume_size", 0, ("from 1",)),
    ("max_run", 3_000_000, ("from 1 to 2419200",)),
    ("keep_alive_period_in_seconds", 30000, ("from 0 to 21600",)),
    ("max_retry_attempts", 31, ("from 1 to 30",)),
    ("use_spot_instances", "yes", ("true or false",)),
])
def test_numbers_and_booleans_in_range(rejects, field, value, words):
    rejects(field, *words, **{field: value})


# --- image sources and versions ---------------------------------------------------------------------------


def test_image_uri_with_versions_is_accepted_as_the_sdk_does(make):
    workload = make(image_uri="123456789012.dkr.ecr.us-east-1.amazonaws.com/x:1")
    assert workload.image.kind == "uri" and workload.estimator.framework_version == "2.3.0"


def test_a_framework_image_needs_versions(rejects):
    rejects("framework_version", "framework_version and py_version", framework_version=..., py_version=...)


def test_image_uri_and_project_image_are_exclusive(rejects):
    rejects("image", "not both", image_uri="123456789012.dkr.ecr.us-east-1.amazonaws.com/x:1",
            image={"repository": "gpt-trainer"})


def _env_problems(workload, env):
    findings = Findings("demo.yaml")
    check_in_environment(workload, env, findings)
    return "\n".join(str(p) for p in findings.problems)


def test_framework_version_must_exist_in_the_sdk(make, envs):
    workload = make(framework_version="9.9.9", distribution=...)
    assert "no pytorch training image" in _env_problems(workload, envs["dev"])


def test_unquoted_version_is_explained(rejects):
    rejects("framework_version", "quoted text", framework_version=2.3)


def test_py_version_must_match_framework_version(make, envs):
    assert "py311" in _env_problems(make(py_version="py38"), envs["dev"])


def test_project_repository_image(make):
    workload = make(framework_version=..., py_version=..., image={"repository": "gpt-trainer"})
    assert workload.image.kind == "repository"


def test_repository_image_unknown_key(rejects):
    rejects("image.tga", "did you mean 'tag'", framework_version=..., py_version=...,
            image={"repository": "gpt-trainer", "tga": "v1"})


def test_huggingface_needs_a_base_framework(rejects):
    rejects("pytorch_version", "exactly one of pytorch_version and tensorflow_version",
            framework="huggingface", framework_version=..., transformers_version="4.56.2")


def test_huggingface_versions_one_short_one_full_name_the_short_pair(rejects):
    """transformers_version 4.4 with tensorflow_version 2.4.1 (an old huggingface/notebooks call): the SDK refuses the
    mix; the message gives the user's own versions, shortened, as the fix."""
    rejects("transformers_version", "tensorflow_version 2.4.1", "both short (4.4 and 2.4)", framework="huggingface",
            framework_version=..., transformers_version="4.4", tensorflow_version="2.4.1", py_version="py37",
            distribution=..., instance_count=1)


@pytest.mark.parametrize("image", [
    {"image_uri": "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-training:2.1.0-transformers4.36.0"
                  "-gpu-py310-cu121-ubuntu20.04"},
    {"image": {"repository": "gpt-trainer"}},
])
def test_huggingface_needs_py_version_even_with_an_image_of_its_own(rejects, image):
    """py_version is the HuggingFace estimator's first argument: without it the SDK cannot build the estimator."""
    rejects("py_version", "even with an image of your own", framework="huggingface", framework_version=...,
            py_version=..., transformers_version="4.36.0", pytorch_version="2.1.0", **image)


@pytest.mark.parametrize("version", ["1.10", "1.10.0", "1.4.1"])
def test_tensorflow_before_1_11_needs_its_legacy_image(rejects, make, version):
    """TensorFlow's estimator refuses 1.10 and older without image_uri (legacy mode only)."""
    rejects("framework_version", "legacy mode", "model_dir: false", framework="tensorflow", framework_version=version,
            py_version="py2", distribution=..., instance_type="ml.c4.xlarge", instance_count=1)
    assert make(framework="tensorflow", framework_version="1.11", py_version="py3", distribution=...,
                instance_type="ml.c4.xlarge", instance_count=1)


# --- source code ----------------------------------------------------------------------------------------


def test_source_dir_must_exist(rejects):
    rejects("source_dir", "does not exist", source_dir="missing")


def test_entry_point_must_exist(rejects):
    rejects("entry_point", "not a file", entry_point="nope.py")


def test_entry_point_must_stay_inside_source_dir(rejects):
    rejects("entry_point", "inside source_dir", entry_point="../train.py")


def test_torch_distributed_needs_python_entry_point(rejects):
    rejects("entry_point", ".py file", entry_point="run.sh")


# --- instance types and strategies ----------------------------------------------------------------------------


def test_unknown_instance_type_suggests_close_one(rejects):
    rejects("instance_type", "did you mean 'ml.p4d.24xlarge'", instance_type="ml.p4d.24xlarg")


def test_every_training_instance_type_of_the_service_model_is_accepted(make):
    make(instance_type="ml.c4.xlarge", distribution=..., instance_count=1)


def test_processes_per_host_within_gpus(rejects):
    rejects("distribution.mpi.processes_per_host", "which has 8 GPUs", "at most 8",
            distribution={"mpi": {"enabled": True, "processes_per_host": 16}})


def test_processes_per_host_within_a_single_gpu_instance(rejects):
    rejects("distribution.mpi.processes_per_host", "which has 1 GPU;", "at most 1",
            instance_type="ml.g5.2xlarge", distribution={"mpi": {"enabled": True, "processes_per_host": 2}})


def test_only_one_smdistributed_strategy(rejects):
    rejects("distribution.smdistributed", "only one smdistributed strategy", framework_version="2.2.0",
            py_version="py310", distribution={"smdistributed": {"dataparallel": {"enabled": True},
                                                                "modelparallel": {"enabled": True}}})


def test_modelparallel_needs_a_launcher(rejects):
    rejects("distribution.smdistributed.modelparallel", "mpi", "torch_distributed",
            distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2}}}})


@pytest.mark.parametrize("param,value,words", [
    ("pipeline", "zigzag", ("simple, interleaved",)),
    ("placement_strategy", "random", ("spread, cluster",)),
    ("optimize", "size", ("speed, memory",)),
    ("partitions", 0, ("positive whole number",)),
    ("microbatches", -1, ("positive whole number",)),
    ("ddp", "yes", ("true or false",)),
    ("memory_weight", 1.5, ("between 0.0 and 1.0",)),
])
def test_smp_parameters_follow_the_sdk(rejects, param, value, words):
    params = {"partitions": 2, "microbatches": 4, param: value}
    rejects(f"distribution.smdistributed.modelparallel.parameters.{param}", *words,
            distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": params}},
                          "mpi": {"enabled": True, "processes_per_host": 8}})


def test_smp_ddp_and_horovod_exclusive(rejects):
    params = {"partitions": 2, "ddp": True, "horovod": True}
    rejects("distribution.smdistributed.modelparallel.parameters.ddp", "cannot both",
            distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": params}},
                          "mpi": {"enabled": True}})


def test_smp_default_partition_needed_without_auto_partition(rejects):
    params = {"partitions": 2, "auto_partition": False}
    rejects("distribution.smdistributed.modelparallel.parameters.default_partition", "required",
            distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": params}},
                          "mpi": {"enabled": True}})


def test_smdistributed_not_on_p5_without_torch_distributed(rejects):
    rejects("distribution.smdistributed", "torch_distributed", instance_type="ml.p5.48xlarge",
            distribution={"smdistributed": {"modelparallel": {"enabled": True}}, "mpi": {"enabled": True}})


@pytest.mark.parametrize("distribution", [{"smdistributed": {"dataparallel": {"enabled": True}}},
                                          {"pytorchddp": {"enabled": True}}])
def test_smddp_elsewhere_than_its_instance_types_is_a_warning(make, distribution):
    """The SDK accepts it (it lists SMDDP's types without checking them), and pytorchddp jobs on g5 run with nccl."""
    workload = make(instance_type="ml.g5.48xlarge", framework_version="2.2.0", py_version="py310",
                    distribution=distribution)
    assert [w for w in workload.warnings if "distribution.smdistributed.dataparallel" in w and "nccl backend" in w
            and "ml.g5.48xlarge" in w], workload.warnings
    assert not [w for w in make(framework_version="2.2.0", py_version="py310", distribution=distribution).warnings
                if "nccl backend" in w]  # on p4d: no warning


def test_an_integer_beyond_64_bits_is_refused_with_the_quoted_form(rejects):
    rejects("hyperparameters.seed", "quote it ('100000000000000000000')", hyperparameters={"seed": 10**20})


def test_smddp_framework_versions(rejects):
    message = rejects("framework_version", "SMDDP supports pytorch", framework_version="2.3.0",
                      distribution={"smdistributed": {"dataparallel": {"enabled": True}}})
    assert "full version" not in message  # 2.3.0 is simply not in the SDK's table: no full version to offer


def test_smddp_short_version_names_the_full_one_the_sdk_lists(rejects):
    """The SDK compares strings: "2.2" is refused where "2.2.0" is listed, so the fix is the full version."""
    rejects("framework_version", "not 2.2; write the full version: 2.2.0", framework_version="2.2",
            py_version="py310", distribution={"smdistributed": {"dataparallel": {"enabled": True}}})


def test_huggingface_pytorchddp_with_smdistributed_is_reported_once(rejects):
    message = rejects("distribution", "cannot use both pytorchddp and smdistributed", framework="huggingface",
                      framework_version=..., transformers_version="4.36.0", pytorch_version="2.1.0", py_version="py310",
                      distribution={"pytorchddp": {"enabled": True}, "smdistributed": {"dataparallel": {"enabled": True}}})
    assert message.count("cannot use both") == 1, message


def test_pytorchddp_and_smdistributed_exclusive(rejects):
    rejects("distribution", "cannot use both pytorchddp and smdistributed", framework_version="2.2.0",
            py_version="py310", distribution={"pytorchddp": {"enabled": True},
                                              "smdistributed": {"dataparallel": {"enabled": True}}})


def test_trainium_accepts_only_torch_distributed(rejects):
    rejects("distribution", "Trainium", "only torch_distributed", instance_type="ml.trn1.32xlarge",
            distribution={"mpi": {"enabled": True}})


def test_torch_distributed_needs_gpu_or_trainium(rejects):
    rejects("distribution.torch_distributed", "GPU or Trainium", instance_type="ml.c5.4xlarge")


def test_torch_distributed_framework_versions(rejects):
    rejects("framework_version", "torch_distributed", "not 2.3; write the full version: 2.3.0 or 2.3.1",
            framework_version="2.3", py_version="py311")


def test_strategy_must_suit_the_framework(rejects):
    rejects("distribution.parameter_server", "only tensorflow", distribution={"parameter_server": {"enabled": True}})


def test_multi_worker_mirrored_needs_tf_2_9(rejects):
    rejects("distribution.multi_worker_mirrored_strategy", "2.9", framework="tensorflow",
            framework_version="2.8", py_version="py39",
            distribution={"multi_worker_mirrored_strategy": {"enabled": True}})


def test_multi_node_without_efa_is_flagged(make):
    workload = make(instance_type="ml.g5.2xlarge", instance_count=2)
    assert any("no EFA" in w and "instance_type" in w for w in workload.warnings)


def test_two_groups_of_one_type_without_efa_warn_once(make):
    """Two groups of ml.g5.2xlarge (the SDK's own heterogeneous-cluster unit test): one warning, not one per group."""
    groups = [{"instance_group_name": n, "instance_type": "ml.g5.2xlarge", "instance_count": c} for n, c in
              (("group1", 1), ("group2", 2))]
    workload = make(instance_type=..., instance_count=..., instance_groups=groups, distribution=...)
    assert len([w for w in workload.warnings if "no EFA" in w]) == 1, workload.warnings


def test_multi_node_with_efa_is_not_flagged(make):
    assert not make().warnings


def test_multi_node_cpu_jobs_are_not_flagged_for_efa(make):
    # ml.c5.xlarge: 4 vCPUs, no accelerator, no EFA (compiler/facts/data/instance_types.csv)
    assert not [w for w in make(instance_type="ml.c5.xlarge", instance_count=2, distribution=...).warnings if "EFA" in w]


# --- job names, hyperparameters, environment ---------------------------------------------------------------


def test_job_name_prefix_leaves_room_for_run_suffix(rejects, make):
    text = rejects("base_job_name", "at most 48", base_job_name="a" * 49)
    assert "63" in text
    assert len(make(base_job_name="a" * 48).base_job_name) + 1 + 12 + 1 + 1 == 63


def test_job_name_room_shrinks_with_more_relaunch_digits(rejects, make):
    make(base_job_name="a" * 48, capacity_retry={"max_attempts": 9})
    rejects("base_job_name", "at most 47", base_job_name="a" * 48, capacity_retry={"max_attempts": 10})


def test_reserved_hyperparameters(rejects, make):
    rejects("hyperparameters.sagemaker_program", "sets some itself", "entry_point",
            hyperparameters={"sagemaker_program": "x.py"})
    # one the SDK does not set: the training toolkit still keeps it from the script (split by the sagemaker_ prefix)
    rejects("hyperparameters.sagemaker_seed", "out of your script's arguments", hyperparameters={"sagemaker_seed": 1})
    assert make(hyperparameters={"sagemaker": 1, "my_sagemaker_seed": 1}).hyperparameters == {
        "sagemaker": 1, "my_sagemaker_seed": 1}


def test_hyperparameter_value_length(make, envs):
    assert "2500" in _env_problems(make(hyperparameters={"blob": "x" * 2600}), envs["dev"])


def test_hyperparameter_count_includes_sdk_keys(make, envs):
    many = {f"h{i}": i for i in range(96)}
    assert "more than SageMaker's 100" in _env_problems(make(hyperparameters=many), envs["dev"])


def test_hyperparameter_values_must_be_json(rejects):
    import datetime

    rejects("hyperparameters.when", "JSON cannot carry", hyperparameters={"when": datetime.date(2026, 1, 1)})


def test_environment_key_pattern(rejects):
    rejects("environment.1BAD", "letters, digits and _", environment={"1BAD": "x"})


def test_environment_values_are_strings(rejects):
    rejects("environment.NCCL_DEBUG_LEVEL", "quote it", environment={"NCCL_DEBUG_LEVEL": 3})


def test_environment_value_length(rejects):
    rejects("environment.LONG", "512", environment={"LONG": "x" * 600})


def test_environment_count_includes_efa_variables(make, envs):
    many = {f"V{i}": "1" for i in range(99)}
    assert "EFA" in _env_problems(make(instance_type="ml.p5en.48xlarge", environment=many), envs["dev"])


# --- spot, checkpoints, warm pools -----------------------------------------------------------------------------


def test_spot_needs_max_wait(rejects):
    rejects("max_wait", "max_wait", use_spot_instances=True, checkpoints=True)


def test_spot_max_wait_at_least_max_run(rejects):
    rejects("max_wait", "at least max_run", use_spot_instances=True, checkpoints=True, max_run=7200, max_wait=3600)


def test_spot_needs_checkpoints(rejects):
    rejects("checkpoints", "checkpoints: true", use_spot_instances=True, max_wait=100000)


def test_no_warm_pool_with_spot(rejects):
    rejects("keep_alive_period_in_seconds", "spot", use_spot_instances=True, max_wait=100000, checkpoints=True,
            keep_alive_period_in_seconds=600)


def test_max_wait_without_spot_is_sent_with_a_warning(make):
    """The SDK sends it, and its own TensorFlow release test runs such a job: a warning, not a refusal."""
    workload = make(max_wait=100000)
    assert workload.max_wait == 100000
    assert [w for w in workload.warnings if "max_wait" in w and "use_spot_instances" in w], workload.warnings


def test_checkpoint_uri_is_the_platforms(rejects):
    rejects("checkpoint_s3_uri", "checkpoints: true", checkpoint_s3_uri="s3://my-bucket/ckpt")


# --- inputs --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("config", "words"), [
    ({"accept_eula": True}, ("accept_eula", "ModelAccessConfig")),
    ({"AcceptEula": "yes"}, ("AcceptEula", "ModelAccessConfig")),
    (True, ("must be a mapping in the API's names",)),
])
def test_model_access_config_takes_the_apis_shape(rejects, config, words):
    rejects("inputs.model.model_access_config", *words,
            inputs={"model": {"s3_data": "models/llama/", "model_access_config": config}})


def test_processes_per_host_of_a_disabled_mpi_is_not_held_to_the_gpus(make, rejects):
    mpi = {"processes_per_host": 4}
    rejects("distribution.mpi.processes_per_host", "which has 1 GPU", instance_type="ml.g5.2xlarge", instance_count=1,
            distribution={"mpi": {"enabled": True, **mpi}})
    assert make(instance_type="ml.g5.2xlarge", instance_count=1, distribution={"mpi": {"enabled": False, **mpi}})


def test_a_single_location_as_inputs_is_the_channel_fit_makes_of_it(make):
    """fit("s3://...") names its one channel training (tests/compiler/inputs/test_inputs.py runs the real SDK's fit())."""
    [channel] = make(inputs="s3://my-datasets/train/").inputs
    assert (channel.name, channel.s3_data) == ("training", "s3://my-datasets/train/")


def test_channel_name_pattern(rejects):
    rejects("inputs.bad name", "channel names", inputs={"bad name": "s3://b/k"})


def test_s3_input_mode(rejects):
    rejects("inputs.train.input_mode", "did you mean 'FastFile'", inputs={"train": {"s3_data": "k/", "input_mode": "Fast"}})


def test_s3_uri_scheme(rejects):
    rejects("inputs.train", "is not a key prefix", inputs={"train": "https://example.com/data"})


def test_fsx_path_needs_a_path(rejects):
    rejects("inputs.train.directory_path", "mount name is added", inputs={"train": {"directory_path": "datasets"}})


def test_fsx_channels_are_file_mode(rejects, make):
    rejects("input_mode", "File mode only", "leave input_mode out", input_mode="FastFile",
            inputs={"train": {"directory_path": "/d"}})
    make(input_mode="File", inputs={"train": {"directory_path": "/d"}})


def test_fsx_channel_has_no_input_mode_of_its_own(rejects):
    """FileSystemInput takes no input_mode (the SDK's constructor refuses it): the message says what it takes."""
    rejects("inputs.train.input_mode", "FileSystemInput's arguments", "for S3 channels",
            inputs={"train": {"directory_path": "/d", "input_mode": "File"}})


def test_fsx_input_needs_an_environment_with_fsx(make, envs):
    from dataclasses import replace

    workload = make(inputs={"train": {"directory_path": "/datasets/x"}})
    no_fsx = replace(envs["dev"], fsx=None)
    assert "has no file system: add an fsx block" in _env_problems(workload, no_fsx)
    request = compile_request(workload, envs["dev"], training_image="img")
    fsx = request["InputDataConfig"][0]["DataSource"]["FileSystemDataSource"]
    assert fsx["DirectoryPath"] == "/${FsxMountName}/datasets/x"


# --- tags and metrics ----------------------------------------------------------------------------------------


def test_metric_regex_must_compile(rejects):
    rejects("metric_definitions[0].Regex", "not a valid regular expression",
            metric_definitions=[{"Name": "loss", "Regex": "loss=([0-9."}])


def test_metric_regex_without_a_group_is_a_warning(make):
    workload = make(metric_definitions=[{"Name": "loss", "Regex": "loss=[0-9.]+"}])
    assert any("capture group" in w for w in workload.warnings)


def test_tags_may_not_use_aws_prefix(rejects):
    rejects("tags.aws:owner", "aws:", tags={"aws:owner": "me"})


def test_all_problems_are_reported_at_once(make):
    with pytest.raises(SpecError) as info:
        make(instance_count=0, volume_size=-1, max_run="long")
    assert {p.field for p in info.value.problems} >= {"instance_count", "volume_size", "max_run"}


def test_yaml_errors_name_the_file(tmp_path):
    from compiler.inputs.project import Project
    from compiler.spec import read_spec_file

    path = tmp_path / "broken.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match=r"broken\.yaml: is not valid YAML"):
        read_spec_file(path, Project(tmp_path))


def test_output_path_is_the_platforms(rejects):
    rejects("output_path", "remove output_path", output_path="s3://my-bucket/out")


def test_s3_input_needs_a_bucket(rejects):
    rejects("inputs.train", "s3://bucket/prefix", inputs={"train": "s3:///key"})
    rejects("inputs.train.s3_data", "s3://bucket/prefix", inputs={"train": {"s3_data": "s3://"}})


# --- model_dir: a TensorFlow argument the other estimators drop --------------------------------------------------


def test_model_dir_false_elsewhere_than_tensorflow_is_accepted_with_a_warning(make):
    """PyTorch(model_dir=False), as an AWS notebook writes it: the SDK drops it, which is what false asks for."""
    workload = make(model_dir=False)
    assert [w for w in workload.warnings if "model_dir: " in w and "remove it" in w], workload.warnings


@pytest.mark.parametrize("value", ["/opt/ml/model", "s3://my-models/out"])
def test_model_dir_path_elsewhere_than_tensorflow_is_refused(rejects, value):
    """A path would be dropped by the SDK while its author expects the model there: refused, with the fix."""
    rejects("model_dir", "TensorFlow estimator argument", "remove it", model_dir=value)


# --- checkpoint_local_path: "" (an AWS workshop writes it): the SDK sends no LocalPath ------------------------------


def test_empty_checkpoint_local_path_is_no_path_with_a_warning(make):
    workload = make(checkpoint_local_path="", checkpoints=True)
    assert workload.checkpoint_local_path is None
    assert [w for w in workload.warnings if "checkpoint_local_path: is empty" in w and "remove it" in w]


def test_empty_checkpoint_local_path_needs_no_checkpoints(make):
    """Empty is no path at all, so the rule that a path needs checkpoints: true does not apply (the SDK drops it)."""
    make(checkpoint_local_path="")


def test_blank_checkpoint_local_path_is_still_refused(rejects):
    rejects("checkpoint_local_path", "absolute path", checkpoint_local_path=" ", checkpoints=True)


def test_an_image_from_another_region_is_refused_naming_the_fix(make, envs):
    """An AWS example's generic Estimator with a us-west-2 image, deployed to a us-east-1 environment."""
    problems = _env_problems(make(framework=..., framework_version=..., py_version=..., distribution=...,
                                  image_uri="246618743249.dkr.ecr.us-west-2.amazonaws.com/sagemaker-xgboost:1.7-1"),
                             envs["dev"])
    assert "image_uri" in problems and f"give the image's {envs['dev'].region} URI" in problems, problems
    # the same image in the environment's own region has no region problem (its tag from another account still
    # asks for a digest, another rule)
    image = f"246618743249.dkr.ecr.{envs['dev'].region}.amazonaws.com/sagemaker-xgboost:1.7-1"
    same = _env_problems(make(framework=..., framework_version=..., py_version=..., distribution=..., image_uri=image),
                         envs["dev"])
    assert "give the image's" not in same and "own region" not in same, same


# --- SMP without a launcher: the fix offered is one the framework has ----------------------------------------------

SMP_ALONE = {"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2}}}}


def test_smp_without_a_launcher_offers_both_launchers_for_pytorch(rejects):
    rejects("distribution.smdistributed.modelparallel", "mpi: {enabled: true", "torch_distributed: {enabled: true}",
            framework_version="1.13.1", py_version="py39", distribution=SMP_ALONE)


def test_smp_without_a_launcher_offers_only_mpi_for_tensorflow(rejects):
    """TensorFlow has SMP v1 only (amazon-sagemaker-examples sm-distributed_model_parallel: TensorFlow 2.3.1)."""
    text = rejects("distribution.smdistributed.modelparallel", "mpi: {enabled: true", framework="tensorflow",
                   framework_version="2.3.1", py_version="py37", instance_type="ml.p3.16xlarge", instance_count=1,
                   distribution=SMP_ALONE)
    assert "torch_distributed" not in text


# --- framework_version with HuggingFace: the estimator overwrites it with transformers_version --------------------

HF_VERSIONS = {"framework": "huggingface", "transformers_version": "4.26", "pytorch_version": "1.13",
               "py_version": "py39", "distribution": ...}


def test_huggingface_framework_version_equal_to_the_base_is_dropped_with_a_warning(make):
    """amazon-sagemaker-examples archived/nas_for_llm_with_amt: framework_version="1.13" beside pytorch_version="1.13"."""
    workload = make(**HF_VERSIONS, framework_version="1.13")
    assert workload.estimator.framework_version == "4.26"
    assert [w for w in workload.warnings if "framework_version: the HuggingFace estimator ignores it" in w]


def test_huggingface_framework_version_of_another_value_is_refused(rejects):
    rejects("framework_version", "ignores it", "pytorch_version", **HF_VERSIONS, framework_version="2.0")


def test_too_many_tags_name_how_many_may_stay(rejects, make):
    """SageMaker takes 50 tags (botocore's TagList); the platform adds its workload, environment and execution tags."""
    make(tags={f"k{i}": "v" for i in range(47)})
    rejects("tags", "keep at most 47", tags={f"k{i}": "v" for i in range(48)})


def test_training_groups_name_the_strategies_their_estimator_launches(rejects, make):
    """distribution.instance_groups with no strategy that launches on them: the fix lists the estimator's launchers."""
    groups = [{"instance_group_name": "gpu", "instance_type": "ml.p4d.24xlarge", "instance_count": 2},
              {"instance_group_name": "cpu", "instance_type": "ml.c5.9xlarge", "instance_count": 1}]
    tensorflow = {"framework": "tensorflow", "framework_version": "2.14", "py_version": "py310"}
    text = rejects("distribution.instance_groups", "enable mpi or smdistributed dataparallel", **tensorflow,
                   instance_type=..., instance_count=..., instance_groups=groups,
                   distribution={"parameter_server": {"enabled": True}, "instance_groups": ["gpu"]})
    assert "torch_distributed" not in text
    rejects("distribution.instance_groups", "enable torch_distributed, pytorchddp, mpi or smdistributed dataparallel",
            instance_type=..., instance_count=..., instance_groups=groups,
            distribution={"torch_distributed": {"enabled": False}, "instance_groups": ["gpu"]})
    make(instance_type=..., instance_count=..., instance_groups=groups,
         distribution={"torch_distributed": {"enabled": True}, "instance_groups": ["gpu"]})
