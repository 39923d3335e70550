"""Differential testing at length: many random programs (tests/random_programs/) on lazyarr
against NumPy (values) and PyTorch (gradients, optimizer steps), with a summary of the failures by
class and the smallest reproducer of each.

    python scripts/differential.py --programs 500                  # every check, 500 seeds each
    python scripts/differential.py --programs 200 --checks int,loop --start 1000
    python scripts/differential.py --show loop:17                  # one program's full report

Checks: float64, float32, int (the eight integer dtypes in turn), loop (unrealized loops: float64,
float32, int32, uint8 in turn), large (values over 16384 elements: float64, int32, float32, uint8), grad, loopgrad, fd (gradients also against finite differences),
optim (SGD, SGD with momentum, Adam, AdamW in turn). The seeds are the tests' (tests/
test_differential_*.py run seeds 0..n of the same checks), so a failure here with a small seed
is one the test suite sees too. Exit status 1 when something failed.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import signal
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tests import random_programs as rp  # noqa: E402

LOOP_KINDS = [("float", "float64"), ("float", "float32"), ("int", "int32"), ("int", "uint8")]
LARGE_KINDS = [("float", "float64"), ("int", "int32"), ("float", "float32"), ("int", "uint8")]
OPTIMIZERS = sorted(rp.OPTIMIZERS)

CHECKS = {
    "float64": lambda s: rp.check_forward(s, "float", "float64"),
    "float32": lambda s: rp.check_forward(s, "float", "float32"),
    "int": lambda s: rp.check_forward(s, "int", rp.INTS[s % len(rp.INTS)]),
    "loop": lambda s: rp.check_forward(s, *LOOP_KINDS[s % 4], loop=True),
    "large": lambda s: rp.check_forward(s, *LARGE_KINDS[s % 4], large=True),
    "grad": lambda s: rp.check_gradients(s),
    "loopgrad": lambda s: rp.check_gradients(s, loop=True),
    "fd": lambda s: rp.check_gradients(s, finite_differences=True),
    "optim": lambda s: rp.check_optimizer(s, OPTIMIZERS[s % len(OPTIMIZERS)]),
}


class Timeout(BaseException):     # not an Exception: the checks' handlers must not take it for lazyarr's
    pass


_armed = [False]


def _alarm(signum, frame):
    if not _armed[0]:                # the program has ended: a late alarm is ignored
        return
    signal.alarm(1)                  # again, should this one land in a __del__, which ignores it
    raise Timeout()


def failure_class(check: str, result) -> str:
    """A short name for what went wrong: the exception, or what differs, without the numbers."""
    message = result.message
    first = message.splitlines()[0] if message else "?"
    m = re.match(r"lazyarr raised (\w+): (.*)", first)
    if m:
        return f"{m.group(1)}: {re.sub(r'[0-9]+', 'N', m.group(2))[:90]}"
    if first.startswith("NumPy raises"):
        return re.sub(r"lazyarr returned .*", "lazyarr returned values", re.sub(r"[0-9-]+", "N", first))[:120]
    first_node = getattr(result, "first", None)
    if first_node is not None:         # the operation whose value is the first to differ
        line = first_node[1].split(" = ", 1)[1]
        op = re.sub(r"v\d+", "x", re.sub(r"-?\d+\.\d+(e-?\d+)?", "c", line))
        return f"value differs first at: {op[:100]}"
    m = re.match(r"(v\d+\.grad|v\d+|loss|step \d+ \w+|input v\d+)( \(([\w_]+).*?\))?: (\w+)", first)
    if m:
        what = "gradient" if ".grad" in m.group(1) else ("input" if m.group(1).startswith("input") else
                                                         ("optimizer step" if "step" in m.group(1) else "value"))
        detail = m.group(3) if what in ("input", "gradient") else ""
        fused = " (only fused)" if "only fused" in message else ""
        return f"{check}: {what} differs{' (' + detail + ')' if detail else ''}{fused}"
    return f"{check}: {re.sub(r'[0-9]+', 'N', first)[:90]}"


def run(check: str, seed: int, timeout: int):
    signal.signal(signal.SIGALRM, _alarm)
    t = time.time()
    try:
        _armed[0] = True
        signal.alarm(timeout)
        try:
            r = CHECKS[check](seed)
        finally:
            _armed[0] = False
            signal.alarm(0)
    except Timeout:
        r = rp.Result(None, ok=False, message=f"timed out after {timeout} s")
        r.timed_out = True
    except Exception as e:    # noqa: BLE001  (a bug of the harness: report it like a failure)
        r = rp.Result(None, ok=False, message=f"harness raised {type(e).__name__}: {e}")
    return r, time.time() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=100, help="seeds per check (default 100)")
    ap.add_argument("--start", type=int, default=0, help="the first seed (default 0)")
    ap.add_argument("--checks", default=",".join(CHECKS), help=f"comma-separated, of {','.join(CHECKS)}")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per program (default 60)")
    ap.add_argument("--show", metavar="CHECK:SEED", help="print one program's full report and exit")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.show:
        check, seed = args.show.split(":")
        r, took = run(check, int(seed), args.timeout)
        print(("ok" if r.ok else "FAILED") + f" in {took:.1f} s")
        print(r.report())
        return 0 if r.ok else 1
    checks = [c.strip() for c in args.checks.split(",") if c.strip()]
    for c in checks:
        if c not in CHECKS:
            ap.error(f"unknown check {c!r} (known: {', '.join(CHECKS)})")
    failures = collections.defaultdict(list)    # class -> [(check, seed, size, result)]
    counts = collections.Counter()
    start = time.time()
    for check in checks:
        t0, bad = time.time(), 0
        for seed in range(args.start, args.start + args.programs):
            r, took = run(check, seed, args.timeout)
            counts[check] += 1
            if r.ok:
                continue
            bad += 1
            cls = "timeout" if getattr(r, "timed_out", False) else failure_class(check, r)
            size = r.program.size() if r.program is not None else 0
            failures[cls].append((check, seed, size, r))
            if not args.quiet:
                print(f"FAIL {check}:{seed} ({took:.1f} s, {size} ops): {cls}", flush=True)
        print(f"-- {check}: {bad}/{args.programs} failed in {time.time() - t0:.0f} s", flush=True)
    total = sum(len(v) for v in failures.values())
    print(f"\n==== {total} failures in {sum(counts.values())} programs ({time.time() - start:.0f} s) ====")
    for cls, items in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        seeds = ", ".join(f"{c}:{s}" for c, s, _, _ in items[:12]) + (" ..." if len(items) > 12 else "")
        print(f"\n[{len(items)}] {cls}\n    seeds: {seeds}")
        check, seed, size, r = min(items, key=lambda it: (it[2] or 10 ** 9))
        if not args.quiet:
            print(f"    smallest: {check}:{seed} ({size} ops); `--show {check}:{seed}` prints it again")
            print("    " + r.report().replace("\n", "\n    ")[:6000])
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
