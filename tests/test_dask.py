"""dask.array over lazyarr chunks (`lazyarr.dask_support`): the operations against NumPy's answers on
the synchronous and threaded schedulers and on a LocalCluster of two worker processes, one
realization (and the kernels of one fused expression) a task, tensors' sizes for the scheduler,
pickling across devices, and a worker killed mid-computation."""
import os
import pickle
import signal
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
from dask.sizeof import sizeof  # noqa: E402

import lazyarr as xp  # noqa: E402
import lazyarr.tensor  # noqa: E402
from lazyarr import dask_support  # noqa: E402
from tests.helpers import watch_launches  # noqa: E402

dask_support.register()   # (what dask's entry point does where lazyarr is installed)

DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64}
MAKERS = ["from_array", "map_blocks", "lazy"]


def data(shape=(12, 10), dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-20, 20, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def chunked(a, how, chunks=(4, 5)):
    """The NumPy array `a` as a dask array of lazyarr chunks: from_array of a tensor, map_blocks of
    xp.asarray over NumPy chunks, or from_array of a tensor that is not computed yet."""
    if how == "from_array":
        return da.from_array(xp.asarray(a), chunks=chunks)
    if how == "map_blocks":
        return da.from_array(a, chunks=chunks).map_blocks(xp.asarray)
    t = xp.asarray(a) * 1
    assert not t.is_realized
    return da.from_array(t, chunks=chunks)


def check(got, want, rtol=1e-5, atol=1e-5):
    """A computed result is a lazyarr tensor (or a NumPy one where dask's own code makes it) with
    NumPy's shape, dtype and values."""
    assert isinstance(got, (xp.ndarray, np.ndarray, np.generic)), type(got)
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if w.dtype.kind == "f":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(g, w)


# ---- the operations, synchronous scheduler --------------------------------------------------------

OPS = {
    "ufuncs": (lambda x: np.exp(x / 10) * 2 + abs(x), lambda a: np.exp(a / 10) * 2 + abs(a)),
    "sum": (lambda x: x.sum(axis=0, split_every=2), lambda a: a.sum(axis=0)),
    "mean": (lambda x: x.mean(axis=1), lambda a: a.mean(axis=1)),
    "std": (lambda x: x.std(axis=0), lambda a: a.std(axis=0)),
    "max": (lambda x: x.max(axis=0, split_every=2), lambda a: a.max(axis=0)),
    "argmax": (lambda x: x.argmax(axis=0, split_every=2), lambda a: a.argmax(axis=0)),
    "sum_all": (lambda x: x.sum(), lambda a: a.sum()),
    "matmul": (lambda x: x @ x.T, lambda a: a @ a.T),
    "tensordot": (lambda x: da.tensordot(x, x, axes=([0], [0])), lambda a: np.tensordot(a, a, axes=([0], [0]))),
    "transpose": (lambda x: x.T + 1, lambda a: a.T + 1),
    "reshape": (lambda x: x.reshape(3, 4, 10).sum(axis=1) * 2, lambda a: a.reshape(3, 4, 10).sum(axis=1) * 2),
    "slicing": (lambda x: x[1:11:2, ::-3], lambda a: a[1:11:2, ::-3]),
    "concatenate": (lambda x: da.concatenate([x, x[:4] * 2], axis=0), lambda a: np.concatenate([a, a[:4] * 2])),
    "where": (lambda x: da.where(x > 0, x, -x), lambda a: np.where(a > 0, a, -a)),
    "map_blocks": (lambda x: x.map_blocks(xp.negative), lambda a: -a),
    "blockwise": (lambda x: da.blockwise(xp.multiply, "ij", x, "ij", x.T.T, "ij", dtype=x.dtype),
                  lambda a: a * a),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_operations_float32(op):
    a = data()
    fn, ref = OPS[op]
    with dask.config.set(scheduler="sync"):
        check(fn(chunked(a, "from_array")).compute(), ref(a))


@pytest.mark.parametrize("how", MAKERS)
@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("op", ["ufuncs", "sum", "matmul", "concatenate"])
def test_operations_dtypes_and_inputs(op, dtype, how):
    a = data(dtype=DTYPES[dtype], seed=1)
    fn, ref = OPS[op]
    want = ref(a)
    with dask.config.set(scheduler="sync"):
        got = fn(chunked(a, how)).compute()
    check(got, want, rtol=1e-4 if dtype == "float32" else 1e-10)


def test_meta_and_blocks_are_tensors():
    a = data()
    for how in MAKERS:
        x = chunked(a, how)
        assert isinstance(x._meta, xp.ndarray), (how, type(x._meta))
        assert x.dtype == np.float32 and x.shape == a.shape and x.numblocks == (3, 2)
        y = np.exp(x) + 1
        assert isinstance(y._meta, xp.ndarray)
        block = y.blocks[1, 0].compute(scheduler="sync")
        assert isinstance(block, xp.ndarray) and block.is_realized
        check(block, np.exp(a[4:8, :5]) + 1)


def test_lazyarr_functions_in_map_blocks_and_blockwise():
    a, b = data(seed=2), data(seed=3)
    x, y = chunked(a, "from_array"), chunked(b, "map_blocks")
    got = da.map_blocks(lambda p, q: xp.where(p > q, xp.sin(p), q * 2), x, y, dtype=np.float32)
    want = np.where(a > b, np.sin(a), b * 2)
    check(got.compute(scheduler="sync"), want)
    got = da.blockwise(xp.hypot, "ij", x, "ij", y, "ij", dtype=np.float32).sum(axis=1)
    check(got.compute(scheduler="sync"), np.hypot(a, b).sum(axis=1))


def test_tsqr():
    a = data((40, 4), np.float64, seed=4)
    x = da.from_array(xp.asarray(a), chunks=(10, 4))
    q, r = da.linalg.tsqr(x)
    got = (q @ r).compute(scheduler="sync")
    check(got, a, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(q.T @ q), np.eye(4), atol=1e-10)


# ---- one realization a task ----------------------------------------------------------------------

def test_one_fused_realization_per_task(monkeypatch):
    """(exp(x) * 2 + 1).sum(axis=0) over 4 row chunks: dask fuses each chunk's elementwise work and
    its partial sum into one task, and that task realizes its tensor once: one schedule of one
    kernel a chunk, then one for the aggregate."""
    a = data((16, 8))
    x = chunked(a, "from_array", chunks=(4, 8))
    y = (np.exp(x) * 2 + 1).sum(axis=0)
    runs = []
    watch_launches(monkeypatch, lambda items: runs.append(len(items)))
    got = y.compute(scheduler="sync")
    assert runs == [1] * 5, runs
    check(got, (np.exp(a) * 2 + 1).sum(axis=0), rtol=1e-4)


def test_tasks_return_computed_tensors(monkeypatch):
    """Every task's tensors are computed before the task ends: what a task hands on (to the next
    task, another worker or the client) is a buffer, not a graph to compute there."""
    a = data()
    x = chunked(a, "map_blocks")
    seen = []

    def probe(block):
        if block.size:   # (not the empty meta dask calls it on at first)
            seen.append(block.is_realized)
        return block
    # (the probe's task reads the reduction's output: another task's, as fusion leaves reductions)
    y = (x * 3 - 1).sum(axis=1, split_every=2).map_blocks(probe, dtype=np.float32)
    with dask.config.set({"optimization.fuse.active": False}):
        check(y.compute(scheduler="sync"), (a * 3 - 1).sum(axis=1), rtol=1e-4)
    assert seen and all(seen), seen


def test_threaded_scheduler_runs_tasks_in_turn():
    """lazyarr is not safe to use from two threads at once: the threaded scheduler's lazyarr tasks
    take turns (dask_support.TASK_LOCK) and every answer is right; NumPy-only graphs are untouched."""
    a = data((64, 12), np.float64, seed=5)
    x = chunked(a, "map_blocks", chunks=(4, 12))
    y = np.exp(x / 5).sum(axis=1) + x.max(axis=1)
    with dask.config.set(scheduler="threads", num_workers=4):
        for _ in range(3):
            check(y.compute(), np.exp(a / 5).sum(axis=1) + a.max(axis=1), rtol=1e-10)
        n = da.from_array(a, chunks=(4, 12))
        got = (np.exp(n / 5).sum(axis=1)).compute()
    assert type(got) is np.ndarray
    check(got, np.exp(a / 5).sum(axis=1), rtol=1e-10)


def test_optimize_wraps_only_tasks():
    """The optimization keeps dask's graph (its keys, data and aliases) and wraps each task, marking
    those whose functions are lazyarr's (a task reading tensors is found by its inputs when it runs);
    a graph with no tensor and no function of lazyarr's in it is left as dask made it."""
    a = data()
    x = chunked(a, "map_blocks")
    y = x + 1
    n = da.from_array(a, chunks=(4, 5)) + 1
    graph = dask_support.optimize(y.__dask_graph__(), y.__dask_keys__())
    tasks = [v for v in graph.values() if getattr(v, "func", None) is dask_support.run_task]
    assert len(tasks) == 6 and all(t.args[0] for t in tasks)
    graph = dask_support.optimize(n.__dask_graph__(), n.__dask_keys__())
    assert not any(getattr(v, "func", None) is dask_support.run_task for v in graph.values())
    assert graph.keys() == dict(da.optimization.optimize(n.__dask_graph__(), n.__dask_keys__())).keys()
    tensors = da.from_array(xp.asarray(a), chunks=(4, 5)) + 1   # (NumPy's function on tensor chunks)
    graph = dask_support.optimize(tensors.__dask_graph__(), tensors.__dask_keys__())
    assert sum(getattr(v, "func", None) is dask_support.run_task for v in graph.values()) == 6
    lam = lambda b: xp.asarray(b) * 2   # noqa: E731  (a lambda calling lazyarr: found through its globals)
    assert dask_support._mentions_lazyarr(lam) and not dask_support._mentions_lazyarr(lambda b: b * 2)


# ---- sizes and pickling ---------------------------------------------------------------------------

def test_sizeof():
    t = xp.asarray(data((100, 10)))
    assert sizeof(t) == 4000 + dask_support._OBJECT_BYTES
    lazy = t.astype(np.float64) * 2
    assert sizeof(lazy) == 8000 + dask_support._OBJECT_BYTES and not lazy.is_realized
    assert sizeof([t, t[:10]]) >= 4000 + 400
    with pytest.raises(TypeError, match="lazyarr tensor"):
        dask_support.sizeof_tensor(np.zeros(3))
    with pytest.raises(TypeError, match="sizeof dispatch"):
        dask_support.register(object())


def test_entry_point_declared():
    from importlib.metadata import entry_points
    found = [e for e in entry_points(group="dask.sizeof") if e.name == "lazyarr"]
    if not found:
        pytest.skip("lazyarr is not installed with its entry points here (pip install -e .)")
    assert found[0].value == "lazyarr.dask_support:register"


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
def test_pickle_round_trip(dtype):
    a = data((3, 4), DTYPES.get(dtype, np.float32)).astype(dtype)
    t = xp.asarray(a)
    u = pickle.loads(pickle.dumps(t, protocol=5))
    assert u.device is t.device and u.dtype == t.dtype and u.shape == t.shape
    check(u, a)


def test_pickle_realizes_a_lazy_tensor():
    a = data()
    t = xp.exp(xp.asarray(a)) + 1
    assert not t.is_realized
    u = pickle.loads(pickle.dumps(t))
    assert t.is_realized and u.is_realized
    check(u, np.exp(a) + 1)


def test_pickled_device_elsewhere(monkeypatch):
    """A tensor of another device than the CPU comes back on the receiver's default device when that
    is not the CPU, else on its own device where the receiver has it, else on the CPU."""
    cpu = xp.get_device("cpu")
    state = {"data": np.arange(4.0), "device": "opencl:7"}

    def no_opencl(name=None):   # a process without OpenCL: every OpenCL device fails to open
        if (name or "opencl").startswith("opencl"):
            raise RuntimeError("no OpenCL platform")
        return cpu
    monkeypatch.setattr(lazyarr.tensor, "get_device", no_opencl)
    u = xp.ndarray.__new__(xp.ndarray)
    u.__setstate__(state)
    assert u.device is cpu
    check(u, np.arange(4.0))
    other = object.__new__(type(cpu))   # a stand-in accelerator (only its name is read)
    monkeypatch.setattr(other, "name", "opencl:0", raising=False)
    monkeypatch.setattr(lazyarr.tensor, "get_device", lambda name=None: cpu if name == "cpu" else other)
    assert lazyarr.tensor._unpickled_device("opencl:7") is other   # (the default device)
    assert lazyarr.tensor._unpickled_device("cpu") is cpu
    with pytest.raises(TypeError, match="pickled lazyarr tensor"):
        xp.ndarray.__new__(xp.ndarray).__setstate__({"device": "cpu"})


@pytest.mark.skipif(not xp.asarray(1).device.name.startswith("opencl"), reason="the OpenCL pass")
def test_pickle_opencl_tensor_without_opencl():
    """On the OpenCL pass: a real OpenCL tensor's pickle, loaded where OpenCL fails, is on the CPU."""
    t = xp.asarray(data()) * 2
    blob = pickle.dumps(t)
    assert pickle.loads(blob).device is t.device
    real = lazyarr.tensor.get_device
    try:
        lazyarr.tensor.get_device = lambda name=None: real("cpu") if name is None or name.startswith("opencl") \
            else real(name)
        u = pickle.loads(blob)
    finally:
        lazyarr.tensor.get_device = real
    assert u.device.name == "cpu"
    check(u, data() * 2)


# ---- a LocalCluster of two worker processes --------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=50, worker_dashboard_address=None)
    c = distributed.Client(cluster)
    c.run(dask_support.register)   # (the entry point does it where lazyarr is installed)
    yield c
    c.close()
    cluster.close()


def test_cluster_operations(client):
    a, b = data((32, 10), np.float64, seed=6), data((32, 10), np.float32, seed=7)
    x, y = chunked(a, "from_array", chunks=(8, 10)), chunked(b, "map_blocks", chunks=(8, 10))
    results = client.compute([(np.exp(x / 4) * 2 + 1).sum(axis=0), x.T @ x, y.std(axis=0),
                              da.concatenate([y, y * 2])[::3].max(axis=0), x.argmax(axis=0)], sync=True)
    want = [(np.exp(a / 4) * 2 + 1).sum(axis=0), a.T @ a, b.std(axis=0), np.concatenate([b, b * 2])[::3].max(axis=0),
            a.argmax(axis=0)]
    for got, w in zip(results, want):
        check(got, w, rtol=1e-5 if w.dtype == np.float32 else 1e-10)
    device = xp.asarray(1).device   # (the client's default device: the workers' too, from the environment)
    assert results[0].device is device


def test_cluster_persisted_tensors_on_workers(client):
    """Chunks persisted on the workers are computed tensors there, of the workers' default device,
    with their real sizes in the scheduler's accounting: distributed runs `dask_support.optimize`
    too (the scheduler materialises the graph with the optimizer the client's collection named),
    so each task realizes what it returns, the chunk products of a matmul included."""
    a = data((64, 256), np.float32, seed=8)
    x = da.from_array(a, chunks=(16, 256)).map_blocks(xp.asarray) * 2
    x, p = client.persist([x, x @ x.T])
    from distributed import wait
    wait([x, p])

    def computed(dask_worker):
        return [v.is_realized for k, v in dask_worker.data.items() if k[0] == p.name]
    products = [v for vs in client.run(computed).values() for v in vs]
    assert len(products) == 16 and all(products), products
    check(p.compute(), (a * 2) @ (a * 2).T, rtol=1e-4)
    del p

    keys = {k for row in x.__dask_keys__() for k in row}

    def inspect(dask_worker):
        out = []
        for key, value in dask_worker.data.items():
            if key in keys:
                out.append((value.is_realized, value.device.name, sizeof(value), dask_worker.state.tasks[key].nbytes))
        return out
    found = [v for vs in client.run(inspect).values() for v in vs]
    assert len(found) >= 4, found   # (a chunk the products read may be on both workers)
    for realized, device, size, nbytes in found:
        assert realized and device == xp.asarray(1).device.name and size == nbytes == 16 * 256 * 4 + 128
    check((np.sin(x) + x).sum(axis=1).compute(), (np.sin(a * 2) + a * 2).sum(axis=1), rtol=1e-4)
    del x


def _slow(block, seconds):
    time.sleep(seconds)
    return block * 2


def test_cluster_worker_killed_mid_computation(client):
    """One of the two worker processes dies while the tasks run: dask runs its tasks again on the
    other worker (and on the restarted one), and the answer is still NumPy's."""
    a = data((32, 8), np.float64, seed=9)
    x = chunked(a, "map_blocks", chunks=(4, 8))
    y = x.map_blocks(_slow, 0.25, dtype=np.float64).sum(axis=0)
    future = client.compute(y)
    pids = client.run(os.getpid)
    deadline = time.time() + 20
    while time.time() < deadline:   # kill a worker once it has begun (the first tasks are done)
        if any(ts.state == "memory" for ts in _tasks(client)):
            break
        time.sleep(0.05)
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    check(future.result(timeout=60), (a * 2).sum(axis=0), rtol=1e-10)
    client.wait_for_workers(2, timeout=30)


def _tasks(client):
    return list(client.cluster.scheduler.tasks.values()) if hasattr(client.cluster, "scheduler") else []
