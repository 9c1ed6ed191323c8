#!/usr/bin/env bash
# The whole test suite: lint, then every test (pure core, CDK synth, state machines in moto, training code).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh requirements-dev.txt tools/checkov

export SAGEMAKER_SUPPRESS_V2_WARNING=1 JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
export AWS_EC2_METADATA_DISABLED=true CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=true

echo "== lint: ruff, mypy" >&2
.venv/bin/ruff check .
.venv/bin/mypy  # files and settings in pyproject.toml; import-linter, cfn-lint, cdk-nag, actionlint run as tests
# One worker per core (pytest-xdist); each test file runs in one worker, so module fixtures (the trainer's reference
# runs, the state machines deployed in moto) are set up once. Each worker synthesizes the app once (session fixture).
echo "== tests (about 6 minutes on 2 idle cores, 20 or more on 2 busy ones: README, \"Timings\")" >&2
.venv/bin/python -m pytest -n auto --dist loadfile "$@"
