"""The run's options are one typed part of the workload (RunOptions), each still read on the Workload by its name."""

from __future__ import annotations

import dataclasses

from compiler.inputs.model import RunOptions
from compiler.inputs.reader import Findings, Reader
from compiler.inputs.spec.options import read_run


def test_every_run_option_reads_on_the_workload_under_its_own_name(make):
    workload = make(max_run=7200, use_spot_instances=True, max_wait=9000, checkpoints=True, concurrent_runs=True,
                    max_instance_count=4, input_mode="FastFile", max_run_cost_usd=50)
    assert isinstance(workload.run, RunOptions)
    for field in dataclasses.fields(RunOptions):
        assert getattr(workload, field.name) == getattr(workload.run, field.name), field.name
    assert (workload.max_run, workload.max_wait, workload.use_spot_instances, workload.input_mode,
            workload.max_instance_count, workload.max_run_cost_usd) == (7200, 9000, True, "FastFile", 4, 50.0)


def test_a_spec_without_run_keys_gets_the_options_defaults():
    findings = Findings("x.yaml")
    assert read_run(Reader({}, findings)) == RunOptions()
    assert not findings.problems


def test_refused_values_are_each_named_and_the_defaults_stand_in():
    findings = Findings("x.yaml")
    options = read_run(Reader({"max_run": 0, "use_spot_instances": "yes", "input_mode": "Stream"}, findings))
    assert {p.field for p in findings.problems} == {"max_run", "use_spot_instances", "input_mode"}
    assert (options.max_run, options.use_spot_instances, options.input_mode) == (86400, False, "File")
