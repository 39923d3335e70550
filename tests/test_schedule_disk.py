"""The schedule cache on disk (lazyarr.compiler.schedule_disk): a structure scheduled by one process is
not scheduled by the next, which computes the same values; structure keys are the same in every
process; what cannot be kept (a library routine's schedule) is not kept."""
import hashlib
import json
import os

import numpy as np
import pytest

import lazyarr as xp
from lazyarr.compiler import schedule, schedule_disk, walk
from lazyarr.compiler.uop import ATOMS, atom_number, stable_text
from tests.test_disk_cache import run

# a never-realized loop (realized in stages, segment by segment), a value read every iteration, and
# a reduction; counts the schedules built from scratch
SCRIPT = r"""
import json, numpy as np, lazyarr as xp
from lazyarr.compiler import schedule, walk
built = []
original = schedule._build_schedule
schedule._build_schedule = lambda *a: built.append(1) or original(*a)
from lazyarr.runtime import cpu, cpu_compiler   # kernel graphs hashed, but for code made for sizes now
hashed, specialising, plain_hash, plain_later = [], [], cpu_compiler.graph_hash, cpu.CPUDevice.optimise_later
cpu_compiler.graph_hash = lambda ast: hashed.append(not specialising and ast not in cpu_compiler._graph_hashes) \
    or plain_hash(ast)
def optimise_later(*args):
    specialising.append(1)
    try:
        return plain_later(*args)
    finally:
        specialising.pop()
cpu.CPUDevice.optimise_later = optimise_later
rng = np.random.default_rng(0)
A, b = xp.asarray(rng.standard_normal((20, 5))), xp.asarray(rng.standard_normal(20))
w = xp.zeros(5)
for _ in range(150):
    w = w - 0.01 * (A.T @ (A @ w - b))
u, losses = xp.asarray(np.linspace(0.0, 1.0, 64)), []
for i in range(20):
    u = u * 0.9 + 0.05 * xp.sin(u * (i + 1))
    losses.append(float(xp.sum(u * u)))
key = walk.structure_key([(xp.exp(A) * 2.5 + b[:, None]).uop], [A.device]).key[0]
print("RESULT " + json.dumps([np.asarray(w).tolist(), losses]))
print("BUILT", len(built))
print("HASHED", sum(hashed))
print("KEY", __import__("hashlib").sha256(key).hexdigest())
"""


def numpy_values():
    rng = np.random.default_rng(0)
    A, b = rng.standard_normal((20, 5)), rng.standard_normal(20)
    w = np.zeros(5)
    for _ in range(150):
        w = w - 0.01 * (A.T @ (A @ w - b))
    u, losses = np.linspace(0.0, 1.0, 64), []
    for i in range(20):
        u = u * 0.9 + 0.05 * np.sin(u * (i + 1))
        losses.append(float(np.sum(u * u)))
    return w, losses


def field(proc, name):
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith(name + " ")]
    return line[len(name) + 1:]


@pytest.mark.cpu_only
def test_a_second_process_schedules_nothing_and_computes_the_same(tmp_path):
    root = tmp_path / "cache"
    first = run(root, SCRIPT)
    second = run(root, SCRIPT)
    assert int(field(first, "BUILT")) > 0
    assert int(field(second, "BUILT")) == 0, second.stdout
    assert int(field(first, "HASHED")) > 0 and int(field(second, "HASHED")) == 0, second.stdout
    assert field(first, "KEY") == field(second, "KEY")   # keys are the same in every process
    want_w, want_losses = numpy_values()
    for proc in (first, second):
        got_w, got_losses = json.loads(field(proc, "RESULT"))
        np.testing.assert_allclose(got_w, want_w, rtol=1e-10)
        np.testing.assert_allclose(got_losses, want_losses, rtol=1e-10)
    assert any(f.endswith(".schedule") for f in os.listdir(root / "schedules"))


@pytest.mark.cpu_only
@pytest.mark.parametrize("switch", ["LAZYARR_CACHE", "LAZYARR_SCHEDULE_DISK"])
def test_without_the_schedule_disk_cache_every_process_schedules(tmp_path, switch):
    """LAZYARR_CACHE=0 keeps nothing on disk; LAZYARR_SCHEDULE_DISK=0 keeps the kernels, not the schedules."""
    root = tmp_path / "cache"
    run(root, SCRIPT, **{switch: "0"})
    second = run(root, SCRIPT, **{switch: "0"})
    assert int(field(second, "BUILT")) > 0
    assert not (root / "schedules").exists()
    assert (root / "kernels").exists() == (switch == "LAZYARR_SCHEDULE_DISK")


def test_atoms_equal_as_keys_have_one_number():
    """A dict takes 1, 1.0 and True as one key, and a dtype and its name: whichever a process met
    first, the number is the same."""
    assert len({atom_number(v) for v in (1, 1.0, True, np.int64(1), np.float32(1.0))}) == 1
    assert atom_number(xp.float32) == atom_number("float32")
    assert atom_number(0.5) != atom_number(1) and atom_number((1, 2)) != atom_number("(1,2)")
    assert atom_number(("f", b"\x00" * 8)) == int.from_bytes(
        hashlib.blake2b(b"(S'f',B0000000000000000)", digest_size=8).digest(), "little") >> 2
    assert atom_number(("a,Sb",)) != atom_number(("a", "b"))   # (no two tuples of one text)
    # an object of no stable text: a number of this process alone, above every hash
    assert stable_text(object()) is None and atom_number(object()) >= 1 << 62
    assert all(v >= 0 for v in ATOMS.values())


def test_a_routines_schedule_is_not_kept():
    a = xp.asarray(np.array([[4.0, 1.0], [2.0, 3.0]]))
    x = xp.linalg.solve(a, xp.asarray(np.array([1.0, 2.0])))
    walked = walk.structure_key([x.uop], [x.device])
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve([[4.0, 1.0], [2.0, 3.0]], [1.0, 2.0]))
    entry = schedule._schedule_cache.get(walked.key)
    if entry is None or not any(type(t).__name__ == "CallItem" for t, _ in entry.kernels):
        pytest.skip("solve runs no library routine on this device")
    assert schedule_disk.encode(entry) is None


def test_an_entry_round_trips():
    x = xp.asarray(np.linspace(0.0, 1.0, 33, dtype=np.float32))
    y = xp.sum(xp.exp(x * 1.5) - x[::-1], axis=0) + xp.max(x)
    walked = walk.structure_key([y.uop], [y.device])
    np.asarray(y)
    entry = schedule._schedule_cache[walked.key]
    fields = schedule_disk.decode(schedule_disk.encode(entry))
    new, kernels, outputs, points, kept = fields
    assert (new, outputs, points, kept) == (entry.new, entry.outputs, entry.points, entry.kept)
    assert [(t.ast, t.device, t.sizes, t.outputs, t.slots, t.inplace, refs) for t, refs in kernels] == \
        [(t.ast, t.device, t.sizes, t.outputs, t.slots, t.inplace, refs) for t, refs in entry.kernels]

