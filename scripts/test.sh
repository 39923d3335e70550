#!/usr/bin/env bash
# Set up, then run the whole test suite on the CPU, the official array API suite (on the CPU), then
# the test suite again on OpenCL (PoCL) where a platform is installed (LAZYARR_REQUIRE_OPENCL=1 makes a missing platform an error). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m pytest tests -n 2 "$@"
echo "--- the official array API suite (scripts/array-api-suite.sh) ---"
bash scripts/array-api-suite.sh
if python3 -c "import lazyarr; lazyarr.get_device('opencl')" >/dev/null 2>&1; then
  echo "--- the same suite on OpenCL ---"
  # (PoCL: work-group functions not specialised to each launch's sizes; the tests check values, and
  # the specialised ones would be a second compile, ~70 ms, of every program after its binary's)
  POCL_WORK_GROUP_SPECIALIZATION="${POCL_WORK_GROUP_SPECIALIZATION:-0}" LAZYARR_DEVICE=opencl LAZYARR_TEST_EXAMPLES="${LAZYARR_OPENCL_EXAMPLES:-5}" python3 -m pytest tests -n 2 "$@"
elif [ "${LAZYARR_REQUIRE_OPENCL:-0}" = "1" ]; then
  echo "no OpenCL platform, and LAZYARR_REQUIRE_OPENCL=1" >&2
  exit 1
else
  echo "no OpenCL platform: the OpenCL pass is skipped" >&2
fi
