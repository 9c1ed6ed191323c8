"""Hostile spec files: each is refused with the place and the fix, never a traceback (compiler/inputs/spec_yaml.py,
compiler/spec/loading.py, the tags reader in compiler/inputs/spec/values.py), each at its boundary."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from compiler.compilation.stack_layout import shard_template_bytes, too_large_alone, workload_template_bytes
from compiler.errors import SpecError
from compiler.inputs.project import Project
from compiler.inputs.spec_yaml import SpecYamlError, load_spec_text
from compiler.pipeline import compile_one, compile_project
from compiler.spec import read_spec_file
from tests.project import PROJECT, add_reader, project_copy

# The project copies below are no git work tree, so every file of training/ ships (NotInGitWarning says so).
pytestmark = pytest.mark.filterwarnings("ignore:.*not read as a git work tree")

# The limits, stated here rather than imported from the code they test:
MAX_NUMBER_CHARS = 100  # a number literal; Python itself refuses ints of more than 4,300 digits
MAX_SPEC_BYTES = 256 * 1024  # "is larger than 256 KiB"
MAX_INSTANCE_COUNT = 2**15  # 32,768: a /16 VPC (the largest), its training subnet half of it
MAX_TEMPLATE_BYTES = 800_000  # the platform's shard limit, kept below CloudFormation's 1 MB template body


@contextlib.contextmanager
def _fails_if_it_hangs(what: str, seconds: int = 20) -> Iterator[None]:
    """A regression here would hang the suite (a read that waits forever, a loop over 2**63 counts): fail instead.
    20 s is far above what the refusal takes (milliseconds), even on a loaded machine."""

    def hung(*_: object) -> None:
        pytest.fail(f"{what} did not finish in {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _refusals(root: Path, name: str, env: str) -> tuple[list[str], list[str]]:
    """The lines validate and synth (compile_project) and render of `name` in `env` (compile_one) refuse with."""
    with pytest.raises(SpecError) as whole:
        compile_project(Project(root))
    with pytest.raises(SpecError) as one:
        compile_one(Project(root), name, env)
    return str(whole.value).splitlines(), str(one.value).splitlines()


def _refused(text: str) -> str:
    with pytest.raises(SpecYamlError) as info:
        load_spec_text(text)
    return str(info.value)


@pytest.mark.parametrize("number", ["9" * MAX_NUMBER_CHARS, "0x" + "f" * (MAX_NUMBER_CHARS - 2),
                                    "0." + "1" * (MAX_NUMBER_CHARS - 2)])
def test_a_number_of_the_longest_length_is_read(number: str) -> None:
    assert isinstance(load_spec_text(f"a: {number}\n")["a"], int | float)


@pytest.mark.parametrize("number", ["9" * (MAX_NUMBER_CHARS + 1), "9" * 5000, "0x" + "f" * 5000, "0o" + "7" * 6000,
                                    "0." + "1" * 5000])
def test_a_longer_number_is_refused_naming_its_place_not_pythons_digit_limit(number: str) -> None:
    text = _refused(f"name: x\ninstance_count: {number}\n")
    assert text.startswith("line 2, column 17: a number of ")
    assert f"at most {MAX_NUMBER_CHARS} (quote it if it is meant as text)" in text


def test_a_long_number_quoted_is_text() -> None:
    assert load_spec_text(f"a: '{'9' * 5000}'\n") == {"a": "9" * 5000}


@pytest.mark.parametrize(("escape", "shown"), [("\\0", "'\\x00'"), ("\\x07", "'\\x07'"), ("\\ud800", "'\\ud800'"),
                                               ("\\x7f", "'\\x7f'")])
def test_an_escaped_character_yaml_refuses_written_as_is_is_refused(escape: str, shown: str) -> None:
    text = _refused(f'name: x\nhyperparameters:\n  a: "b{escape}c"\n')
    assert text.startswith(f"line 3, column 6: the text holds {shown}")
    assert text.endswith("remove the escape")


def test_an_escaped_key_is_checked_too() -> None:
    assert _refused('"k\\0": 1\n').startswith("line 1, column 1: the text holds '\\x00'")


@pytest.mark.parametrize("escape", ["\\t", "\\n", "\\r", "\\u00e9", "\\U0001F600", "\\x85"])
def test_printable_escapes_stay_allowed(escape: str) -> None:
    assert isinstance(load_spec_text(f'a: "b{escape}c"\n')["a"], str)


def test_a_control_character_written_as_is_names_its_line() -> None:
    assert _refused("name: x\ndescription: a\x00b\n") == ("line 2: holds the character '\\x00', which YAML does not "
                                                          "allow (a control character); remove it")


def test_tab_indentation_gets_the_fix() -> None:
    assert _refused("name: x\nhyperparameters:\n\ta: 1\n").endswith("; indent with spaces: YAML does not allow tabs "
                                                                      "there")


@pytest.mark.parametrize(("key", "kind"), [("? [a, b]\n: 1\n", "a list"), ("? {a: b}\n: 1\n", "a mapping")])
def test_a_key_that_is_a_collection_is_named_as_such(key: str, kind: str) -> None:
    assert _refused(key) == f"line 1, column 3: keys must be text, not {kind}; write a name before the ':'"


@pytest.mark.parametrize(("data", "line"), [(b"name: x\n# caf\xe9\n", 2), (b"\xff\xfen\x00a\x00", 1)])
def test_a_file_not_in_utf8_names_the_byte_line_and_the_fix(tmp_path: Path, data: bytes, line: int) -> None:
    path = tmp_path / "workloads" / "latin.yaml"
    path.parent.mkdir()
    path.write_bytes(data)
    with pytest.raises(SpecError) as info:
        read_spec_file(path, Project(tmp_path))
    assert str(info.value).startswith("workloads/latin.yaml: is not UTF-8 text: byte 0x")
    assert str(info.value).endswith(f"on line {line} is not UTF-8; save the file as UTF-8")
    assert "codec" not in str(info.value)


def test_a_utf8_byte_order_mark_is_read() -> None:
    assert load_spec_text("\ufeffname: x\n") == {"name": "x"}


# --- tags ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [["a"], {"a": 1}, 1, None])
def test_a_list_tag_whose_key_is_not_text_is_refused(rejects, key) -> None:
    rejects("tags", "{Key: <text>, Value: <text>}", tags=[{"Key": key, "Value": "v"}])


def test_a_list_tag_key_given_twice_is_refused_not_collapsed(rejects, make) -> None:
    rejects("tags", "key 'team' is given twice; keep one",
            tags=[{"Key": "team", "Value": "a"}, {"Key": "team", "Value": "b"}])
    assert make(tags=[{"Key": "team", "Value": "a"}, {"Key": "Team", "Value": "b"}]).tags == {"team": "a", "Team": "b"}


@pytest.mark.parametrize(("value", "shown"), [(None, "None (empty)"), (True, "True (true/false)"),
                                              (2.10, "2.1 (a number)"), ({"b": "c"}, "{'b': 'c'} (a mapping)"),
                                              (["x"], "['x'] (a list)")])
def test_a_tag_value_that_is_not_text_is_refused_not_converted_or_dropped(rejects, value, shown: str) -> None:
    rejects("tags.team", f"not {shown} (quote it; '' for an empty value)", tags={"team": value})


def test_whole_number_and_empty_tag_values_are_text_as_written(make) -> None:
    assert make(tags={"run": 7, "note": ""}).tags == {"run": "7", "note": ""}


# --- one workload (render) refuses what the whole project (validate, synth) refuses ------------------------------


@pytest.mark.parametrize(("schedule_envs", "environments", "expected"), [
    (["stagin"], None, "'stagin' is not an environment of cdk.json; it deploys to dev, prod"),
    (["prod"], {"dev": {}}, "'prod' is not one the workload deploys to; it deploys to dev"),
])
def test_render_refuses_a_schedule_environment_as_validate_does(tmp_path: Path, schedule_envs: list[str],
                                                                environments, expected: str) -> None:
    root = project_copy(tmp_path)
    spec = yaml.safe_load((root / "workloads" / "gpt-smddp.yaml").read_text())
    spec["schedule"] = {"expression": "rate(1 day)", "environments": schedule_envs}
    if environments is not None:
        spec["environments"] = environments
    (root / "workloads" / "gpt-smddp.yaml").write_text(yaml.safe_dump(spec))
    message = f"workloads/gpt-smddp.yaml: schedule.environments: {expected}"
    whole, one = _refusals(root, "gpt-smddp", "dev")
    assert message in whole
    assert message in one


def test_render_takes_a_schedule_in_an_environment_the_workload_deploys_to(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    spec = yaml.safe_load((root / "workloads" / "gpt-smddp.yaml").read_text())
    spec["schedule"] = {"expression": "rate(1 day)", "environments": ["prod"]}
    (root / "workloads" / "gpt-smddp.yaml").write_text(yaml.safe_dump(spec))
    assert compile_one(Project(root), "gpt-smddp", "dev").workload.schedule is not None


# --- inputs ----------------------------------------------------------------------------------------------------


def test_an_empty_channel_is_refused_not_dropped(rejects, make) -> None:
    rejects("inputs.train", "is empty: give the channel's S3 location", "or remove the channel",
            inputs={"train": None, "eval": "datasets/eval/"})
    assert [c.name for c in make(inputs={"eval": "datasets/eval/"}).inputs] == ["eval"]


# --- another team's workload in the same environment (issue 35) -------------------------------------------------

SECRET = "arn:aws:secretsmanager:us-east-1:111111111111:secret:team-a/hf-token-AbCdEf"
KEY = "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def _intruder(root: Path, **changes: object) -> None:
    """A new team's workload `intruder` in dev (gpt-smddp's spec under another name), changed as given (`...` removes a
    key); team a's secret and key are granted to gpt-smddp in the copy's cdk.json."""
    config = json.loads((root / "cdk.json").read_text())
    dev = config["context"]["training-platform:environments"]["dev"]
    dev["secrets"] = {SECRET: {"readers": ["gpt-smddp"]}}
    dev["kms_keys"] = {KEY: {"users": ["gpt-smddp"]}}
    (root / "cdk.json").write_text(json.dumps(config))
    spec = yaml.safe_load((root / "workloads" / "gpt-smddp.yaml").read_text())
    spec.update(name="intruder", environments={"dev": {}}, **changes)
    (root / "workloads" / "intruder.yaml").write_text(yaml.safe_dump({k: v for k, v in spec.items() if v is not ...}))


OFF = {"enable_network_isolation": False, "network_isolation_off_reason": "reads a secret"}


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"inputs": {"train": "datasets/gpt-tokens/*"}}, "inputs.train",
     "an S3 prefix is literal (SageMaker reads every object whose key starts with it"),
    ({"inputs": {"train": "*"}}, "inputs.train", "'*' is a wildcard for any characters"),
    ({"inputs": {"train": "datasets/gpt-tokens/"}}, "inputs.train",
     "add intruder to cdk.json, dev.datasets.gpt-tokens.readers"),
    ({"inputs": {"train": "gpt-smddp/"}}, "inputs.train", "neither a dataset nor this workload's own prefix intruder/"),
    ({"inputs": {"train": {"directory_path": "/gpt-torchrun-fsx"}}}, "inputs.train.directory_path",
     "neither a dataset nor this workload's own directory /intruder/"),
    ({"model_uri": "gpt-smddp/model/"}, "model_uri", "neither a dataset nor this workload's own prefix intruder/"),
    ({"secrets": {"HF_TOKEN": SECRET}, **OFF}, "secrets.HF_TOKEN",
     f"{SECRET} is granted to gpt-smddp in environment dev, not intruder: add intruder to cdk.json, "
     f"dev.secrets.\"{SECRET}\".readers"),
    ({"output_kms_key": KEY}, "output_kms_key", "add intruder to cdk.json, dev.kms_keys"),
    ({"volume_kms_key": KEY, "instance_type": "ml.p3.16xlarge", "instance_count": 1, "distribution": ...},
     "volume_kms_key", "add intruder to cdk.json, dev.kms_keys"),
])
def test_another_teams_data_secret_or_key_is_refused_by_validate_synth_and_render(tmp_path: Path, changes: dict,
                                                                                  field: str, words: str) -> None:
    """The probes of issue 35, as a spec file: each names what cdk.json grants another workload, or a wildcard."""
    root = project_copy(tmp_path)
    _intruder(root, **changes)
    whole, one = _refusals(root, "intruder", "dev")
    prefix = f"workloads/intruder.yaml: {field}: "
    assert any(line.startswith(prefix) and words in line for line in whole), whole
    assert [line for line in whole if line.startswith("workloads/intruder.yaml")] == one


def test_what_cdk_json_grants_the_intruder_compiles(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    _intruder(root, inputs={"train": "intruder/tokens/"}, output_kms_key=KEY, **OFF, secrets={"HF_TOKEN": SECRET})
    config = json.loads((root / "cdk.json").read_text())
    dev = config["context"]["training-platform:environments"]["dev"]
    dev["secrets"][SECRET]["readers"].append("intruder")
    dev["kms_keys"][KEY]["users"].append("intruder")
    (root / "cdk.json").write_text(json.dumps(config))
    assert compile_one(Project(root), "intruder", "dev").workload.secrets == {"HF_TOKEN": SECRET}


# --- distribution ----------------------------------------------------------------------------------------------


def test_mpi_beside_torch_distributed_is_refused_as_the_sdk_would_drop_it(rejects, make) -> None:
    rejects("distribution.mpi", "ignores mpi when torch_distributed is enabled", "remove mpi",
            distribution={"torch_distributed": {"enabled": True}, "mpi": {"enabled": True, "processes_per_host": 8}})
    # switched off, or beside smdistributed (SMP v1/v2 send mpi's settings), it is no mistake
    make(distribution={"torch_distributed": {"enabled": True}, "mpi": {"enabled": False}})
    make(distribution={"torch_distributed": {"enabled": True}})


# --- what lies in workloads/ -----------------------------------------------------------------------------------


@pytest.fixture
def workloads_dir(tmp_path: Path) -> Path:
    root = project_copy(tmp_path)
    return root / "workloads"


def _both_refuse(root: Path, name: str, message: str) -> None:
    """validate/synth (compile_project) and render (compile_one) give the same one line."""
    whole, one = _refusals(root, name, "dev")
    assert message in whole
    assert one == [message]


def test_a_pipe_named_like_a_spec_is_refused_unread(workloads_dir: Path) -> None:
    os.mkfifo(workloads_dir / "pipe.yaml")
    with _fails_if_it_hangs("opening the pipe (it waits for a writer)"):
        _both_refuse(workloads_dir.parent, "pipe", "workloads/pipe.yaml: is a pipe, not a YAML file; workload specs "
                     "are files named *.yaml or *.yml (move it out of the way or rename it)")


def test_a_folder_named_like_a_spec_is_refused(workloads_dir: Path) -> None:
    (workloads_dir / "folder.yaml").mkdir()
    with pytest.raises(SpecError, match=r"^workloads/folder\.yaml: is a folder, not a YAML file"):
        compile_project(Project(workloads_dir.parent))


@pytest.mark.parametrize("target", ["/etc/passwd", "/dev/zero"])
def test_a_link_out_of_the_project_is_refused_unread(workloads_dir: Path, target: str) -> None:
    (workloads_dir / "outside.yaml").symlink_to(target)
    with _fails_if_it_hangs(f"reading {target}"):  # /dev/zero reads forever
        _both_refuse(workloads_dir.parent, "outside", f"workloads/outside.yaml: is a link to {target}, outside the "
                     "project: a spec's paths are relative to it and must stay in the repository; put the spec itself "
                     "in workloads/")


def test_a_link_inside_the_project_is_read_from_its_target(workloads_dir: Path) -> None:
    root = workloads_dir.parent
    (root / "specs").mkdir()
    text = (workloads_dir / "gpt-smddp.yaml").read_text().replace("name: gpt-smddp", "name: linked")
    (root / "specs" / "linked.yaml").write_text(text)  # source_dir: ../training, from specs/ as from workloads/
    (workloads_dir / "linked.yaml").symlink_to(Path("..") / "specs" / "linked.yaml")
    add_reader(root, "linked", "gpt-tokens")
    spec = read_spec_file(workloads_dir / "linked.yaml", Project(root))
    assert (spec.path, spec.source) == ((root / "specs" / "linked.yaml").resolve(), "specs/linked.yaml")
    assert compile_one(Project(root), "linked", "dev").request["TrainingJobName"].startswith("linked-")


def test_a_project_under_a_linked_folder_keeps_its_spec_paths_as_written(tmp_path: Path) -> None:
    """Only a spec that is itself a link is read from its target: a project reached through a linked folder (a home
    directory on another disk) reads its specs at the paths given, as before links were followed."""
    (tmp_path / "disk").mkdir()
    real = project_copy(tmp_path / "disk")  # tmp_path/disk/project
    (tmp_path / "home").symlink_to(tmp_path / "disk")
    root = tmp_path / "home" / "project"
    spec = read_spec_file(root / "workloads" / "gpt-smddp.yaml", Project(root))
    assert (spec.path, spec.source) == (root / "workloads" / "gpt-smddp.yaml", "workloads/gpt-smddp.yaml")
    assert spec.path != real / "workloads" / "gpt-smddp.yaml"  # not resolved through the link
    assert compile_one(Project(root), "gpt-smddp", "dev").request["TrainingJobName"].startswith("gpt-smddp-")


def test_a_huge_file_is_refused_after_reading_one_byte_past_the_limit(workloads_dir: Path) -> None:
    with open(workloads_dir / "huge.yaml", "wb") as handle:  # sparse: 64 GiB on no disk
        handle.truncate(64 * 2**30)
    with pytest.raises(SpecError) as info:
        read_spec_file(workloads_dir / "huge.yaml", Project(workloads_dir.parent))
    assert str(info.value) == "workloads/huge.yaml: is larger than 256 KiB; a workload spec is a page of settings"


def test_a_file_of_the_size_limit_is_read(workloads_dir: Path) -> None:
    text = "name: x\n"
    (workloads_dir / "full.yaml").write_text(text + "#" * (MAX_SPEC_BYTES - len(text) - 1) + "\n")
    assert read_spec_file(workloads_dir / "full.yaml", Project(workloads_dir.parent)).raw == {"name": "x"}
    (workloads_dir / "full.yaml").write_text(text + "#" * (MAX_SPEC_BYTES - len(text)) + "\n")
    with pytest.raises(SpecError, match="is larger than 256 KiB"):
        read_spec_file(workloads_dir / "full.yaml", Project(workloads_dir.parent))


# --- counts ----------------------------------------------------------------------------------------------------


def test_the_largest_count_any_training_subnet_holds_is_read(make) -> None:
    assert make(instance_count=MAX_INSTANCE_COUNT).instance_count == MAX_INSTANCE_COUNT
    assert make(max_instance_count=MAX_INSTANCE_COUNT).max_instance_count == MAX_INSTANCE_COUNT


@pytest.mark.parametrize("field", ["instance_count", "max_instance_count"])
@pytest.mark.parametrize("count", [MAX_INSTANCE_COUNT + 1, 2**63])
def test_a_larger_count_is_refused(rejects, field: str, count: int) -> None:
    rejects(field, f"must be from 1 to {MAX_INSTANCE_COUNT} instances, not {count}", **{field: count})


def test_a_group_count_is_bounded_alike(rejects, make) -> None:
    def groups(count: int) -> list[dict]:
        return [{"instance_group_name": "g", "instance_type": "ml.p4d.24xlarge", "instance_count": count}]

    rejects("instance_groups[0].instance_count", f"must be from 1 to {MAX_INSTANCE_COUNT} instances",
            instance_type=..., instance_count=..., distribution=..., instance_groups=groups(MAX_INSTANCE_COUNT + 1))
    workload = make(instance_type=..., instance_count=..., distribution=..., instance_groups=groups(MAX_INSTANCE_COUNT))
    assert workload.compute.total_instances == MAX_INSTANCE_COUNT


def test_a_huge_count_with_a_cost_ceiling_and_a_schedule_is_refused_at_once(rejects) -> None:
    # the cost ceiling's budgets are per count a run may ask for: 2**63 of them never finished
    with _fails_if_it_hangs("checking 2**63 instance counts"):
        rejects("instance_count", "must be from 1 to", instance_count=2**63, max_run_cost_usd=5000,
                schedule={"expression": "rate(1 day)", "input": {}}, instance_type="ml.g5.2xlarge",
                distribution=...)


# --- a workload too large for any stack ----------------------------------------------------------------------


def test_a_definition_too_large_alone_is_measured_at_the_template_limit() -> None:
    # the shard's and a workload's own bytes measured, not restated
    fits = "x" * (MAX_TEMPLATE_BYTES - shard_template_bytes([workload_template_bytes("")]))
    assert shard_template_bytes([workload_template_bytes(fits)]) == MAX_TEMPLATE_BYTES
    assert too_large_alone(workload_template_bytes(fits)) is None
    assert too_large_alone(workload_template_bytes(fits + "x")) == MAX_TEMPLATE_BYTES + 1
    assert too_large_alone(workload_template_bytes(fits, extra=1)) == MAX_TEMPLATE_BYTES + 1


def _many_counts(root: Path, max_instance_count: int) -> None:
    config = json.loads((root / "cdk.json").read_text())
    config["context"]["training-platform:environments"]["dev"]["training_subnet_mask"] = 17  # room for the counts
    (root / "cdk.json").write_text(json.dumps(config))
    spec = yaml.safe_load((root / "workloads" / "platform-smoke.yaml").read_text())
    spec.update(name="many-counts", instance_count=1, max_instance_count=max_instance_count, max_run=86400,
                max_run_cost_usd=10, environments={"dev": {}})
    (root / "workloads" / "many-counts.yaml").write_text(yaml.safe_dump(spec))
    add_reader(root, "many-counts", "smoke")


def test_a_workload_no_stack_can_hold_names_its_own_cause_not_workload_shards(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    _many_counts(root, 8000)
    lines, one = _refusals(root, "many-counts", "dev")
    assert lines == one  # validate, synth and render: the same one line
    assert len(lines) == 1 and "workload_shards above" not in lines[0]
    assert lines[0].startswith("workloads/many-counts.yaml: max_instance_count: its stack in dev would take about ")
    assert lines[0].endswith("so no workload_shards setting can hold it; its state machine checks the cost ceiling "
                             "of each of the 8000 instance counts a run may ask for (max_run_cost_usd): lower "
                             "max_instance_count")


def test_a_workload_with_fewer_counts_fits(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    _many_counts(root, 100)
    assert compile_one(Project(root), "many-counts", "dev").workload.max_instance_count == 100


# --- per-environment overrides ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["hyperparameters", "environment", "tags", "capacity_retry", "secrets"])
def test_an_empty_merged_override_is_refused_not_a_wipe_of_the_base(tmp_path: Path, key: str) -> None:
    root = project_copy(tmp_path)
    spec = yaml.safe_load((root / "workloads" / "gpt-smddp.yaml").read_text())
    spec["environments"] = {"dev": {key: None}, "prod": {}}
    (root / "workloads" / "gpt-smddp.yaml").write_text(yaml.safe_dump(spec))
    message = (f"workloads/gpt-smddp.yaml: environments.dev.{key}: is empty, which would drop every one of the base's "
               f"{key} in dev; name the entries that differ, or leave {key} out to keep the base's")
    whole, one = _refusals(root, "gpt-smddp", "prod")
    assert message in whole
    assert message in one


def test_an_empty_mapping_override_keeps_the_base(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    spec = yaml.safe_load((root / "workloads" / "gpt-smddp.yaml").read_text())
    spec["environments"] = {"dev": {"hyperparameters": {}}, "prod": {}}
    (root / "workloads" / "gpt-smddp.yaml").write_text(yaml.safe_dump(spec))
    assert compile_one(Project(root), "gpt-smddp", "dev").request["HyperParameters"]["model"] == '"gpt-350m"'


def test_a_workload_too_large_alone_is_left_out_of_its_shards_sum() -> None:
    """It is refused by itself (naming what grows it); its shard is judged by the workloads that can fit, so the
    refusal never says to raise workload_shards when no setting could help."""
    from compiler.compilation.stack_layout import layout_problems

    env = PROJECT.environments()["dev"]
    alone = shard_template_bytes([workload_template_bytes("")])  # a shard holding one empty-definition workload
    too_large = MAX_TEMPLATE_BYTES - alone + workload_template_bytes("") + 1  # one byte past the limit alone
    half = (MAX_TEMPLATE_BYTES - shard_template_bytes([])) // 2
    assert too_large_alone(too_large) == MAX_TEMPLATE_BYTES + 1
    assert shard_template_bytes([half, half]) == MAX_TEMPLATE_BYTES  # two of them fill a shard exactly
    assert layout_problems(env, {3: (too_large, half, half)}) == []
    (problem,) = layout_problems(env, {3: (too_large, half, half + 1)})
    assert problem.field == "dev.workload_shards"
    assert problem.message.startswith("dev/Workloads03 would hold 2 workloads in about 800,001 bytes")
