"""Every state-machine definition of the environment through the account's own Step Functions
(`ValidateStateMachineDefinition`): the schema of each service integration is only known there, and it has lagged
SageMaker before (docs/aws-assumptions.md). Definitions come from the compile pipeline synth runs."""

from __future__ import annotations

import json

from botocore.exceptions import ClientError

from compiler import state_machine as sm
from compiler.facts import placeholders as ph
from compiler.facts import samples
from compiler.pipeline import CompiledWorkload
from compiler.state_machine.recovery import NOT_FOUND_CAUSE
from trainctl.preflight.checks.base import FAIL, PASS, SKIP, Context, Result


def deployable_text(compiled: CompiledWorkload, ctx: Context) -> str:
    """The definition as Step Functions would receive it: every deploy-time `${Name}` replaced by a value of the real
    shape in the environment's account and region (the values themselves are not looked up)."""
    env = ctx.env
    values = {k: v for k, v in samples.sample_values(json.loads(compiled.definition), region=env.region,
                                                     account=env.account).items() if k not in ph.RUN_TIME}
    values[sm.NOTIFICATION_TOPIC_ARN] = f"arn:{env.partition}:sns:{env.region}:{env.account}:{env.name}-training-runs"
    return sm.substitute_definition(compiled.definition, values)


def _diagnostic(d: dict[str, str]) -> str:
    where = f" at {d['location']}" if d.get("location") else ""
    return f"{d.get('severity', '?')} {d.get('code', '?')}{where}: {d.get('message', '')}"


def definitions(ctx: Context) -> list[Result]:
    """Each workload's definition is one Step Functions accepts; every diagnostic (warnings too) is shown."""
    name = "definitions"
    if ctx.compile_error is not None:
        return [Result(name, FAIL, f"the workloads do not compile ({ctx.compile_error}); run `trainctl validate`")]
    if not ctx.compiled:
        return [Result(name, SKIP, f"no workload deploys to {ctx.env.name}")]
    client = ctx.aws.client("stepfunctions")
    rows, accepted = [], []
    for compiled in ctx.compiled:
        text = deployable_text(compiled, ctx)
        left = sorted(sm.deploy_time_names(text))
        if left:
            rows.append(Result(name, FAIL, f"{compiled.name}: no sample value for {', '.join(left)} (a preflight bug: "
                               "trainctl/preflight/checks/definitions.py)"))
            continue
        answer = client.validate_state_machine_definition(definition=text, type="STANDARD", severity="WARNING")
        found = [_diagnostic(d) for d in answer.get("diagnostics", [])]
        more = " (more diagnostics were cut off)" if answer.get("truncated") else ""
        if answer.get("result") != "OK":
            rows += [Result(name, FAIL, f"{compiled.name}: {d}{more}; the deploy would fail on it: fix the spec, or "
                            "report it against compiler/state_machine/ if the spec is right") for d in found]
            if not found:
                rows.append(Result(name, FAIL, f"{compiled.name}: refused without a diagnostic"))
        else:
            accepted.append(compiled.name + (f" ({'; '.join(found)})" if found else ""))
    if accepted:
        rows.append(Result(name, PASS, f"{len(accepted)} of {len(ctx.compiled)} accepted: {', '.join(accepted)}"))
    return rows


PROBE_JOB = "trainctl-preflight-no-such-job"
NOT_FOUND_TEXT = NOT_FOUND_CAUSE.strip("*")


def missing_training_job(ctx: Context) -> list[Result]:
    """Which answer the account's SageMaker gives for a job that does not exist: the definitions read
    `ValidationException` "Requested resource not found." (what the service is reported to send) and the modelled
    ResourceNotFound as "not created"; any other answer makes such a run stop the job by name and end `Unknown`
    (docs/aws-assumptions.md). Information, never a failure: both paths are safe."""
    name = "missing-training-job"
    try:
        ctx.aws.client("sagemaker").describe_training_job(TrainingJobName=PROBE_JOB)
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        message = error.response.get("Error", {}).get("Message", "")
        if code == "ResourceNotFound" or (code == "ValidationException" and NOT_FOUND_TEXT in message):
            return [Result(name, PASS, f"DescribeTrainingJob of a missing job answers {code} ({message}): a run "
                           "whose job was never created ends as not created, with SageMaker's message")]
        if code == "ValidationException":
            return [Result(name, PASS, f"DescribeTrainingJob of a missing job answers ValidationException without "
                           f"\"{NOT_FOUND_TEXT}\" ({message}): a run whose job was never created stops it by name and "
                           "ends Unknown (\"unknown, stopped\") instead of not created")]
        raise
    return [Result(name, PASS, f"a training job named {PROBE_JOB} exists in the account, so the answer for a missing "
                   "job could not be seen")]
