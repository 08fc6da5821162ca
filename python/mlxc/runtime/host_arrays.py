"""Host arrays from what users pass: numpy arrays, jax.Arrays, `__dlpack__` producers
(torch tensors), scalars and lists; and `device_put`, which prepares arrays once so
that calls take them as they are. Part of the runtime: no compiler imports."""

from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np

SCALARS = (bool, int, float, complex)  # Python scalars: weakly typed, passed as they are
ALIGNMENT = 64  # a cache line, and the widest vector load the CPU code issues


def to_numpy(x) -> Any:
    """`x` as a numpy array, a view of its memory where it has one on the host: numpy
    arrays and Python scalars as they are (scalars stay weakly typed), jax.Arrays and
    other `__dlpack__` producers through DLPack or the array protocol."""
    t = type(x)
    if t is np.ndarray or t in SCALARS:
        return x
    if isinstance(x, np.generic):
        return np.asarray(x)
    if hasattr(x, "__array__") and hasattr(x, "unsafe_buffer_pointer"):
        return np.asarray(x)  # a jax.Array on the CPU: a read-only view, no copy
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError, ValueError):
            pass  # not in host memory, or of a dtype numpy lacks: convert below
    return np.asarray(x)


def aligned_copy(x, dtype: Optional[np.dtype] = None) -> np.ndarray:
    """A C-contiguous, native-order copy of `x`, its data aligned to ALIGNMENT bytes."""
    a = np.asarray(to_numpy(x))
    dtype = np.dtype(dtype or a.dtype).newbyteorder("=")
    nbytes = a.size * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    out = raw[start:start + nbytes].view(dtype).reshape(a.shape)
    np.copyto(out, a, casting="unsafe" if dtype != a.dtype else "no")
    return out


def device_put(x, dtype=None):
    """`x` (an array or a pytree of arrays) as arrays that executables take with no
    conversion or copy per call: prepared once, for a training loop's weights. On the
    CPU these are aligned numpy arrays, copies that later changes to `x` do not reach.
    Pytrees are dicts, lists and tuples, or any JAX pytree when JAX is imported."""
    if "jax" in sys.modules:
        import jax

        return jax.tree_util.tree_map(lambda v: aligned_copy(v, dtype), x)
    if isinstance(x, dict):
        return type(x)((k, device_put(v, dtype)) for k, v in x.items())
    if isinstance(x, (list, tuple)) and not hasattr(x, "dtype"):
        items = [device_put(v, dtype) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    return aligned_copy(x, dtype)
