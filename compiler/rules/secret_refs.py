"""Rules for `secrets:` (compiler.facts.secret_refs): where the named secrets may be read from, and by whom.

The process reads them at start through the Secrets Manager endpoint of the environment's network, with the
workload's execution role, which may read exactly these ARNs. So a secret must be in the environment's account and
region, the container must have a network (no network isolation), and its name must not collide with a variable
the spec sets in `environment`.
"""

from __future__ import annotations

from compiler.facts import secret_refs
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import environment_rule, workload_rule


@workload_rule
def secrets_reach_the_process(w: Workload, f: Findings) -> None:
    variables = dict(w.environment or {})
    for name in w.secrets:
        if name in variables:
            f.problem(f"secrets.{name}", f"environment also sets {name}; the process would get one of the two: keep "
                      "the secret, and remove it from environment")
    for name in variables:
        if name.startswith(secret_refs.ENV_PREFIX):
            f.problem(f"environment.{name}", f"{secret_refs.ENV_PREFIX}* variables carry the ARNs of `secrets:`, "
                      "which the platform writes; name the secret under secrets: instead")
    if w.secrets and w.enable_network_isolation:
        f.problem("secrets", "the process reads its secrets from Secrets Manager at start, but with network isolation "
                  "its container has no network and no AWS credentials: set enable_network_isolation: false with "
                  "network_isolation_off_reason: <why> (e.g. reads HF_TOKEN from Secrets Manager), or remove secrets")
    if w.secrets_kms_key is not None and not w.secrets:
        f.problem("secrets_kms_key", "only matters with secrets: name them, or remove secrets_kms_key")


@environment_rule
def secrets_belong_to_the_environment(w: Workload, env: Environment, f: Findings) -> None:
    for name, arn in w.secrets.items():
        match = secret_refs.ARN.fullmatch(arn)
        if match is None:
            continue  # refused as the spec was read
        if match["account"] != env.account or match["region"] != env.region:
            f.problem(f"secrets.{name}", f"the secret is in {match['account']}, {match['region']}, but environment "
                      f"'{env.name}' runs in {env.account}, {env.region}: the job reads it through that network's "
                      f"Secrets Manager endpoint with a role of that account; use a secret there (per environment: "
                      f"environments: {{{env.name}: {{secrets: {{{name}: <ARN>}}}}}})")
