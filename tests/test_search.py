"""The optional search over kernel optimisation actions (lazyarr.compiler.search)."""
import os

import numpy as np
import pytest

import lazyarr as xp
from lazyarr import settings
from lazyarr.compiler.opts import Opt
from lazyarr.compiler.search import search, variants
from lazyarr.runtime import executor
from lazyarr.runtime.cpu_compiler import kernel_key
from tests.helpers import assert_close


@pytest.fixture(autouse=True)
def sizes_in_the_code(monkeypatch):
    """These kernels are small; kernel optimisation acts only on kernels whose sizes are in the code
    (small kernels take theirs as arguments: lazyarr.compiler.rangeify)."""
    monkeypatch.setattr(xp.settings, "generic_sizes", 0)

pytestmark = pytest.mark.cpu_only


def test_variants_drop_halve_and_double_each_action():
    opts = [Opt("vector", 1, 8), Opt("upcast", 0, 4)]
    got = variants(opts)
    assert got[0] == opts and got[1] == []
    assert [Opt("upcast", 0, 4)] in got and [Opt("vector", 1, 8)] in got
    assert [Opt("vector", 1, 4), Opt("upcast", 0, 4)] in got and [Opt("vector", 1, 16), Opt("upcast", 0, 4)] in got
    assert [Opt("vector", 1, 8), Opt("upcast", 0, 2)] in got
    assert len(got) == len({tuple(v) for v in got})


def test_search_installs_the_fastest_correct_variant(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((96, 128)).astype(np.float32) for _ in range(2))
    A, B = xp.asarray(a), xp.asarray(b.T.copy())
    out = A @ B
    (item,) = out.schedule()
    (result,) = search(out, runs=3)
    assert result.variants >= 3 and result.heuristic and result.best_seconds <= result.heuristic_seconds
    prog = executor._programs[executor._program_key(item)]
    cached = os.path.join(str(tmp_path), "kernels", kernel_key(item.ast, "opt", settings.transcendentals) + ".so")
    assert open(cached, "rb").read() == open(prog.path, "rb").read()   # a later process loads the winner
    assert_close(out, a @ b.T, rtol=1e-4, atol=1e-4)


def test_search_leaves_kernels_without_actions_alone():
    x = xp.asarray(np.arange(12.0))
    (result,) = search(xp.exp(x) + 1, runs=2)
    assert result.heuristic == [] and result.best == [] and result.variants == 1
    assert_close(xp.exp(x) + 1, np.exp(np.arange(12.0)) + 1)
