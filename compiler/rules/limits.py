"""SageMaker's limits on what the compiled request carries, counted as the SDK will send it.

The spec's own hyperparameters are only part of the map: the SDK adds its script-mode and distribution keys, and
the platform adds EFA variables to the environment. Counting before compiling would let a spec pass `validate`
and fail at run time, so these rules count the encoded request's parts.
"""

from __future__ import annotations

from compiler.compilation import request
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import environment_rule
from compiler.sdk.limits import limits, matches


@environment_rule
def hyperparameters_fit(w: Workload, env: Environment, f: Findings) -> None:
    lim = limits()
    values = request.hyperparameters(w, env)
    own = len(w.hyperparameters)
    if len(values) > lim.hyperparameters_max:
        f.problem("hyperparameters", f"{own} hyperparameters plus {len(values) - own} set by the SDK make "
                  f"{len(values)}, more than SageMaker's {lim.hyperparameters_max}")
    for name in w.hyperparameters:
        encoded = values.get(str(name), "")
        if len(encoded) > lim.hyperparameter_value_max:
            f.problem(f"hyperparameters.{name}", f"is {len(encoded)} characters as sent (encoded like the SDK); "
                      f"SageMaker allows {lim.hyperparameter_value_max}: pass large values as a file in an input "
                      "channel instead")
        elif not matches(lim.hyperparameter_value_pattern, encoded):
            f.problem(f"hyperparameters.{name}", "holds a line break, which SageMaker refuses in a hyperparameter "
                      "value; the generic Estimator sends text as written (str(), not JSON): write it on one line")


@environment_rule
def environment_fits(w: Workload, env: Environment, f: Findings) -> None:
    lim = limits()
    variables = request.environment(w) or {}
    if len(variables) > lim.environment_max:
        f.problem("environment", f"{len(variables)} variables (with the EFA ones the platform adds); SageMaker allows "
                  f"{lim.environment_max}")
