#!/usr/bin/env bash
# Download, here, the wheels the test suite needs on a GPU machine whose Python (3.12) lacks them
# (cffi, pyopencl and theirs; z3-solver, ndindex and array-api-extra for the tests) into .whl/,
# which git ignores. scripts/gpu-test.sh installs them there.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
platforms=""
for p in manylinux_2_34_x86_64 manylinux_2_31_x86_64 manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 \
         manylinux_2_17_x86_64 manylinux2014_x86_64; do
  platforms="$platforms --platform $p"
done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $platforms -d .whl \
  cffi pycparser pyopencl pytools platformdirs siphash24 z3-solver ndindex array-api-extra array-api-compat
ls .whl
