"""Rules that depend on where a workload is deployed: what the environment holds and allows.

FSx present, buckets the environment's roles may read, keys it may use, training plans it declares, room in its
training subnet, its inter-container encryption policy, its region's images. Each message names the spec field
or the cdk.json setting to change.
"""

from __future__ import annotations

from compiler.compilation import network
from compiler.compilation.images import algorithm_image, ecr_parts, framework_image
from compiler.facts import catalog
from compiler.facts.key_arns import KEY_ARN
from compiler.inputs.environments import Environment
from compiler.inputs.model import AlgorithmImage, FrameworkImage, UriImage, Workload
from compiler.inputs.reader import Findings
from compiler.rules.registry import environment_rule
from compiler.sdk import sdk_rules
from compiler.sdk.framework_images import ImageNotFound
from compiler.sdk.limits import limits, matches


@environment_rule
def fsx_channels_have_a_file_system(w: Workload, env: Environment, f: Findings) -> None:
    if w.uses_fsx and not env.has_fsx:
        names = ", ".join(c.name for c in w.inputs if c.kind == "fsx")
        f.problem("inputs", f"channel {names} reads from FSx for Lustre, but environment '{env.name}' has no file "
                  "system: add an fsx block to it in cdk.json, read from S3 there (environments: {"
                  f"{env.name}: {{inputs: ...}}}}), or leave {env.name} out of the spec's environments")


@environment_rule
def s3_locations_are_readable(w: Workload, env: Environment, f: Findings) -> None:
    for where, location in w.s3_reads:
        bucket = location.bucket
        if bucket is not None and bucket not in env.external_data_buckets:
            f.problem(where, f"bucket {bucket} is not one environment '{env.name}' may read, so the job would fail at "
                      f"start: use a key prefix in the environment's data bucket (no s3://), or add {bucket!r} to "
                      f"{env.name}.external_data_buckets in cdk.json")


@environment_rule
def keys_belong_to_the_environment(w: Workload, env: Environment, f: Findings) -> None:
    for field, key in (("output_kms_key", w.output_kms_key), ("volume_kms_key", w.compute.volume_kms_key),
                       ("secrets_kms_key", w.secrets_kms_key)):
        if key is None:
            continue
        match = KEY_ARN.fullmatch(key)
        if match is None:
            f.problem(field, "give the KMS key's ARN (arn:aws:kms:<region>:<account>:key/<id>), so the workload's role "
                      "can be allowed to use exactly that key; or remove it to use the environment's key")
        elif match["account"] and (match["account"] != env.account or match["region"] != env.region):
            f.problem(field, f"the key must be in environment '{env.name}' ({env.account}, {env.region}); jobs there "
                      "cannot use a key of another account or region")


@environment_rule
def training_plan_is_known(w: Workload, env: Environment, f: Findings) -> None:
    plan = w.compute.training_plan
    if plan is None:
        return
    if plan in env.training_plans:
        declared = env.training_plans[plan]
        if w.compute.instance_groups:
            return
        if declared.instance_type != w.instance_type:
            f.problem("training_plan", f"plan {plan} reserves {declared.instance_type}, not {w.instance_type}")
        if w.instance_count > declared.instance_count:
            f.problem("training_plan", f"plan {plan} reserves {declared.instance_count} instances; the job asks for "
                      f"{w.instance_count}")
        return
    if not matches(limits().training_plan_pattern, plan):
        names = ", ".join(sorted(env.training_plans)) or "none"
        f.problem("training_plan", f"{plan!r} is neither a training plan ARN nor a plan declared for environment "
                  f"'{env.name}' in cdk.json (declared: {names})")
    elif w.use_spot_instances:
        f.problem("training_plan", "a training plan is reserved capacity; remove use_spot_instances")


@environment_rule
def the_network_holds_the_job(w: Workload, env: Environment, f: Findings) -> None:
    """The largest cluster the workload may start (with relaunch headroom) must fit the training subnet."""
    budget = network.budget(env)
    types = [g.instance for g in w.compute.groups]
    count = w.instance_count_ceiling
    needed = max(sum(g.instance.private_ips * g.instance_count for g in w.compute.groups),
                 max(t.private_ips for t in types) * count)
    for kind in w.capacity_retry.fallback_instance_types:
        needed = max(needed, catalog.get(kind).private_ips * count)
    needed *= network.HEADROOM
    if needed > budget.for_jobs:
        mask = network.smallest_mask_for(needed, env)
        fix = (f"raise {env.name}.training_subnet_mask's room: /{mask} holds it (a subnet change replaces the subnet and "
               "what lives in it; see docs/infrastructure-changes.md)") if mask >= 16 else "split the job"
        f.problem("instance_count", f"{count} x {w.instance_type} takes up to {needed} private IPs (with room for a "
                  f"relaunch), but environment '{env.name}''s training subnet (/{env.training_subnet_mask}) has "
                  f"{budget.for_jobs} for jobs: lower instance_count (or max_instance_count), or {fix}")


@environment_rule
def traffic_encryption_follows_the_policy(w: Workload, env: Environment, f: Findings) -> None:
    """A job that may run on several nodes (a run may ask for up to max_instance_count) is held to the policy."""
    if not env.encrypt_inter_container_traffic or w.instance_count_ceiling <= 1:
        if w.unencrypted_traffic_reason and w.encrypt_inter_container_traffic is not False:
            f.warn("unencrypted_traffic_reason", "has no effect unless encrypt_inter_container_traffic is false")
        return
    if w.encrypt_inter_container_traffic is False and not w.unencrypted_traffic_reason:
        f.problem("encrypt_inter_container_traffic", f"environment '{env.name}' encrypts traffic between training "
                  "nodes; to relax that for this workload, say why in unencrypted_traffic_reason (e.g. measured "
                  "throughput loss), or remove encrypt_inter_container_traffic: false")


@environment_rule
def the_image_exists_in_the_region(w: Workload, env: Environment, f: Findings) -> None:
    if isinstance(w.image, FrameworkImage):
        try:
            framework_image(w, env.region)
        except ImageNotFound as exc:
            field = "transformers_version" if w.framework == "huggingface" else "framework_version"
            f.problem(field, f"no {w.framework} training image for this in {env.region} ({env.name}): {exc}")
    elif isinstance(w.image, AlgorithmImage):
        try:
            algorithm_image(w.image, w, env.region)
        except ImageNotFound as exc:
            f.problem("image", f"no {w.image.algorithm} {w.image.version} training image for this in {env.region} "
                      f"({env.name}): {exc}")
    elif isinstance(w.image, UriImage):
        parts = ecr_parts(w.image.uri)
        if parts is None:
            f.problem("image_uri", "SageMaker pulls training images from Amazon ECR: give an ECR image URI "
                      "(<account>.dkr.ecr.<region>.amazonaws.com/<repository>:<tag>)")
        elif parts["region"] != env.region:
            f.problem("image_uri", f"the image is in {parts['region']}, but environment '{env.name}' trains in "
                      f"{env.region}; SageMaker pulls training images from the job's own region: give the image's "
                      f"{env.region} URI (environments: {{{env.name}: {{image_uri: ...}}}} where regions differ)")


@environment_rule
def debugging_is_offered_here(w: Workload, env: Environment, f: Findings) -> None:
    hook = w.debugging.debugger_hook is not None and not w.debugging.debugger_hook_disabled
    if hook and env.region in sdk_rules.constant("DEBUGGER_UNSUPPORTED_REGIONS"):
        f.problem("debugger_hook_config", f"SageMaker Debugger is not offered in {env.region}; remove it")
    profiler = w.debugging.profiler
    if profiler is not None and not profiler.get("DisableProfiler"):
        if env.region in sdk_rules.constant("PROFILER_UNSUPPORTED_REGIONS"):
            f.problem("profiler_config", f"SageMaker Profiler is not offered in {env.region}; remove it")
        elif any(g.instance_type.split(".")[1].startswith("trn") for g in w.compute.groups):
            f.problem("profiler_config", "the SDK turns the profiler off on Trainium; remove profiler_config")
