"""Shared timing helpers for the benchmarks: medians over runs, each run on fresh inputs."""
import statistics
import time
from typing import Callable, Sequence


def median_time(fn: Callable[[int], object], runs: int = 7, warmup: int = 2) -> float:
    """The median wall time of fn(i) over `runs` calls, after `warmup` calls; i picks the inputs."""
    for i in range(warmup):
        fn(i)
    times = []
    for i in range(runs):
        start = time.perf_counter()
        fn(warmup + i)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    cols = [header] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cols) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in cols[1:]])
