"""Workload specs: strict YAML files of SageMaker SDK estimator arguments, checked into typed workloads."""

from compiler.spec.loading import (
    Loaded,
    SpecFile,
    find_spec,
    load_spec_workload,
    load_workload,
    load_workloads,
    read_spec_file,
    workload_files,
)
from compiler.spec.parse import parse_workload

__all__ = ["Loaded", "SpecFile", "find_spec", "load_spec_workload", "load_workload", "load_workloads", "parse_workload",
           "read_spec_file", "workload_files"]
