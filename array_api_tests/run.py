#!/usr/bin/env python
"""Run the official array API conformance suite (data-apis/array-api-tests) against lazyarr.

The suite lives outside this repository, in a checkout laid out by
../shared/tools/array-api-suite.sh; say where with ARRAY_API_TESTS_DIR (default: the folder
`array-api-suite` next to the repository). See array_api_tests/README.md.

    python array_api_tests/run.py                    # this issue's target files (--scope issue8)
    python array_api_tests/run.py --scope all        # every file of the suite
    python array_api_tests/run.py --scope ci -- -n 2 # what the test command runs (scripts/array-api-suite.sh)
    python array_api_tests/run.py test_dlpack.py     # some files (names relative to the suite)
    ARRAY_API_TESTS_MODULE=array_api_strict python array_api_tests/run.py      # a reference
    ARRAY_API_TESTS_MODULE=array_api_strict python array_api_tests/run.py --same-lists  # like for like

It runs pytest in the checkout with ARRAY_API_TESTS_MODULE=lazyarr (unless set), `--max-examples 20`,
`--disable-deadline` and lazyarr's xfails file (array_api_tests/xfails.txt; its `  # why` comments
are stripped into a temporary copy, since the suite reads whole lines as test ids). Entries whose
reason starts with `complex:` are passed as skips instead (unless --run-complex-xfails): they fail
at their first complex example, and hypothesis would then spend minutes per test shrinking it.
With a scope other than `all`, the entries that belong to later issues (array_api_tests/later.txt)
are skipped; the `ci` scope also disables the extensions not built yet (CI_LATER_EXTENSIONS) and
fails when a listed id matches no test. It prints
`N passed, N failed, N skipped` (and xfailed/xpassed when there are any), the wall time, and a
per-file table, which it also writes to --table (default: lazyarr-results.md in the checkout).
Extra pytest arguments go after `--`. The exit status is pytest's.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

SCOPES = {
    "issue8": ["test_operators_and_elementwise_functions.py", "test_special_cases.py",
               "test_creation_functions.py", "test_data_type_functions.py", "test_constants.py",
               "test_inspection_functions.py", "test_dlpack.py", "test_has_names.py", "test_signatures.py"],
    "all": [],  # every test file of the suite
    "ci": [],   # every test file, less what CI_LATER names: the project's test command runs this
}
# What the "ci" scope leaves out until an issue adds it: the extensions (the suite's
# --disable-extension skips their tests) and later.txt's entries (their names and signatures).
# Both are empty since issue 17 added linalg and fft.
CI_LATER_EXTENSIONS: tuple[str, ...] = ()
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")


def suite_dir() -> Path:
    d = Path(os.environ.get("ARRAY_API_TESTS_DIR") or REPO.parent / "array-api-suite")
    if not (d / "array_api_tests" / "__init__.py").exists():
        sys.exit(f"no array-api-tests checkout at {d}: fetch github:data-apis/array-api-tests and "
                 f"github:data-apis/array-api, run ../shared/tools/array-api-suite.sh, and set "
                 f"ARRAY_API_TESTS_DIR to the folder it made")
    return d


def entries(src: Path) -> list[tuple[str, str]]:
    """The (test id, why) pairs of a list file: one id a line, `  # why` after it."""
    out = []
    for line in src.read_text().splitlines():
        test_id, _, why = line.partition("  #")
        if test_id.strip() and not test_id.startswith("#"):
            out.append((test_id.strip(), why.strip()))
    return out


def write_ids(ids: list[str], dst: Path) -> None:
    dst.write_text("".join(i + "\n" for i in ids))


def unmatched(listed: list[str], report: dict) -> list[str]:
    """The listed ids, of files that ran, that name no test (the suite's own matching rules)."""
    ran = [t["nodeid"] for t in report.get("tests", [])]
    files = {n.split("::", 1)[0] for n in ran}
    def matches(i: str, n: str) -> bool:
        return n == i or n.startswith(i + "::") or n.split("[", 1)[0] == i or (i.endswith(".py") and n.startswith(i))
    return [i for i in listed if i.split("::", 1)[0] in files and not any(matches(i, n) for n in ran)]


def table(report: dict) -> tuple[str, Counter]:
    """The per-file table of outcomes (markdown) and the totals."""
    per_file: dict[str, Counter] = defaultdict(Counter)
    for t in report.get("tests", []):
        per_file[t["nodeid"].split("::", 1)[0].removeprefix("array_api_tests/")][t["outcome"]] += 1
    for c in report.get("collectors", []):
        if c.get("outcome") == "failed":
            per_file[c["nodeid"].removeprefix("array_api_tests/") or "(collection)"]["error"] += 1
    totals: Counter = Counter()
    cols = [o for o in OUTCOMES if any(c[o] for c in per_file.values()) or o in ("passed", "failed", "skipped")]
    lines = ["| file | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for name in sorted(per_file):
        c = per_file[name]
        totals.update(c)
        lines.append(f"| {name} | " + " | ".join(str(c[o]) for o in cols) + " |")
    lines.append("| **total** | " + " | ".join(f"**{totals[o]}**" for o in cols) + " |")
    return "\n".join(lines) + "\n", totals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="test files or ids, relative to the suite's array_api_tests/")
    ap.add_argument("--scope", choices=sorted(SCOPES), default=None,
                    help="a set of files (default: issue8 when no files are given)")
    ap.add_argument("--max-examples", type=int, default=20)
    ap.add_argument("--no-xfails", action="store_true", help="run without lazyarr's xfails and scope skips")
    ap.add_argument("--same-lists", action="store_true",
                    help="apply lazyarr's xfails and skips to another module too (a like-for-like timing)")
    ap.add_argument("--run-complex-xfails", action="store_true",
                    help="run the `complex:` xfails as xfails instead of skipping them (slow: hypothesis shrinks)")
    ap.add_argument("--table", default=None, help="where to write the per-file table (markdown)")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    suite = suite_dir()
    scope = args.scope or (None if args.files else "issue8")
    files = [f"array_api_tests/{f}" for f in args.files]
    if scope is not None:
        files += [f"array_api_tests/{f}" for f in SCOPES[scope]] or ["array_api_tests/"]
    env = dict(os.environ)
    env.setdefault("ARRAY_API_TESTS_MODULE", "lazyarr")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    with tempfile.TemporaryDirectory(prefix="lazyarr-aat-") as tmp:
        report_path = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pytest", *files, "-q", "-p", "no:warnings", "-p", "no:cacheprovider",
               "--continue-on-collection-errors", "--max-examples", str(args.max_examples), "--disable-deadline",
               "--json-report", f"--json-report-file={report_path}", "--json-report-omit", "log", "streams"]
        if not args.no_xfails and (env["ARRAY_API_TESTS_MODULE"] == "lazyarr" or args.same_lists):
            xfails = entries(HERE / "xfails.txt")
            # complex entries fail on their first complex example; run as xfails, hypothesis would
            # then spend minutes per test shrinking through real-dtype examples, so they are skipped
            complex_ = {i for i, why in xfails if why.startswith("complex:") and not args.run_complex_xfails}
            later = [i for i, _ in entries(HERE / "later.txt")] if scope not in (None, "all") else []
            write_ids([i for i, _ in xfails if i not in complex_], Path(tmp) / "xfails.txt")
            write_ids(sorted(complex_) + later, Path(tmp) / "skips.txt")
            cmd += ["--xfails-file", str(Path(tmp) / "xfails.txt"), "--skips-file", str(Path(tmp) / "skips.txt")]
            print(f"lazyarr: {len(xfails)} xfails, of which {len(complex_)} `complex:` ones are skipped; "
                  f"{len(later)} entries of later issues skipped")
        if scope == "ci" and CI_LATER_EXTENSIONS:
            cmd += ["--disable-extension", *CI_LATER_EXTENSIONS]
        cmd += extra
        print(f"cd {suite} && ARRAY_API_TESTS_MODULE={env['ARRAY_API_TESTS_MODULE']} python {' '.join(cmd[1:])}",
              flush=True)
        start = time.perf_counter()
        rc = subprocess.run(cmd, cwd=suite, env=env).returncode
        wall = time.perf_counter() - start
        if not report_path.exists():
            print(f"pytest wrote no report (exit status {rc})")
            return rc or 1
        report = json.loads(report_path.read_text())
        listed = [i for name in ("xfails.txt", "skips.txt") if (Path(tmp) / name).exists()
                  for i in (Path(tmp) / name).read_text().split("\n") if i]
    stale = unmatched(listed, report)
    if stale:
        print(f"{len(stale)} listed ids match no test that ran (fix or delete them):")
        for i in stale:
            print("   ", i)
        rc = rc or (1 if scope == "ci" else 0)   # a stale list hides nothing today, but would tomorrow
    text, totals = table(report)
    summary = ", ".join(f"{totals[o]} {o}" for o in OUTCOMES if totals[o] or o in ("passed", "failed", "skipped"))
    out = Path(args.table) if args.table else suite / "lazyarr-results.md"
    out.write_text(f"# array-api-tests, {env['ARRAY_API_TESTS_MODULE']}, --max-examples {args.max_examples}\n\n"
                   f"{summary} in {wall:.1f} s\n\n{text}")
    print("\n" + text)
    print(f"{summary} in {wall:.1f} s (table: {out})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
