"""What the smoke run showed, gathered once it ended: each job's hosts' `smoke_<check>=0|1` lines (training/smoke/
smoke.py prints them), and the run's history, metrics, logs and search results the rows are made of (rows.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from trainctl.run.follow import LogLine
from trainctl.run.history import Launch

METRIC = "smoke:passed"  # the metric definition every host's last line feeds
_CHECK = re.compile(r"\bsmoke_(?P<name>[a-z0-9_]+)=(?P<value>[0-9.]+)")
_FIELD = re.compile(r"\b(?P<key>nonce|written_by)=(?P<value>\S+)")


@dataclass
class HostReport:
    """One host's smoke lines: each check's value, and the fields printed with it."""

    checks: dict[str, float] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)  # "<check>:<field>" -> value, e.g. "s3_read:nonce"
    lines: int = 0


@dataclass
class JobFacts:
    """One training job of the run: its launch, DescribeTrainingJob (None: not found) and its hosts' lines."""

    launch: Launch
    description: dict[str, Any] | None
    hosts: dict[str, HostReport] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return str((self.description or {}).get("TrainingJobStatus", "unknown"))

    @property
    def failure(self) -> str:
        return str((self.description or {}).get("FailureReason", ""))

    @property
    def host_names(self) -> list[str]:
        """The hosts the job should have: algo-1 .. algo-<count> (SageMaker's names)."""
        return [f"algo-{n}" for n in range(1, self.launch.instance_count + 1)]

    def read(self, lines: Iterable[LogLine]) -> None:
        for line in lines:
            report = self.hosts.setdefault(line.host, HostReport())
            report.lines += 1
            names = [m["name"] for m in _CHECK.finditer(line.message)]
            for match in _CHECK.finditer(line.message):
                report.checks[match["name"]] = float(match["value"])
            for match in _FIELD.finditer(line.message):  # a field belongs to the check on its line
                for name in names:
                    report.fields[f"{name}:{match['key']}"] = match["value"]

    def field_of(self, host: str, check: str, key: str) -> str | None:
        return self.hosts.get(host, HostReport()).fields.get(f"{check}:{key}")

    def every_host(self, check: str) -> tuple[bool, list[str]]:
        """Whether every host reported `check` = 1, and the hosts that did not (with why)."""
        missing = []
        for host in self.host_names:
            value = self.hosts.get(host, HostReport()).checks.get(check)
            if value != 1:
                missing.append(f"{host} ({'no line' if value is None else 'failed'})")
        return not missing, missing


@dataclass
class Observed:
    """Everything the table is made of, gathered once the run ended."""

    described: dict[str, Any]
    events: list[dict[str, Any]]
    jobs: list[JobFacts]
    nonce: str
    has_fsx: bool
    gpu: bool
    metric_hosts: set[str] = field(default_factory=set)  # Host dimensions with a smoke:passed datapoint
    timed_out: bool = False
    read_errors: dict[str, str] = field(default_factory=dict)  # "logs" / "metrics": why they could not be read
    searched: set[str] = field(default_factory=set)  # the jobs SageMaker Search finds by the run's execution tag

    @property
    def last(self) -> JobFacts | None:
        return self.jobs[-1] if self.jobs else None
