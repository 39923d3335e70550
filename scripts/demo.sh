#!/usr/bin/env bash
# Set up, then run the demo: lazy recording, the generated kernels, and the results against NumPy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 examples/demo.py
