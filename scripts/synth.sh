#!/usr/bin/env bash
# The main job: synthesize every environment offline with the pinned CDK CLI (cdk-nag and the synth-time
# guards run as part of it) and print the review summary that goes into pull requests. Progress goes to
# standard error; standard output is the summary alone.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh requirements.txt

export SAGEMAKER_SUPPRESS_V2_WARNING=1 JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
export AWS_EC2_METADATA_DISABLED=true CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=true

echo "== validating every workload against every environment (about 1 s)" >&2
.venv/bin/trainctl validate >&2

echo "== synthesizing every environment offline with the pinned CDK CLI (about 15 s)" >&2
# Two CLI notices are dropped because they mean nothing here (README, "Quick start"): the count of CDK feature
# flags left at their defaults, and "Supply a stack id" (every stack lives in a per-environment Stage).
set +e
node_modules/.bin/cdk synth --quiet --no-notices --output cdk.out 2>&1 \
  | grep -v -E 'feature flags are not configured|^Supply a stack id' >&2
synth_status=${PIPESTATUS[0]}
set -e
if [ "$synth_status" -ne 0 ]; then
  echo "== cdk synth stopped (exit $synth_status): see the messages above" >&2
  exit "$synth_status"
fi

echo "== review summary" >&2
.venv/bin/trainctl summary --cdk-out cdk.out
