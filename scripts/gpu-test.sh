#!/usr/bin/env bash
# The whole test suite on a GPU's OpenCL, run on the GPU machine from the repository's root: the
# wheels from scripts/gpu-wheels.sh (carried in .whl/) are installed into /tmp/site, NVIDIA's
# OpenCL driver is registered where it is present and no ICD names it, and pytest runs every test
# with LAZYARR_DEVICE=opencl. Extra arguments go to pytest (GPU_TEST_WORKERS: its processes, 14);
# when the first names test files (tests/test_sort.py ...), only those run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
nvidia=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
if [ -e "$nvidia" ] && ! grep -qs "$nvidia" /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors
  echo "$nvidia" > /etc/OpenCL/vendors/nvidia.icd
fi
python3 -c "import lazyarr; print('testing on', repr(lazyarr.get_device('opencl')))"
case "${1:-}" in tests/*) paths=() ;; *) paths=(tests) ;; esac
LAZYARR_DEVICE=opencl python3 -m pytest "${paths[@]}" -n "${GPU_TEST_WORKERS:-14}" -p no:cacheprovider "$@"
