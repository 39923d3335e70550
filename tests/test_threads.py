"""Threads that record, copy NumPy arrays in and realize at the same time get NumPy's answers
(`arrays.realization_lock`): a thread's copy of host data once took pool memory that another
thread's kernels, running without the GIL, still used (half the sums below came out wrong)."""
import threading

import numpy as np

import lazyarr as xp


def run_threads(work, n):
    errors = []

    def body(tid):
        try:
            work(tid, errors)
        except Exception as e:   # (a failure inside a launch is an answer too)
            errors.append(repr(e))
    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_host_copies_while_other_threads_realize():
    rng = np.random.default_rng(0)
    data = [rng.standard_normal((256, 512)).astype(np.float32) for _ in range(8)]
    wants = [(np.exp(a * 0.5) * 2 + 1).sum(axis=0) for a in data]

    def work(tid, errors):
        for it in range(25):
            k = (tid + it) % 8
            got = (xp.exp(xp.asarray(data[k]) * 0.5) * 2 + 1).sum(axis=0).numpy()
            if not np.allclose(got, wants[k], rtol=1e-4):
                errors.append((tid, it))
    assert run_threads(work, 3) == []


def test_mixed_work_in_threads():
    def work(tid, errors):
        rng = np.random.default_rng(tid)
        for it in range(30):
            a = rng.standard_normal([(64, 128), (200, 30), (1000,), (17, 33)][(tid + it) % 4]).astype(np.float32)
            x = xp.asarray(a)
            if it % 3 == 0:
                got, want = float(xp.sum(xp.sin(x) * 3)), float(np.sum(np.sin(a) * 3))
            elif it % 3 == 1:
                y, ref = x + 1, a + 1
                for _ in range(5):
                    y, ref = y * 0.5 + xp.tanh(y), ref * 0.5 + np.tanh(ref)
                got, want = y.numpy(), ref
            else:
                got, want = xp.max(x, axis=-1).numpy(), np.max(a, axis=-1)
            if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                errors.append((tid, it))
    assert run_threads(work, 4) == []
