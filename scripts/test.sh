#!/usr/bin/env bash
# The whole test suite: lint, then every test (pure core, CDK synth, state machines in moto, training code).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh requirements-dev.txt

export SAGEMAKER_SUPPRESS_V2_WARNING=1 JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
export AWS_EC2_METADATA_DISABLED=true CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=true

echo "== lint: ruff" >&2
.venv/bin/ruff check .
echo "== tests (about 3 minutes on 2 cores)" >&2
.venv/bin/python -m pytest "$@"
