#!/usr/bin/env bash
# The official array API conformance suite, whole (run.py --scope ci), against lazyarr on the CPU
# (LAZYARR_SUITE_DEVICE=opencl: on OpenCL, with PoCL's work-group specialisation off as in the tests):
# 20 examples a test, deadlines off, lazyarr's xfails (array_api_tests/xfails.txt, each with its
# reason). Fails on any other failure. The suite is read from ARRAY_API_TESTS_SRC or
# ../shared/array-api-tests and copied somewhere writable first (the shared copy is read-only).
# Without either, the pinned commits of the suite and of its spec are fetched with git into the
# user's cache (once); only when that fails is the suite skipped, unless LAZYARR_REQUIRE_SUITE=1
# (CI), which makes that an error.
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE_COMMIT=55fcc60179efa2680ddd6cd926ddf17b83530e2b   # data-apis/array-api-tests, 2026-04-03
SPEC_COMMIT=5f847a3858875c682ae901aa22b0413bf24be9da    # data-apis/array-api, the suite's submodule pin (2025.12)
src="${ARRAY_API_TESTS_SRC:-}"
if [ -z "$src" ]; then
  for d in ../shared/array-api-tests; do
    if [ -f "$d/array_api_tests/__init__.py" ]; then src="$d"; break; fi
  done
fi

fetch_pinned() {   # the suite at SUITE_COMMIT with array-api/ at SPEC_COMMIT, into $1 (shallow, by commit)
  local into="$1" work repo commit sub
  work="$(mktemp -d)"
  for part in "array-api-tests $SUITE_COMMIT suite" "array-api $SPEC_COMMIT suite/array-api"; do
    read -r repo commit sub <<< "$part"
    git init -q "$work/$sub" &&
      GIT_TERMINAL_PROMPT=0 timeout 300 git -C "$work/$sub" fetch -q --depth 1 "${ARRAY_API_TESTS_GIT:-https://github.com/data-apis}/$repo" "$commit" &&
      git -C "$work/$sub" -c advice.detachedHead=false checkout -q FETCH_HEAD || { rm -rf "$work"; return 1; }
  done
  mkdir -p "$(dirname "$into")" && rm -rf "$into" && mv "$work/suite" "$into" && rm -rf "$work"
}

if [ -z "$src" ] && command -v git > /dev/null; then
  dest="${XDG_CACHE_HOME:-$HOME/.cache}/lazyarr/array-api-tests-${SUITE_COMMIT:0:12}"
  if [ ! -f "$dest/array_api_tests/__init__.py" ]; then
    echo "no array-api-tests checkout (../shared/array-api-tests, ARRAY_API_TESTS_SRC): fetching the pinned" \
         "commits (data-apis/array-api-tests ${SUITE_COMMIT:0:12}, data-apis/array-api ${SPEC_COMMIT:0:12}) with git" \
         "into $dest" >&2
    fetch_pinned "$dest" || echo "fetching the suite failed" >&2
  fi
  if [ -f "$dest/array_api_tests/__init__.py" ]; then src="$dest"; fi
fi
if [ -z "$src" ]; then
  if [ "${LAZYARR_REQUIRE_SUITE:-0}" = "1" ]; then
    echo "no array-api-tests checkout (set ARRAY_API_TESTS_SRC), and LAZYARR_REQUIRE_SUITE=1" >&2
    exit 1
  fi
  echo "no array-api-tests checkout (set ARRAY_API_TESTS_SRC) and none could be fetched: the official suite is skipped" >&2
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/suite"
chmod -R u+w "$tmp/suite"
device="${LAZYARR_SUITE_DEVICE:-cpu}"
POCL_WORK_GROUP_SPECIALIZATION="${POCL_WORK_GROUP_SPECIALIZATION:-0}" LAZYARR_DEVICE="$device" \
  ARRAY_API_TESTS_DIR="$tmp/suite" python3 array_api_tests/run.py --scope ci \
  --table "$tmp/table.md" -- -n 2 "$@"
