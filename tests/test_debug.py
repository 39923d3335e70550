"""Seeing what happens: profile() tables per kernel, graph()/to_dot() of a tensor and its kernels,
and the progress line of a long compile on a terminal."""
import io
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import lazyarr as xp
from lazyarr.runtime import executor


def test_profile_counts_every_launch_of_each_kernel():
    x = xp.asarray(np.random.default_rng(0).standard_normal((64, 64)))
    out = io.StringIO()
    with xp.profile(file=out) as p:
        for _ in range(3):
            (xp.exp(x) * 2).sum().realize()
    rows = p.rows()
    assert sum(r["calls"] for r in rows) == 3 and all(r["total_ms"] > 0 and r["mb"] > 0 for r in rows)
    assert rows[0]["device"] == x.device.name
    text = out.getvalue()
    assert "GB/s" in text and "3 launches" in text
    assert executor.profiles == []   # nothing is recorded afterwards


def test_graph_draws_the_operations_and_the_kernels(tmp_path):
    x = xp.asarray(np.ones((4, 4)))
    y = (xp.exp(x) * 2).sum()
    path = tmp_path / "y.dot"
    text = y.to_dot(str(path))
    assert text.startswith("digraph lazyarr {") and text.rstrip().endswith("}")
    assert "EXP" in text and "REDUCE_AXIS" in text and "cluster_kernels" in text
    assert path.read_text() == text
    assert "cluster_kernels" not in xp.debug.graph(y, kernels=False)
    with pytest.raises(TypeError):
        xp.debug.graph(np.ones(2))
    with pytest.raises(TypeError, match="file name"):
        y.to_dot(1)   # not file descriptor 1


def test_a_long_compile_shows_a_progress_line_on_a_terminal(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    err = Terminal()
    monkeypatch.setattr(executor.sys, "stderr", err)
    monkeypatch.setattr(executor, "PROGRESS_AFTER", 0.0)
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(lambda i=i: (time.sleep(0.3), i)[1]) for i in range(3)]
        assert executor._with_progress(futures, time.perf_counter()) == [0, 1, 2]
    assert "compiling kernels" in err.getvalue() and err.getvalue().endswith("\r")
