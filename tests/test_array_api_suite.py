"""The official array API conformance suite (data-apis/array-api-tests), included in the project's
test command when a checkout is present.

Set ARRAY_API_TESTS_DIR to a checkout laid out by ../shared/tools/array-api-suite.sh, and
`python -m pytest tests` runs `array_api_tests/run.py` (this issue's target files, 20 examples,
lazyarr's xfails) and fails when the suite reports failures. Without the variable, or without the
suite's requirements (pytest-json-report, ndindex), the test is skipped: CI has no checkout.
ARRAY_API_TESTS_SCOPE picks another scope of run.py (default issue8).
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SUITE = os.environ.get("ARRAY_API_TESTS_DIR")


def _missing_requirements() -> list[str]:
    return [m for m in ("pytest_jsonreport", "ndindex", "hypothesis") if importlib.util.find_spec(m) is None]


@pytest.mark.skipif(not SUITE, reason="ARRAY_API_TESTS_DIR is not set (no array-api-tests checkout)")
def test_array_api_suite(tmp_path):
    if not (Path(SUITE) / "array_api_tests" / "__init__.py").exists():
        pytest.skip(f"ARRAY_API_TESTS_DIR={SUITE} holds no array-api-tests checkout")
    missing = _missing_requirements()
    if missing:
        pytest.skip(f"the suite needs {', '.join(missing)} (pip install pytest-json-report ndindex hypothesis)")
    scope = os.environ.get("ARRAY_API_TESTS_SCOPE", "issue8")
    proc = subprocess.run([sys.executable, str(REPO / "array_api_tests" / "run.py"), "--scope", scope,
                           "--table", str(tmp_path / "table.md")],
                          capture_output=True, text=True, env={**os.environ, "ARRAY_API_TESTS_MODULE": "lazyarr"})
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:]
    counts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (failed|error|xpassed)", summary))
    assert proc.returncode == 0 and not counts.get("failed") and not counts.get("error"), \
        f"{summary}\n{proc.stdout[-6000:]}"
