"""The node table and the structure walk in C (lazyarr/compiler/uop_native.c) against their Python
versions: interning, release (by reference count, by the cycle collector, of very deep graphs),
bad input, the walk's results on random graphs with realized nodes, and the stages' anchors
(stages_native.c) on random programs never realized. The Python fallback
(LAZYARR_NATIVE=0) runs a training step in a subprocess and must agree exactly."""
import gc
import json
import os
import subprocess
import sys
import weakref

import pytest
from hypothesis import given, strategies as st

from lazyarr import dtypes
from lazyarr.arrays import wrap
from lazyarr.compiler import uop, walk
from lazyarr.compiler.buffer_views import buffer_view, realized_for
from lazyarr.compiler.uop import Ops, UOp, node_exists
from lazyarr.runtime.device import Buffer
from lazyarr.runtime.devices import get_device
from tests.helpers import child_env

native = uop.native_module
needs_native = pytest.mark.skipif(native is None, reason="LAZYARR_NATIVE=0: the Python table is in use")
f32 = dtypes.float32
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_native_table_is_built_where_a_compiler_and_headers_are():
    if os.environ.get("LAZYARR_NATIVE", "1") != "0":
        assert native is not None and issubclass(UOp, native.Node)


def test_equal_nodes_are_identical_and_leave_the_table_when_freed():
    a = UOp(Ops.CONST, f32, (), 1.5)
    b = UOp(Ops.ADD, f32, (a, a), "test-tag")
    assert UOp(Ops.ADD, f32, (a, a), "test-tag") is b
    assert UOp(op=Ops.ADD, dtype=f32, src=(a, a), arg="test-tag") is b
    assert UOp(Ops.CONST, f32, (), 0.0) is not UOp(Ops.CONST, f32, (), -0.0)
    assert UOp(Ops.CONST, f32, (), float("nan")) is UOp(Ops.CONST, f32, (), float("nan"))
    assert UOp(Ops.CONST, dtypes.float64, (), 1.5) is not a
    assert node_exists(Ops.ADD, f32, (a, a), "test-tag")
    ref = weakref.ref(b)
    del b
    assert ref() is None and not node_exists(Ops.ADD, f32, (a, a), "test-tag")
    c = UOp(Ops.ADD, f32, (a, a), "test-tag")   # built again after it was freed: a new live node
    assert c.op is Ops.ADD and c.src == (a, a) and c.arg == "test-tag" and c._shape is None


def test_the_table_interns_through_growth_shrinking_and_args_whose_equality_runs_python():
    """The table (open addressing in C) grows past its first size and shrinks when a large graph
    goes, and keeps interning right throughout; float and complex args are keyed by their bits;
    an arg whose __eq__ builds and frees nodes in the middle of a lookup (which may move the
    table) still finds its node; an unhashable arg is a TypeError."""
    base = UOp(Ops.CONST, f32, (), 3.0625)
    many = [UOp(Ops.ADD, f32, (base, base), ("grow", i)) for i in range(50_000)]
    assert all(UOp(Ops.ADD, f32, (base, base), ("grow", i)) is many[i] for i in range(0, 50_000, 997))
    refs = [weakref.ref(n) for n in many[::1000]]
    del many
    assert all(r() is None for r in refs) and not node_exists(Ops.ADD, f32, (base, base), ("grow", 5))
    kept = [UOp(Ops.ADD, f32, (base, base), ("after", i)) for i in range(100)]
    assert all(UOp(Ops.ADD, f32, (base, base), ("after", i)) is kept[i] for i in range(100))
    assert UOp(Ops.CONST, dtypes.complex64, (), complex(1, 0.0)) is not UOp(Ops.CONST, dtypes.complex64, (), complex(1, -0.0))
    assert UOp(Ops.CONST, dtypes.complex64, (), complex(float("nan"), 1)) is \
        UOp(Ops.CONST, dtypes.complex64, (), complex(float("nan"), 1))
    assert UOp(Ops.NOOP, f32, (base,), 1.0) is not UOp(Ops.NOOP, f32, (base,), 1)

    if native is None:   # (the Python table is a dict: its lookup starts again whenever an arg's __eq__ changes it)
        return

    class Busy:   # an arg whose equality builds nodes (and drops them) while a lookup compares it
        def __init__(self, tag):
            self.tag = tag

        def __hash__(self):
            return 12345

        def __eq__(self, other):
            junk = [UOp(Ops.NOOP, f32, (base,), ("busy-junk", self.tag, i)) for i in range(3000)]
            del junk
            return isinstance(other, Busy) and other.tag == self.tag
    nodes = [UOp(Ops.NOOP, f32, (base,), Busy(k)) for k in range(4)]
    assert len(set(map(id, nodes))) == 4
    assert [UOp(Ops.NOOP, f32, (base,), Busy(k)) for k in range(4)] == nodes
    with pytest.raises(TypeError):
        UOp(Ops.NOOP, f32, (base,), ["a list is unhashable"])


@needs_native
def test_a_buffers_view_built_in_c_is_the_python_one():
    """buffer_views.buffer_view's nodes, built in C (record_native.c: record_buffer_view): the same
    interned nodes as UOp() builds, their shapes set; a shape that is not a tuple is refused."""
    buf = Buffer(get_device("cpu"), 12, f32)
    flat = UOp(Ops.BUFFER, f32, (), buf)
    for shape, want in (((12,), flat), ((3, 4), UOp(Ops.RESHAPE, f32, (flat,), (3, 4))),
                        ((2, 1, 6), UOp(Ops.RESHAPE, f32, (flat,), (2, 1, 6)))):
        got = native.record_buffer_view(buf, shape)
        assert got is want and got._shape == shape and flat._shape == (12,)
    with pytest.raises(TypeError):
        native.record_buffer_view(buf, [3, 4])


@needs_native
def test_caches_are_writable_and_fields_are_not():
    # (a constant no other test makes, and its shape put back: nodes are interned, and a node kept
    # alive elsewhere, such as by record_native.c's recent constants, would keep a wrong shape)
    a = UOp(Ops.CONST, f32, (), 2.71828125)
    assert a._view is None and a._grad is None
    a._shape = (3,)
    try:
        assert a._shape == (3,)
    finally:
        a._shape = ()
    with pytest.raises(AttributeError):
        a.op = Ops.NEG


@needs_native
def test_bad_input_is_a_type_error():
    with pytest.raises(TypeError):
        UOp(Ops.ADD, f32, (1, 2))
    with pytest.raises(TypeError):
        UOp(Ops.ADD, f32, [UOp(Ops.CONST, f32, (), 1.0)] * 2)   # sources: a tuple
    with pytest.raises(TypeError):
        UOp(Ops.CONST, f32, (), [1, 2])   # unhashable arg
    with pytest.raises(TypeError):
        UOp(Ops.CONST)


class _Holder:
    node = None


def test_a_node_in_a_reference_cycle_through_its_caches_is_collected():
    holder = _Holder()
    n = UOp(Ops.NEG, f32, (UOp(Ops.CONST, f32, (), 9.5),), "cycle-test")
    n._bounds, holder.node = holder, n   # the node → its cache → the node: only the collector frees it
    ref = weakref.ref(n)
    del n, holder
    gc.collect()
    assert ref() is None and not node_exists(Ops.NEG, f32, (UOp(Ops.CONST, f32, (), 9.5),), "cycle-test")


@needs_native
def test_the_cycle_collector_skips_nodes_that_cannot_be_in_a_cycle():
    """A loop's graph is thousands of nodes: the collector does not follow those whose arg holds no
    node (each full collection walked them all), nor their sources' and key's tuples; it follows a
    node whose arg may hold anything, a RANGE (its cached ranges include itself), and a node once a
    cache holds something that may lead back to it."""
    a = UOp(Ops.CONST, f32, (), 2.5)
    n = UOp(Ops.ADD, f32, (a, a), ("tag", 1, (2.0, None), Ops.ADD, f32))
    assert not gc.is_tracked(a) and not gc.is_tracked(n) and not gc.is_tracked(n.src)
    assert gc.is_tracked(UOp(Ops.NEG, f32, (a,), _Holder()))
    assert gc.is_tracked(UOp(Ops.BUFFER, f32, (), Buffer(get_device("cpu"), 4, f32)))
    assert gc.is_tracked(UOp(Ops.RANGE, dtypes.int64, (UOp(Ops.CONST, dtypes.int64, (), 4),), ("cycle-range", 0)))
    n._shape, n._bounds, n._grad, n._holder = (4, UOp(Ops.CONST, dtypes.int64, (), 3)), (0.0, 1.0), 3, weakref.ref(_Holder)
    n._ranges, n._view = frozenset({a}), a
    assert not gc.is_tracked(n) and n._shape[0] == 4 and n._view is a and n._holder() is _Holder
    assert not gc.is_tracked(n._holder)   # (a weak reference without a callback holds nothing)
    n._bounds = [n]   # a list holding the node: followed from then on
    assert gc.is_tracked(n)
    n._bounds = None
    del n._holder
    assert n._holder is None


@needs_native
def test_a_loop_never_realized_leaves_no_node_to_the_cycle_collector():
    import lazyarr as xp
    gc.collect()
    before = len(gc.get_objects())
    w = xp.zeros(4)
    for i in range(300):
        w = w * 0.5 + xp.sin(w + i)
    grown = len(gc.get_objects()) - before
    assert grown < 100, grown   # (the arrays alive, a few weak references; not ~2000 nodes and tuples)
    assert abs(float(xp.sum(w)) - float(__import__("numpy").sum(_numpy_loop()))) < 1e-9


@needs_native
def test_an_array_made_in_c_is_the_python_one():
    """arrays.wrap makes its arrays in C (record_array) where gradients are on: the same slots as
    Array._from_uop's, the node held by the newest live array, and under no_grad the Python path's
    DETACH."""
    import lazyarr as xp
    from lazyarr.arrays import Array
    from lazyarr.compiler.uop import native_module
    x = xp.asarray([1.0, 2.0, 3.0])
    n = UOp(Ops.NEG, x.dtype, (x.uop,))
    a, b = wrap(n, x.device), Array._from_uop(n, x.device)
    assert type(a) is type(b) and a.uop is b.uop is n and a.device is b.device
    assert [getattr(a, k) for k in ("_leaf_grad", "grad", "_released", "_viewof", "_views")] == \
        [getattr(b, k) for k in ("_leaf_grad", "grad", "_released", "_viewof", "_views")]
    assert n._holder() is a   # (b found a live holder of its node: it left it)
    del a
    c = native_module.record_array(n, x.device)
    assert n._holder() is c and c.tolist() == [-1.0, -2.0, -3.0]
    with pytest.raises(TypeError):
        native_module.record_array("not a node", x.device)
    with xp.no_grad():
        assert wrap(n, x.device).uop.op is Ops.DETACH


@needs_native
def test_a_loop_of_reductions_leaves_no_tuple_to_the_cycle_collector():
    """A reduction's arg, (Ops.ADD, axes), holds an op, which the collector tracks, so CPython never
    untracks the tuple: each matrix product of a loop left one behind, which outlived two
    collections into the oldest generation, and their number set off full collections."""
    import numpy as np
    import lazyarr as xp
    M = np.arange(16.0).reshape(4, 4) / 40
    Ma, w, wn = xp.asarray(M), xp.ones(4), np.ones(4)
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(300):
        w = w - 0.1 * (Ma @ w) + xp.sum(w, axis=0) * 1e-3
        wn = wn - 0.1 * (M @ wn) + np.sum(wn, axis=0) * 1e-3
    grown = len(gc.get_objects()) - before
    assert grown < 100, grown
    np.testing.assert_allclose(np.asarray(w), wn, rtol=1e-12)


def _numpy_loop():
    import numpy as np
    w = np.zeros(4)
    for i in range(300):
        w = w * 0.5 + np.sin(w + i)
    return w


def test_a_weakref_callback_that_builds_the_dying_node_gets_a_new_one():
    a = UOp(Ops.CONST, f32, (), 7.25)
    built = []
    n = UOp(Ops.NEG, f32, (a,), "callback-test")
    ref = weakref.ref(n, lambda r: built.append(UOp(Ops.NEG, f32, (a,), "callback-test")))
    del n
    assert ref() is None and len(built) == 1
    assert built[0].src == (a,) and built[0].arg == "callback-test"
    assert node_exists(Ops.NEG, f32, (a,), "callback-test")


def test_a_very_deep_graph_is_freed_without_exhausting_the_stack():
    u = UOp(Ops.NOOP, f32, (), "deep-graph-test")   # a node no other test builds
    base = weakref.ref(u)
    for i in range(200_000):
        u = UOp(Ops.NEG, f32, (u,))
    top = weakref.ref(u)
    del u
    assert top() is None and base() is None


# ---- the walk ----------------------------------------------------------------------------------

def _random_graph(data, buffers):
    """A random DAG over `buffers` (some read twice), some of its nodes realized into new buffers."""
    nodes = [buffer_view(b, (4,)) for b in buffers] + [UOp(Ops.CONST, f32, (), 0.5)]
    views = []
    for _ in range(data.draw(st.integers(1, 25))):
        op = data.draw(st.sampled_from([Ops.NEG, Ops.ADD, Ops.MUL, Ops.WHERE, Ops.RESHAPE]))
        pick = lambda: nodes[data.draw(st.integers(0, len(nodes) - 1))]   # noqa: E731
        if op is Ops.NEG:
            n = UOp(op, f32, (pick(),))
        elif op is Ops.RESHAPE:
            n = UOp(op, f32, (pick(),), (2, 2))
        elif op is Ops.WHERE:
            n = UOp(op, f32, (pick(), pick(), pick()))
        else:
            n = UOp(op, f32, (pick(), pick()), data.draw(st.sampled_from([None, 1.0, -0.0, 2j])))
        if data.draw(st.integers(0, 5)) == 0:   # realized: its value is a buffer's
            view = buffer_view(Buffer(get_device("cpu"), 4, f32), (4,))
            n._view = view
            views.append(view)
            if data.draw(st.booleans()):   # and a live array holds its view (the walk marks it held)
                views.append(wrap(view, get_device("cpu")))
        if data.draw(st.integers(0, 3)) == 0:   # a live array holds it
            views.append(wrap(n, get_device("cpu")))
        nodes.append(n)
    roots = [nodes[data.draw(st.integers(0, len(nodes) - 1))] for _ in range(data.draw(st.integers(1, 3)))]
    return UOp(Ops.SINK, dtypes.void, tuple(roots)), views


@needs_native
@given(st.data())
def test_the_walk_in_c_gives_the_python_walks_results(data):
    cpu = get_device("cpu")
    buffers = [Buffer(cpu, 4, f32) for _ in range(3)]
    sink, views = _random_graph(data, buffers)
    names = data.draw(st.sampled_from([{"cpu"}, {"another device"}]))   # (the second: realized_for decides)
    want = walk._walk(sink, names)
    got = native.walk(sink, lambda n, view: realized_for(n, view, names), names)
    assert got[0] == want[0] and type(got[0]) is bytes
    for g, w in zip(got[1:3] + got[4:], want[1:3] + want[4:]):   # inputs, order, held, scalars
        assert len(g) == len(w) and all(x is y for x, y in zip(g, w))
    assert got[3].keys() == want[3].keys() and all(got[3][k] is want[3][k] for k in want[3])


@needs_native
@given(st.data())
def test_a_walk_stopped_early_has_met_a_prefix_of_the_whole_walks_nodes(data):
    """structure_key's stop_after, in C and in Python: past that many nodes the walk stops, has no
    key, and the nodes it met are the first of the whole walk's order (sources first); a graph of
    fewer nodes is walked whole, its key the same."""
    cpu = get_device("cpu")
    buffers = [Buffer(cpu, 4, f32) for _ in range(3)]
    sink, views = _random_graph(data, buffers)
    names = {"cpu"}
    whole = walk._walk(sink, names)
    stop = data.draw(st.integers(1, len(whole[2]) + 2))
    for got in (walk._walk(sink, names, stop),
                native.walk(sink, lambda n, view: realized_for(n, view, names), names, stop)):
        if got[0] is None:
            assert stop <= len(got[2]) <= len(whole[2]) and all(x is y for x, y in zip(got[2], whole[2]))
        else:
            assert stop >= len(whole[2]) and got[0] == whole[0]


@needs_native
@given(st.data())
def test_toposort_in_c_gives_the_python_order(data):
    buffers = [Buffer(get_device("cpu"), 4, f32) for _ in range(2)]
    sink, _ = _random_graph(data, buffers)
    assert all(x is y for x, y in zip(native.toposort(sink), uop._py_toposort(sink)))
    assert len(native.toposort(sink)) == len(uop._py_toposort(sink))
    stop = lambda u: u.op is Ops.MUL   # noqa: E731
    got, want = native.toposort(sink, stop), uop._py_toposort(sink, stop)
    assert len(got) == len(want) and all(x is y for x, y in zip(got, want))


# ---- the stages' anchors ----------------------------------------------------------------------

_STEPS_OF_A_PROGRAM = [   # each makes a new state from the states so far (s[-1], s[-2]) and a number c
    lambda xp, s, c: xp.sin(s[-1] * c) + 0.1 * s[-2],
    lambda xp, s, c: s[-1] - c * xp.sum(s[-2], axis=0),
    lambda xp, s, c: xp.roll(s[-1], 1, axis=1) * 0.5 + s[-2],
    lambda xp, s, c: xp.concat([(s[-1].T @ s[-2]).reshape(-1), s[-1].reshape(-1)[:8]]).reshape(6, 4) / (1 + abs(c)),
    lambda xp, s, c: xp.where(s[-1] > c, s[-2], -s[-1]),
    lambda xp, s, c: xp.astype(xp.astype(s[-1] * 8, xp.int32) % 5, xp.float64) + s[-2],
    lambda xp, s, c: xp.concat([s[-1][1:], s[-2][:1]], axis=0) * c,
    lambda xp, s, c: xp.exp(-xp.abs(s[-1])) + xp.max(s[-2], axis=1, keepdims=True),
]


def _setitem_step(xp, s, c):
    t = s[-1] + 0.0
    t[int(abs(c) * 10) % 6] = s[-2][0] * c
    return t


@needs_native
@given(st.data())
def test_the_stages_anchors_in_c_are_the_python_ones(data):
    import numpy as np
    import lazyarr as xp
    from lazyarr.compiler import stages
    steps = _STEPS_OF_A_PROGRAM + [_setitem_step]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    states = [xp.asarray(rng.standard_normal((6, 4))), xp.asarray(rng.standard_normal((6, 4))) * 1.0]
    for i in range(data.draw(st.integers(10, 80))):
        step = steps[data.draw(st.integers(0, len(steps) - 1))]
        states.append(step(xp, states, data.draw(st.sampled_from([0.5, -1.0, 2.0, 0.3 + i, 1e-3]))))
        if data.draw(st.integers(0, 12)) == 0:   # realized on the way: a leaf from then on
            states[-1].realize()
    roots = [t.uop for t in states[-data.draw(st.integers(1, 2)):]]
    device = states[-1].device
    got = native.stage_anchors(UOp(Ops.SINK, roots[0].dtype, tuple(roots)), device)
    want = stages.py_stage_anchors(roots, device)
    assert len(got) == len(want) and all(g[0] is w[0] and g[1] is w[1] and g[2] == w[2] for g, w in zip(got, want))
    assert native.toposort(UOp(Ops.SINK, roots[0].dtype, tuple(roots)), lambda u: u._view is not None)[:-1] == \
        stages.graph_nodes(roots)


# ---- the Python fallback -----------------------------------------------------------------------

_STEPS = """
import json, numpy as np, lazyarr as xp, lazyarr.nn.functional as F
from lazyarr import optim, random
from lazyarr.compiler import uop
random.seed(1)
w = random.uniform(-0.5, 0.5, (8, 4), dtype=xp.float64).realize().requires_grad_()
x = xp.asarray(np.linspace(-1, 1, 24).reshape(6, 4))
y = xp.asarray(np.array([0, 1, 2, 3, 4, 5]) % 8)
opt = optim.Adam([w], lr=0.1)
losses = []
for _ in range(4):
    opt.zero_grad()
    loss = F.cross_entropy(F.linear(x, w), y)
    loss.backward()
    opt.step()
    losses.append(float(loss))
print(json.dumps({"native": uop.native_module is not None, "losses": losses, "w": w.numpy().tolist()}))
"""


def _run(env: dict) -> dict:
    proc = subprocess.run([sys.executable, "-c", _STEPS], capture_output=True, text=True, cwd=ROOT,
                          # one compiler and one thread: which tier ran a kernel (it changes with the
                          # machine's load) must not change the float results the two runs compare
                          env=child_env(ROOT, LAZYARR_DEVICE="cpu", LAZYARR_TIERED="0", LAZYARR_THREADS="1", **env))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@needs_native
def test_the_python_fallback_trains_to_the_same_values():
    python, c = _run({"LAZYARR_NATIVE": "0"}), _run({})
    assert not python["native"] and c["native"]
    assert python["losses"] == c["losses"] and python["w"] == c["w"]


def test_without_a_compiler_lazyarr_warns_and_uses_the_python_table(tmp_path):
    code = "import lazyarr.compiler.uop as u; print(u.native_module is None)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=child_env(ROOT, LAZYARR_CC="no-such-compiler", LAZYARR_NATIVE="1",
                                        LAZYARR_CACHE_DIR=str(tmp_path)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True" and "could not be built" in proc.stderr
