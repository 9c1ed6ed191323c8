#!/usr/bin/env bash
# Installs what the project needs, from its own pinned files: a virtual environment at .venv and the Node
# tools under node_modules. Re-running is cheap: each step is skipped while its inputs are unchanged.
# Usage: scripts/bootstrap.sh [requirements file]   (default: requirements.txt)
set -euo pipefail
cd "$(dirname "$0")/.."

REQUIREMENTS="${1:-requirements.txt}"
PYTHON="${PYTHON:-python3}"

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $($PYTHON --version)" >&2
  "$PYTHON" -m venv .venv
fi

stamp=".venv/.installed-$(cat "$REQUIREMENTS" requirements.txt constraints.txt 2>/dev/null | sha256sum | cut -c1-16)-$(basename "$REQUIREMENTS")"
if [ ! -f "$stamp" ]; then
  echo "== installing Python packages from $REQUIREMENTS" >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS" -c constraints.txt
  touch "$stamp"
fi

lock_stamp="node_modules/.installed-$(sha256sum package-lock.json | cut -c1-16)"
if [ ! -f "$lock_stamp" ]; then
  echo "== installing Node tools from package-lock.json" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  touch "$lock_stamp"
fi
