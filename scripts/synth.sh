#!/usr/bin/env bash
# The main job: synthesize every environment offline with the pinned CDK CLI (cdk-nag and the synth-time
# guards run as part of it) and print the review summary that goes into pull requests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh requirements.txt

export SAGEMAKER_SUPPRESS_V2_WARNING=1 JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
export AWS_EC2_METADATA_DISABLED=true CDK_DISABLE_VERSION_CHECK=1

.venv/bin/python -m training validate
node_modules/.bin/cdk synth --quiet --no-notices --output cdk.out >&2
.venv/bin/python -m training summary --cdk-out cdk.out
