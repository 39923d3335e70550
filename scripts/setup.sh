#!/usr/bin/env bash
# Install what lazyarr, its tests and its examples need on a fresh Debian machine (idempotent, quiet):
# gcc (required), Python's headers (for the node table in C), tcc (the fast first compiler tier), PoCL
# (an OpenCL platform on the CPU), and the Python packages (pyopencl, the test, example and dask extras).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=""
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
command -v tcc >/dev/null 2>&1 || missing="$missing tcc"
ls /etc/OpenCL/vendors/*pocl* >/dev/null 2>&1 || missing="$missing pocl-opencl-icd"
python3 -c "import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_paths()['include'] + '/Python.h'))" \
  || missing="$missing python3-dev"
if [ -n "$missing" ]; then
  echo "installing:$missing" >&2
  if ! (apt-get update -qq && apt-get install -y -qq $missing) >/dev/null 2>&1; then
    command -v gcc >/dev/null 2>&1 || { echo "could not install gcc, which lazyarr needs" >&2; exit 1; }
    echo "could not install:$missing (lazyarr works without tcc; OpenCL needs an ICD such as PoCL)" >&2
  fi
fi
python3 -m pip install -q --disable-pip-version-check -e '.[test,examples,opencl,dask]'
