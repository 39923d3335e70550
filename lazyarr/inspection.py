"""The inspection namespace (array API section "Inspection"): `xp.__array_namespace_info__()`.

Its answers describe what lazyarr does now, not what it declares:
- `capabilities()`: boolean-mask indexing of arrays and functions whose output shape depends on
  the data are not there yet (False); there is no limit on the number of dimensions (None).
- `devices()`: the devices lazyarr can run kernels on; `default_device()` the one arrays go to.
- `default_dtypes()`: float64, complex128, int64, and int64 for indexing.
- `dtypes()`: the dtypes a device computes with: all of them (complex64/complex128 are computed
  as pairs of float32/float64, `lazyarr.compiler.complex`), less float64 and complex128 on an
  OpenCL device without double precision.
"""
from __future__ import annotations

from typing import Any

from lazyarr import dtypes
from lazyarr.runtime.device import Device
from lazyarr.runtime.devices import available_devices, get_device

def _device(device: Any) -> Device:
    return get_device(device)


def _computes(device: Device, d: dtypes.DType) -> bool:
    """Whether kernels of `device` can compute with `d` (double precision where it is needed)."""
    return getattr(device, "fp64", True) or dtypes.component(d) is not dtypes.float64


class Info:
    """What this namespace supports; `xp.__array_namespace_info__()` returns one."""

    __module__ = "lazyarr"

    def capabilities(self) -> dict[str, Any]:
        """Optional features: boolean indexing, data-dependent shapes, the most dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> Device:
        """The device arrays are made on when no device is given."""
        return get_device(None)

    def devices(self) -> tuple[Device, ...]:
        """Every device lazyarr can run kernels on."""
        return tuple(get_device(name) for name in available_devices())

    def default_dtypes(self, *, device: Any = None) -> dict[str, dtypes.DType]:
        """The default dtypes of each kind (the same on every device)."""
        _device(device)
        return {"real floating": dtypes.default_float, "complex floating": dtypes.default_complex,
                "integral": dtypes.default_int, "indexing": dtypes.default_int}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, dtypes.DType]:
        """The dtypes `device` computes with, by name, of `kind` (a kind name, a tuple of them, or
        None for all). Raises ValueError for an unknown kind."""
        dev = _device(device)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if kind is not None and not (isinstance(k, str) and k in dtypes.KINDS):
                raise ValueError(f"unknown dtype kind {k!r}; expected one of {', '.join(dtypes.KINDS)}")
        return {d.name: d for d in dtypes.ALL
                if d is not dtypes.float16 and _computes(dev, d) and (kind is None or any(dtypes.KINDS[k](d) for k in kinds))}

    def __repr__(self) -> str:
        return "lazyarr.__array_namespace_info__()"


def __array_namespace_info__() -> Info:
    """The inspection namespace: capabilities, devices and dtypes of lazyarr."""
    return Info()
