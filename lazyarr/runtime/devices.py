"""The device registry: the one Device object for each name, made on first use.

"cpu" is the C backend (`lazyarr.runtime.cpu`), "opencl:N" the N-th OpenCL device found
(`lazyarr.runtime.opencl`; "opencl" is "opencl:0").
"""
from __future__ import annotations

from typing import Any

from lazyarr import settings
from lazyarr.runtime.cpu import CPUDevice
from lazyarr.runtime.device import Device, canonical_name
from lazyarr.runtime.opencl import INSTALL_HINT, OpenCLDevice, opencl_devices

_devices: dict[str, Device] = {}
_named: dict[str, Device] = {}   # any name given -> its device (get_device(None) every creation call)


def get_device(name: Any = None) -> Device:
    """The Device for `name` (a Device, a string such as "cpu", or None for the default).
    Raises ValueError for an unknown device."""
    if isinstance(name, Device):
        return name
    if name is None:
        name = settings.default_device
    known = _named.get(name) if type(name) is str else None
    if known is not None:
        return known
    if not isinstance(name, str):
        raise TypeError(f"device must be a Device or a string, got {type(name).__name__}")
    key = canonical_name(name)
    if key not in _devices:
        if key == "cpu":
            _devices[key] = CPUDevice()
        elif key.startswith("opencl:") and key[7:].isdigit():
            if not opencl_devices():
                raise RuntimeError(INSTALL_HINT)
            _devices[key] = OpenCLDevice(int(key[7:]))
        else:
            raise ValueError(f"unknown device {name!r}; available devices: {', '.join(available_devices())}")
    _named[name] = _devices[key]
    return _devices[key]


def available_devices() -> list[str]:
    """The names of every usable device: "cpu", then "opencl:N" for each OpenCL device found."""
    return ["cpu", *(f"opencl:{i}" for i in range(len(opencl_devices())))]
