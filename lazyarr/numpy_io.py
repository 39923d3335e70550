"""NumPy's binary and text files for lazyarr arrays: save, load, savez, savez_compressed,
genfromtxt and fromfile (Tensor.tofile writes raw bytes too).

The files are NumPy's own formats, written and read by NumPy on the realized values: np.load
reads what lazyarr.save wrote and lazyarr.load reads what np.save wrote. load gives lazyarr
arrays, and for an .npz archive a mapping from the names to lazyarr arrays (each read when it is
first asked for, as NumPy's NpzFile does). Data lazyarr cannot hold (strings, records, objects,
masked arrays) raises TypeError.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.numpy_fallback import to_host
from lazyarr.arrays import Array
from lazyarr.creation import as_tensor, asarray


def _lazy(name: str, values: Any, device: Any) -> Array:
    if isinstance(values, np.ma.MaskedArray):
        raise TypeError(f"{name}: masked arrays are not supported (lazyarr has no mask); read without usemask")
    try:
        return asarray(np.asarray(values), device=device)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def save(file: Any, arr: Any, allow_pickle: bool = True, **kwargs: Any) -> None:
    """The array's values in NumPy's .npy format (np.save)."""
    np.save(file, np.asarray(as_tensor(arr).numpy()), allow_pickle=allow_pickle, **kwargs)


def savez(file: Any, *args: Any, **kwds: Any) -> None:
    """Several arrays in one uncompressed .npz archive (np.savez): positional ones as arr_0, ...,
    keyword ones by their names."""
    np.savez(file, *(to_host(a) for a in args), **{k: to_host(v) for k, v in kwds.items()})


def savez_compressed(file: Any, *args: Any, **kwds: Any) -> None:
    """Several arrays in one compressed .npz archive (np.savez_compressed)."""
    np.savez_compressed(file, *(to_host(a) for a in args), **{k: to_host(v) for k, v in kwds.items()})


class NpzFile(Mapping):
    """An .npz archive's arrays by name, as lazyarr arrays (NumPy's NpzFile underneath: `files`,
    `close()`, and use as a context manager)."""

    def __init__(self, archive: Any, device: Any = None) -> None:
        self._archive, self._device = archive, device

    @property
    def files(self) -> list[str]:
        return list(self._archive.files)

    def __getitem__(self, key: str) -> Array:
        return _lazy("load", self._archive[key], self._device)

    def __iter__(self) -> Iterator[str]:
        return iter(self._archive.files)

    def __len__(self) -> int:
        return len(self._archive.files)

    def __contains__(self, key: object) -> bool:
        return key in self._archive.files

    def close(self) -> None:
        self._archive.close()

    def __enter__(self) -> NpzFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<lazyarr NpzFile of {', '.join(self._archive.files)}>"


def load(file: Any, mmap_mode: Any = None, allow_pickle: bool = False, *, device: Any = None, **kwargs: Any) -> Any:
    """What np.load reads from a .npy or .npz file, as lazyarr arrays (an .npz as an NpzFile;
    with allow_pickle, a pickled object as it is)."""
    found = np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle, **kwargs)
    if isinstance(found, np.lib.npyio.NpzFile):
        return NpzFile(found, device)
    if isinstance(found, np.ndarray):
        return _lazy("load", found, device)
    return found


def genfromtxt(fname: Any, *args: Any, device: Any = None, **kwargs: Any) -> Array:
    """np.genfromtxt's array (missing values filled as NumPy fills them), as a lazyarr array."""
    return _lazy("genfromtxt", np.genfromtxt(fname, *args, **kwargs), device)


def fromfile(file: Any, dtype: Any = float, count: int = -1, sep: str = "", offset: int = 0, *,
             device: Any = None) -> Array:
    """np.fromfile's values (raw bytes of `dtype`, or text separated by `sep`) as a lazyarr array."""
    return _lazy("fromfile", np.fromfile(file, dtype=dtypes.as_dtype(dtype).np, count=count, sep=sep, offset=offset),
                 device)


def tofile(a: Any, fid: Any, sep: str = "", format: str = "%s") -> None:
    """The array's values written to a file as raw bytes (C order), or as text separated by sep
    (NumPy's ndarray.tofile)."""
    np.asarray(as_tensor(a).numpy()).tofile(fid, sep=sep, format=format)


__all__ = ["save", "load", "savez", "savez_compressed", "genfromtxt", "fromfile"]
