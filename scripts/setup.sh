#!/usr/bin/env bash
# Install what lazyarr and its tests need on a fresh Debian machine (idempotent, quiet).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v gcc >/dev/null 2>&1; then
  echo "installing gcc" >&2
  (apt-get update -qq && apt-get install -y -qq gcc) >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check -e '.[test,examples]'
