"""The suite runs once per device: `LAZYARR_DEVICE` (default cpu) is the device every test's arrays
live on. Files that test the compiler's passes or the C toolchain itself, whatever the device, run
only on the CPU pass (COMPILER_ONLY; the disk cache's too); the API, autograd, fusion and training
tests run on both."""
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("lazyarr", max_examples=int(os.environ.get("LAZYARR_TEST_EXAMPLES", "25")),
                          deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
settings.load_profile("lazyarr")

DEVICE = os.environ.get("LAZYARR_DEVICE", "cpu")
COMPILER_ONLY = {"test_uop.py", "test_patterns.py", "test_symbolic.py", "test_codegen.py", "test_z3_rules.py",
                 "test_decompositions_accuracy.py", "test_runtime.py", "test_cpu_speed_tiers.py", "test_opts.py",
                 "test_array_api_suite.py", "test_native.py",
                 # the disk cache's scenarios: once, on the CPU pass (those of OpenCL's entries run their
                 # processes on OpenCL themselves; the rest do not depend on the device, and cost the
                 # OpenCL pass ~40 s of cold PoCL compiles in fresh processes)
                 "test_disk_cache.py"}


def pytest_collection_modifyitems(config, items):
    if DEVICE == "cpu":
        return
    skip = pytest.mark.skip(reason=f"compiler and C toolchain tests run on the CPU pass only (device {DEVICE})")
    for item in items:
        name = os.path.basename(str(item.fspath))
        if name in COMPILER_ONLY or name.startswith("test_stage") or item.get_closest_marker("cpu_only"):
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line("markers", "cpu_only: a test of the CPU device itself (C source, host memory)")


@pytest.fixture(autouse=True)
def no_failed_optimised_compile():
    """An optimised (background) compile that fails leaves its kernel on the first tier silently: a
    codegen bug only this shows. (A compile finishing late is charged to the test running then;
    the message names the kernel.)"""
    from lazyarr.runtime import cpu
    seen = len(cpu.optimise_failures)
    yield
    new = cpu.optimise_failures[seen:]
    del cpu.optimise_failures[seen:]
    assert not new, f"optimised compiles failed: {new}"


@pytest.fixture
def network(monkeypatch):
    """The device sorts by the bitonic network (a GPU's sort, `lazyarr.bitonic_sort`) in the test,
    whatever it is."""
    import lazyarr as xp
    monkeypatch.setattr(xp.asarray(1).device, "long_loops", False)

