"""Rules about how a job runs: spot, warm pools, checkpoints, job names, channels and isolation."""

from __future__ import annotations

import math
import re
from fractions import Fraction

from compiler.compilation import cost_ceiling
from compiler.compilation.request import DEBUGGER_HOOK_OFF_FRAMEWORKS
from compiler.compilation.strategies.base import enabled
from compiler.facts import catalog
from compiler.facts.placeholders import RUN_ID_LENGTH
from compiler.inputs.environments import Environment
from compiler.inputs.model import Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import environment_rule, workload_rule
from compiler.sdk.limits import limits

CODE_CHANNEL = "code"
WORKLOAD_NAME = re.compile(r"[a-z0-9](-?[a-z0-9])*")
MAX_WORKLOAD_NAME = 40


def job_name_suffix(w: Workload) -> int:
    """Characters the state machine appends to base_job_name: '-<run id>-<attempt>'."""
    return 1 + RUN_ID_LENGTH + 1 + len(str(w.max_relaunches))


@workload_rule
def spot_runs_can_resume(w: Workload, f: Findings) -> None:
    if w.use_spot_instances:
        if w.max_wait is None:
            f.problem("max_wait", "spot training needs max_wait (seconds, at least max_run) to bound waiting for capacity")
        elif w.max_wait < w.max_run:
            f.problem("max_wait", f"must be at least max_run ({w.max_run}) with spot training")
        if not w.checkpoints:
            f.problem("checkpoints", "spot training is interrupted: set checkpoints: true so a job resumes where it stopped")
        if w.compute.keep_alive_period_in_seconds:
            f.problem("keep_alive_period_in_seconds", "warm pools are not available with spot training; remove one of "
                      "them")
    elif w.max_wait is not None:
        # The SDK sends it, and SageMaker takes it (the SDK's own release tests do this): a warning, not a refusal.
        f.warn("max_wait", "is meant for spot training (use_spot_instances: true); without it, it is sent as the SDK "
               "sends it")
    if w.checkpoint_local_path is not None and not w.checkpoints:
        f.problem("checkpoint_local_path", "only matters with checkpoints: set checkpoints: true (or remove it)")


@workload_rule
def checkpoints_on_instance_groups_build_in_the_sdk(w: Workload, f: Findings) -> None:
    """The PyTorch and TensorFlow estimators cannot be built for instance_groups with checkpoint_local_path while the
    Debugger hook is on (the default): deciding to turn the hook off, they compare instance_count, unset with
    instance_groups, to 1 and fail."""
    if (w.compute.instance_groups and w.checkpoints and w.checkpoint_local_path
            and w.framework in DEBUGGER_HOOK_OFF_FRAMEWORKS and not w.debugging.debugger_hook_disabled):
        f.problem("checkpoint_local_path", f"with instance_groups the {w.framework} estimator fails unless the "
                  "Debugger hook is off: set debugger_hook_config: false (SMDebug does not support distributed jobs "
                  "with checkpoints anyway), or remove checkpoint_local_path")


@workload_rule
def debugger_hook_is_sent(w: Workload, f: Findings) -> None:
    """The SDK drops a requested hook in two cases; the compiler does too, and says so."""
    if w.debugging.debugger_hook is None or w.debugging.debugger_hook_disabled:
        return
    if w.checkpoints and w.checkpoint_local_path and w.framework in DEBUGGER_HOOK_OFF_FRAMEWORKS:
        f.warn("debugger_hook_config", f"is not sent: the {w.framework} estimator turns the Debugger hook off for jobs "
               "with checkpoint_local_path (SMDebug does not support checkpointing jobs)")
    elif w.framework == "tensorflow" and enabled(w.distribution.get("parameter_server")):
        f.warn("debugger_hook_config", "is not sent: SMDebug does not support parameter_server")


@workload_rule
def names_fit(w: Workload, f: Findings) -> None:
    if not WORKLOAD_NAME.fullmatch(w.name) or len(w.name) > MAX_WORKLOAD_NAME:
        f.problem("name", f"'{w.name}' must be 1-{MAX_WORKLOAD_NAME} lowercase letters, digits and single hyphens")
    room = limits().job_name_max - job_name_suffix(w)
    if not re.fullmatch(r"[a-zA-Z0-9](-*[a-zA-Z0-9])*", w.base_job_name):
        f.problem("base_job_name", "job names are letters, digits and hyphens, starting and ending with a letter or digit")
    elif len(w.base_job_name) > room:
        f.problem("base_job_name" if w.base_job_name != w.name else "name",
                  f"'{w.base_job_name}' is {len(w.base_job_name)} characters; with the per-run suffix ('-<12-character "
                  f"run id>-<attempt>') a job name must fit {limits().job_name_max}, so use at most {room}")


@workload_rule
def channels_fit(w: Workload, f: Findings) -> None:
    names = [c.name for c in w.inputs]
    if w.model_uri is not None:
        if w.model_channel_name in names:
            f.problem("model_channel_name", f"channel {w.model_channel_name!r} is also an input; name the model channel "
                      "differently")
        names.append(w.model_channel_name)
    if w.enable_network_isolation and w.code is not None:
        if CODE_CHANNEL in names:
            f.problem(f"inputs.{CODE_CHANNEL}", "with enable_network_isolation the code travels in an input channel "
                      f"named '{CODE_CHANNEL}'; rename this channel")
        names.append(CODE_CHANNEL)
    if len(names) > limits().channels_max:
        f.problem("inputs", f"{len(names)} channels (with the model and code channels the job adds); SageMaker allows "
                  f"{limits().channels_max}")
    mode = w.input_mode
    for channel in w.inputs:
        if channel.kind == "fsx" and mode != "File":
            f.problem("input_mode", f"channel {channel.name} is on FSx, which SageMaker reads in File mode only "
                      "(Pipe and FastFile stream from S3); leave input_mode out (File), or give the streamed channels "
                      "their own input_mode")
        if channel.kind == "s3" and channel.instance_groups:
            known = {g.name for g in w.compute.instance_groups}
            for group in channel.instance_groups:
                if group not in known:
                    f.problem(f"inputs.{channel.name}.instance_groups", f"{group!r} is not one of the spec's instance "
                              "groups")


@environment_rule
def the_spec_runs_within_its_cost_ceiling(w: Workload, env: Environment, f: Findings) -> None:
    """`{}` must start: the spec's own run (its max_run and instance_count, at the highest price of its types) fits
    under max_run_cost_usd, and every type has a price, without which the ceiling could not be enforced. Checked per
    environment, at the list prices of its region, as its state machine enforces it."""
    ceiling = w.max_run_cost_usd
    if ceiling is None:
        return
    unpriced = cost_ceiling.unpriced(w, env.region)
    if unpriced:
        f.problem("max_run_cost_usd", f"{catalog.missing_price(unpriced, env.region)}, so the ceiling cannot "
                  "be enforced there; or remove max_run_cost_usd")
        return
    worst = cost_ceiling.worst_case(w, env.region)
    if worst > Fraction(repr(ceiling)):
        rate = cost_ceiling.cluster_rate(w, w.instance_count, env.region)
        seconds = cost_ceiling.budget_seconds(ceiling, rate)
        f.problem("max_run_cost_usd", f"{ceiling:g} USD is below the spec's own worst case, max_run {w.max_run} s x "
                  f"{float(rate):g} USD per hour for {w.instance_count} instance(s) at the highest price of its "
                  f"instance types ({catalog.price_source(env.region)}) = {float(worst):.2f} USD; raise "
                  f"max_run_cost_usd to at least {math.ceil(worst * 100) / 100:.2f} or lower max_run to {seconds}")
