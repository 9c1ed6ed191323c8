"""A synthesized revision as the review reads it: each environment's stack templates, and cdk-nag's verdict."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainctl.common.assembly import NAG_REPORT, Placed, nag_status, read_stacks, workload_summaries


@dataclass
class Assembly:
    """The stacks of one synthesized revision: environment -> stack name -> template."""

    templates: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    nag: str = ""
    stack_names: dict[str, dict[str, str]] = field(default_factory=dict)  # environment -> stack -> CloudFormation's
    paths: dict[str, dict[str, Mapping[str, str]]] = field(default_factory=dict)  # environment -> stack -> id -> path

    def path(self, env: str, stack: str, resource: str) -> str | None:
        """The construct path of a resource in its stack (`gpt-smddp/ExecutionRole`), None where not recorded."""
        return self.paths.get(env, {}).get(stack, {}).get(resource)

    def stack_name(self, env: str, stack: str) -> str:
        """The stack's name in CloudFormation (the CDK's Stage prefixes it: `dev-Workloads18`)."""
        return self.stack_names.get(env, {}).get(stack, f"{env}-{stack}")

    def importers(self, env: str, stack: str, resource: str) -> list[str]:
        """The stacks that import a value of `resource` (exported by `stack`): CloudFormation will not replace an
        exported value while another stack uses it, so their deploys are part of the change."""
        outputs = self.templates.get(env, {}).get(stack, {}).get("Outputs", {})
        exports = set()
        for output in outputs.values():
            value, name = output.get("Value"), (output.get("Export") or {}).get("Name")
            if name and (value == {"Ref": resource} or (isinstance(value, dict) and
                                                         (value.get("Fn::GetAtt") or [None])[0] == resource)):
                exports.add(name)
        return sorted({other for name in exports for other in self.stacks_importing(env, name, besides=stack)})

    def stacks_importing(self, env: str, export: str, *, besides: str) -> list[str]:
        """The stacks of `env` other than `besides` (the exporter) that import `export`, sorted."""
        return sorted(other for other, template in self.templates.get(env, {}).items()
                      if other != besides and f'{{"Fn::ImportValue": "{export}"}}' in json.dumps(template))

    def workloads(self, env: str) -> dict[str, Placed]:
        """Workload summaries (template metadata of the state machines), with the stack that holds each."""
        return workload_summaries(env, self.templates.get(env, {}))


def read_assembly(outdir: Path) -> Assembly:
    """A synthesized revision (its cdk.out), through the one reader of cloud assemblies."""
    assembly = Assembly()
    for env, stacks in read_stacks(outdir).items():
        assembly.templates[env] = {stack.name: stack.template for stack in stacks}
        assembly.stack_names[env] = {stack.name: stack.stack_name for stack in stacks}
        assembly.paths[env] = {stack.name: stack.paths for stack in stacks}
    if (outdir / NAG_REPORT).is_file():
        assembly.nag = nag_status(outdir)
    return assembly
