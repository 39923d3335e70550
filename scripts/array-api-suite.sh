#!/usr/bin/env bash
# The official array API conformance suite, whole (run.py --scope ci), against lazyarr on the CPU:
# 20 examples a test, deadlines off, lazyarr's xfails (array_api_tests/xfails.txt, each with its
# reason). Fails on any other failure. The suite is read from ARRAY_API_TESTS_SRC or
# ../shared/array-api-tests and copied somewhere writable first (the shared copy is read-only).
# Without a copy it is skipped, unless LAZYARR_REQUIRE_SUITE=1 (CI), which makes that an error.
set -euo pipefail
cd "$(dirname "$0")/.."
src="${ARRAY_API_TESTS_SRC:-}"
if [ -z "$src" ]; then
  for d in ../shared/array-api-tests; do
    if [ -f "$d/array_api_tests/__init__.py" ]; then src="$d"; break; fi
  done
fi
if [ -z "$src" ]; then
  if [ "${LAZYARR_REQUIRE_SUITE:-0}" = "1" ]; then
    echo "no array-api-tests checkout (set ARRAY_API_TESTS_SRC), and LAZYARR_REQUIRE_SUITE=1" >&2
    exit 1
  fi
  echo "no array-api-tests checkout (set ARRAY_API_TESTS_SRC): the official suite is skipped" >&2
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/suite"
chmod -R u+w "$tmp/suite"
LAZYARR_DEVICE=cpu ARRAY_API_TESTS_DIR="$tmp/suite" python3 array_api_tests/run.py --scope ci \
  --table "$tmp/table.md" -- -n 2 "$@"
