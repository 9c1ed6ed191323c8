"""A spec names only the secrets and customer keys its environment grants its workload (cdk.json).

The execution role is allowed exactly the secrets a spec's `secrets:` names and the keys its `output_kms_key`,
`volume_kms_key` and `secrets_kms_key` name (platform_constructs/workload.py). Without a binding, any workload of an
environment could name another team's secret or key and be granted it: so the environment lists, per secret and per
key, the workloads that may name it (`<env>.secrets.<ARN>.readers`, `<env>.kms_keys.<ARN>.users`,
compiler/inputs/grants.py), and a spec that names one it is not granted is refused, naming the entry to add.

A secret or key of another account or region is refused by its own rule (`secret_refs`, `environment`); these
check what those let through. A name in a grant that no spec has is pointed out (`grants_name_workloads`): a typo
there grants nothing and leaves the intended workload refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from compiler.errors import Problem
from compiler.facts import secret_refs
from compiler.facts.key_arns import KEY_ARN
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.names import no_such_workload
from compiler.rules.registry import environment_rule, project_rule
from compiler.rules.views import ProjectView


def _refusal(w: Workload, env: Environment, grants: Mapping[str, frozenset[str]], arn: str, block: str,
             names: str) -> str | None:
    granted = grants.get(arn)
    if granted is None:
        return (f"{arn} is granted to no workload of environment {env.name}: add it to cdk.json, "
                f"{env.name}.{block}: {{\"{arn}\": {{{names}: [{w.name}]}}}}")
    if w.name not in granted:
        return (f"{arn} is granted to {', '.join(sorted(granted))} in environment {env.name}, not {w.name}: add "
                f"{w.name} to cdk.json, {env.name}.{block}.\"{arn}\".{names}")
    return None


@environment_rule
def secrets_are_granted_to_the_workload(w: Workload, env: Environment, f: Findings) -> None:
    for name, arn in w.secrets.items():
        match = secret_refs.ARN.fullmatch(arn)
        if match is None or (match["account"], match["region"]) != (env.account, env.region):
            continue  # refused as the spec is read, or by secret_refs.secrets_belong_to_the_environment
        refusal = _refusal(w, env, env.secrets, arn, "secrets", "readers")
        if refusal is not None:
            f.problem(f"secrets.{name}", refusal)


@environment_rule
def kms_keys_are_granted_to_the_workload(w: Workload, env: Environment, f: Findings) -> None:
    for field, key in (("output_kms_key", w.output_kms_key), ("volume_kms_key", w.compute.volume_kms_key),
                       ("secrets_kms_key", w.secrets_kms_key)):
        match = KEY_ARN.fullmatch(key or "")
        if match is None or (match["account"], match["region"]) != (env.account, env.region):
            continue  # no key, or environment.keys_belong_to_the_environment refuses it
        refusal = _refusal(w, env, env.kms_keys, str(key), "kms_keys", "users")
        if refusal is not None:
            f.problem(field, refusal)


def _grants(env: Environment) -> Iterator[tuple[str, frozenset[str]]]:
    """(cdk.json field, workload names) of every grant of an environment."""
    for name, dataset in sorted(env.datasets.items()):
        yield f"{env.name}.datasets.{name}.readers", dataset.readers
    for arn, readers in sorted(env.secrets.items()):
        yield f"{env.name}.secrets.{arn}.readers", readers
    for arn, users in sorted(env.kms_keys.items()):
        yield f"{env.name}.kms_keys.{arn}.users", users


@project_rule
def grants_name_workloads(view: ProjectView, f: Findings) -> None:
    for env in view.environments.values():
        for where, granted in _grants(env):
            for name in sorted(granted - view.spec_names):
                f.warnings.append(Problem("cdk.json", where, no_such_workload(name, view.spec_names,
                                                                              ": it grants nothing")))
