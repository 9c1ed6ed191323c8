#!/usr/bin/env bash
# Installs what the project needs, from its own pinned files only: a virtual environment at .venv and the Node
# tools under node_modules. Re-running is cheap: each step is skipped while its inputs are unchanged.
# Progress goes to standard error (which step, how long it usually takes, a heartbeat while it runs), so the
# calling script's standard output stays its own.
# Usage: scripts/bootstrap.sh [requirements file] [tool folder ...]   (default: requirements.txt)
# A tool folder (tools/NAME, with its own requirements.txt and constraints.txt) gets a virtual environment of its own
# at .venv-tools/NAME: for a tool whose pins conflict with the project's (checkov pins an old boto3).
set -euo pipefail
cd "$(dirname "$0")/.."

REQUIREMENTS="${1:-requirements.txt}"
TOOLS=("${@:2}")
PYTHON="${PYTHON:-python3}"
LOG_DIR=".cache/bootstrap"
mkdir -p "$LOG_DIR"

say() { echo "$@" >&2; }

# run_step LABEL USUAL_DURATION LOG COUNTER_REGEX COMMAND...: run COMMAND with its output in LOG, printing a
# heartbeat every 15 s (seconds so far, and how many LOG lines match COUNTER_REGEX, e.g. packages fetched).
run_step() {
  local label=$1 usual=$2 log=$3 counter=$4
  shift 4
  say "== $label (usually $usual)"
  local started=$SECONDS
  "$@" >"$log" 2>&1 &
  local pid=$! last=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    local elapsed=$((SECONDS - started))
    if (( elapsed - last >= 15 )); then
      last=$elapsed
      local phase="working"
      grep -q '^Installing collected packages' "$log" && phase="unpacking into .venv"
      say "   ... ${elapsed} s: $(grep -c -E "$counter" "$log" || true) done, $phase"
    fi
  done
  if ! wait "$pid"; then
    tail -n 40 "$log" >&2
    say "== FAILED: $label (full log: $log)"
    return 1
  fi
  say "   done in $((SECONDS - started)) s"
}

if [ ! -x .venv/bin/python ]; then
  say "== creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi

stamp=".venv/.installed-$(cat "$REQUIREMENTS" requirements.txt constraints.txt pyproject.toml training/requirements.txt \
  2>/dev/null | sha256sum | cut -c1-16)-$(basename "$REQUIREMENTS")"
if [ ! -f "$stamp" ]; then
  packages=$(grep -c -E '^[A-Za-z0-9]' constraints.txt)
  run_step "installing Python packages from $REQUIREMENTS (up to $packages pinned in constraints.txt)" \
    "1-2 minutes on a fresh machine, seconds when cached" "$LOG_DIR/pip.log" '^Collecting ' \
    .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off \
      -r "$REQUIREMENTS" -c constraints.txt
  if [ -f pyproject.toml ] && grep -q '^\[project.scripts\]' pyproject.toml; then
    run_step "installing this project's packages and the trainctl command into .venv (editable)" "5 s" \
      "$LOG_DIR/project.log" '^Successfully' \
      .venv/bin/python -m pip install --disable-pip-version-check --no-deps --no-build-isolation -e .
  fi
  touch "$stamp"
fi

lock_stamp="node_modules/.installed-$(sha256sum package-lock.json | cut -c1-16)"
if [ ! -f "$lock_stamp" ]; then
  run_step "installing Node tools from package-lock.json (CDK CLI, asl-validator, ...)" "10-30 s" \
    "$LOG_DIR/npm.log" '^added ' npm ci --no-audit --no-fund --loglevel=error
  touch "$lock_stamp"
fi

for tool in "${TOOLS[@]}"; do
  name=$(basename "$tool")
  venv=".venv-tools/$name"
  tool_stamp="$venv/.installed-$(cat "$tool/requirements.txt" "$tool/constraints.txt" | sha256sum | cut -c1-16)"
  if [ ! -f "$tool_stamp" ]; then
    [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
    run_step "installing $name into $venv (its own pins: $tool/constraints.txt)" "30-60 s on a fresh machine" \
      "$LOG_DIR/$name.log" '^Collecting ' \
      "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off \
        -r "$tool/requirements.txt" -c "$tool/constraints.txt"
    touch "$tool_stamp"
  fi
done
