"""The compiled request is one SageMaker takes, and the environment provides every deploy-time value it names.

The request is checked against botocore's SageMaker model in full (lengths, patterns, enums) with realistic values
in place of the deploy-time placeholders: the run id the longest the state machine makes and the attempt the highest
it reaches, so the job name is checked at its longest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.facts import placeholders as ph
from compiler.facts.samples import sample_values
from compiler.inputs.environments import Environment
from compiler.inputs.reader import Findings
from compiler.rules.registry import compiled_rule
from compiler.rules.views import CompiledView
from compiler.sdk import service_model


def full_validation(request: Mapping[str, Any], env: Environment, attempt: int = 0) -> list[str]:
    """The service model's findings for a request with realistic deploy-time values for the environment."""
    values = sample_values(dict(request), region=env.region, account=env.account, RunId="f" * ph.RUN_ID_LENGTH,
                           Attempt=str(attempt))
    return service_model.validate_request(ph.substitute(dict(request), values))


@compiled_rule
def the_request_fits_the_service_model(view: CompiledView, f: Findings) -> None:
    for finding in full_validation(view.request, view.environment, view.workload.max_relaunches):
        f.problem("", f"request for {view.environment.name}: {finding}")


@compiled_rule
def the_environment_provides_every_deploy_time_value(view: CompiledView, f: Findings) -> None:
    missing = sorted(view.deploy_time_names - view.provided_names)
    if missing:
        f.problem("inputs/image", "needs " + ", ".join(missing) + f", which environment '{view.environment.name}' "
                  "does not provide (an FSx channel without a file system, or an image repository this project does "
                  "not build?)")
