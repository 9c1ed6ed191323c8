"""Every key a workload spec may hold, and a sentence for every key it may not.

Keys are the SageMaker Python SDK v2 estimators' argument names (`EstimatorBase.__init__` and the PyTorch,
TensorFlow, HuggingFace, XGBoost and SKLearn classes), so an estimator call translates key by key, plus a few platform keys. Each
SDK argument is either accepted with the SDK's semantics or refused here with the reason: the platform owns it
(the role, the network, where outputs go) or cannot take it. A test checks that every argument of the pinned
SDK's estimators appears in exactly one of these tables.
"""

from __future__ import annotations

# SDK estimator arguments the spec accepts with the SDK's meaning.
SDK_ARGUMENTS = frozenset({
    # code
    "entry_point", "source_dir", "dependencies", "container_log_level",
    # image and framework
    "framework_version", "py_version", "pytorch_version", "tensorflow_version", "transformers_version", "image_uri",
    "model_dir",
    # compute
    "instance_type", "instance_count", "instance_groups", "volume_size", "volume_kms_key",
    "keep_alive_period_in_seconds", "training_plan", "instance_placement_config",
    # run
    "max_run", "max_wait", "use_spot_instances", "max_retry_attempts", "checkpoint_local_path", "base_job_name",
    "distribution", "hyperparameters", "environment", "input_mode", "model_uri", "model_channel_name",
    # observability
    "metric_definitions", "enable_sagemaker_metrics", "debugger_hook_config", "disable_profiler", "profiler_config",
    "tensorboard_output_config", "tags",
    # options
    "encrypt_inter_container_traffic", "enable_network_isolation", "enable_infra_check", "enable_remote_debug",
    "enable_session_tag_chaining", "training_repository_access_mode", "container_entry_point",
    "container_arguments", "disable_output_compression", "output_kms_key",
})

# Keys of the platform's own, with what they mean (shown in messages and docs/workload-spec.md).
PLATFORM_KEYS = {
    "name": "the workload's name: state machine, job-name prefix, S3 prefixes",
    "description": "one line for people",
    "framework": "which SDK estimator: pytorch, tensorflow, huggingface, xgboost or sklearn (absent with image_uri or "
                 "image: the generic Estimator)",
    "image": "{repository, tag}: an image this project builds into its own ECR repository; or {algorithm, version}: a "
             "SageMaker built-in algorithm, its image resolved in each environment's region",
    "inputs": "the channels fit() would get: data-bucket prefixes, allowed s3:// URIs, or paths in the environment's FSx",
    "checkpoints": "true: checkpoints under the environment's checkpoint bucket, per run, so a relaunch resumes",
    "capacity_retry": "relaunches after EC2 capacity failures: {max_attempts, wait_seconds, backoff_rate, "
                      "fallback_instance_types, capacity_window_minutes, instance_preferences}",
    "max_instance_count": "the largest instance_count an execution may ask for (default: instance_count)",
    "stall_watchdog": "{metric, minutes, max_relaunches}: a job that writes no line of its metric (one of "
                      "metric_definitions) to its log for minutes (default 30) of training is stopped and relaunched "
                      "from its checkpoints, at most max_relaunches (default 2) times",
    "concurrent_runs": "true: runs of this workload may go side by side; default false: a run started while another "
                       "is in progress ends at once with AlreadyRunning",
    "choices": "{hyperparameter: [values]}: the only values a run may give these text hyperparameters (any text in "
               "them; without choices a run's text may hold only letters, digits and ._:/=+@-)",
    "secrets": "{NAME: <Secrets Manager secret ARN>}: secrets the process reads at start under NAME, through the "
               "workload's role; only the ARNs travel in the request (docs/security.md#secrets)",
    "secrets_kms_key": "the ARN of the customer managed KMS key the secrets are encrypted with (none: the AWS "
                       "managed key aws/secretsmanager)",
    "network_isolation_off_reason": "why this workload runs without network isolation (enable_network_isolation: "
                                    "false), which is on by default",
    "unencrypted_traffic_reason": "why this workload may run without inter-container traffic encryption where the "
                                  "environment requires it",
    "remote_debug_reason": "why this workload's jobs take remote debugging sessions (enable_remote_debug: true)",
    "schedule": "when runs start by themselves: cron(...) or rate(...) as EventBridge Scheduler takes them, or "
                "{expression, timezone, environments, input}; a start while a run goes on is skipped (AlreadyRunning)",
    "max_run_cost_usd": "the most a run may cost, in USD at list prices: a start whose worst case (max_run x "
                        "instance_count x the highest price of its instance types) exceeds it is refused, and "
                        "relaunches get only the run time left",
    "environments": "per environment: {} to deploy as written, or keys to override there; absent: every "
                    "environment whose default_workloads (cdk.json) takes it",
}

# SDK arguments the platform refuses, and why: each sentence names who owns the value or why it cannot be taken.
REFUSED = {
    "role": "the platform owns the execution role: each workload gets its own, scoped to its own data, output and "
            "checkpoint prefixes; remove role",
    "sagemaker_session": "jobs are started by the workload's state machine, not by an SDK session; remove it",
    "subnets": "the platform owns the network: jobs run in the environment's training subnet (one pinned "
               "Availability Zone, EFA-ready); remove subnets",
    "security_group_ids": "the platform owns the network: jobs use the environment's EFA-ready training security "
                          "group; remove security_group_ids",
    "git_config": "the platform ships code from this repository (reviewed in pull requests, packed at synth without "
                  "network access); put the code under the repository and use source_dir",
    "code_location": "the platform uploads the code as a CDK asset at deploy time; remove code_location",
    "output_path": "the platform owns output locations: every job writes to s3://<environment output bucket>/"
                   "<workload>/, the only place its role may write; remove output_path",
    "checkpoint_s3_uri": "the platform owns checkpoint locations (its role may write only its own prefix): set "
                         "checkpoints: true for s3://<checkpoint bucket>/<workload>/<run id>/, which a capacity "
                         "relaunch resumes from",
    "rules": "Debugger and Profiler rules start processing jobs with images and roles of their own, which the "
             "platform does not provide; remove rules (debugger_hook_config and profiler_config are accepted)",
    "compiler_config": "SageMaker Training Compiler is not supported by the platform; remove compiler_config",
    "training_recipe": "training recipes fetch their launcher and configuration from the HyperPod recipes repository "
                       "when the estimator is built (network access at synth); write the entry point and "
                       "hyperparameters out instead",
    "recipe_overrides": "goes with training_recipe, which the platform does not take",
    "image_uri_region": "the platform resolves an AWS image in each environment's own region, the region SageMaker "
                        "pulls a job's training image from; remove image_uri_region",
    "training_repository_credentials_provider_arn": "images come from ECR through the VPC endpoints; a private "
                                                    "registry with a credentials Lambda is not part of the platform; "
                                                    "remove it and push the image to the environment's ECR "
                                                    "(image_uri, or image: to have the project build it)",
}

# SDK v1 names: the v2 SDK still renames them with a warning (or drops them); the spec wants the v2 spelling.
RENAMED = {
    "train_instance_count": "instance_count",
    "train_instance_type": "instance_type",
    "train_max_run": "max_run",
    "train_use_spot_instances": "use_spot_instances",
    "train_max_wait": "max_wait",
    "train_volume_size": "volume_size",
    "train_volume_kms_key": "volume_kms_key",
    "distributions": "distribution",
    "image_name": "image_uri",
}

_REQUIREMENTS = ("the SDK ignores it silently. The framework containers pip-install requirements.txt from the top of "
                 "source_dir when the job starts, but under network isolation (the default) pip reaches no package "
                 "index: every line must already be in the image, which validate checks. Bake the packages into an "
                 "image of this project (image: {repository: NAME}), or turn isolation off with a reason and an egress "
                 "path (docs/workload-spec.md#packages-the-job-needs)")

# Names the SDK swallows in **kwargs and ignores without a word: say what the writer most likely meant.
LOOKALIKES = {
    "env": ("environment", "the SDK ignores `env` silently, so these variables would never reach the job"),
    "environment_variables": ("environment", "the SDK ignores it silently"),
    "job_name": ("base_job_name", "the platform names each run's job <base_job_name>-<run id>-<attempt>; "
                 "job_name is a fit() argument"),
    "hyperparams": ("hyperparameters", "the SDK ignores it silently"),
    "hyper_parameters": ("hyperparameters", "the SDK ignores it silently"),
    "metrics": ("metric_definitions", "the SDK ignores it silently"),
    "instance": ("instance_type", "the SDK ignores it silently"),
    "spot": ("use_spot_instances", "the SDK ignores it silently"),
    "max_runtime": ("max_run", "the SDK ignores it silently"),
    "volume_size_in_gb": ("volume_size", "the SDK ignores it silently"),
    "enable_sagemaker_metrics_time_series": ("enable_sagemaker_metrics", "the request field's name; the SDK ignores it "
                                             "silently"),
    "requirements_file": ("", _REQUIREMENTS),
    "requirements": ("", _REQUIREMENTS),
    # SDK v1's TensorFlow legacy-mode arguments (AWS's older notebooks): v2 takes them in **kwargs and drops them
    "script_mode": ("", "is SDK v1's; v2 always runs script mode and ignores it silently: remove it"),
    "training_steps": ("hyperparameters", "SDK v1's legacy argument, which v2 ignores silently: pass it as "
                       "hyperparameters: {training_steps: ...} for the script to read"),
    "evaluation_steps": ("hyperparameters", "SDK v1's legacy argument, which v2 ignores silently: pass it as "
                         "hyperparameters: {evaluation_steps: ...} for the script to read"),
    "checkpoint_path": ("checkpoints", "SDK v1's legacy argument, which v2 ignores silently: checkpoints: true keeps "
                        "them under the workload's own prefix (checkpoint_local_path names the folder in the job)"),
    "region": ("", "the SDK ignores it silently: a job runs in the region of the environment it deploys to "
               "(cdk.json)"),
    "wait": ("", "wait is a fit() argument: runs are started by the workload's state machine"),
    "logs": ("", "logs is a fit() argument: follow a run with `trainctl start --follow` or `trainctl logs`"),
    "experiment_config": ("", "fit()'s experiment_config (SageMaker Experiments) is not wired by the platform: the "
                          "state machine's role has no Experiments permissions"),
}


def known_keys() -> frozenset[str]:
    """Every key the spec reads (accepted SDK arguments and platform keys)."""
    return SDK_ARGUMENTS | frozenset(PLATFORM_KEYS)
