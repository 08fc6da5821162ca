"""A compiled program you call on numpy arrays. Part of the runtime: no compiler imports.

Calling convention of every mlxc entry point (JIT and AOT alike):

    void mlxc_entry(void **buffers);

`buffers` holds one pointer per input, then one per output, each to a dense
row-major array of the signature's shape and element type. Inputs are only read;
outputs are written in full. Nothing else is shared between calls, so one
executable may be called from several threads at once.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, Callable, Optional

import numpy as np

from . import native
from .signature import Signature, TensorSpec, describe_array

_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # ml_dtypes floats are "V"


def coerce(value: Any, spec: TensorSpec, position: int, dtype: np.dtype) -> np.ndarray:
    """`value` as a C-contiguous, aligned, native-order array matching `spec`, or raise."""
    where = f"argument {position} ('{spec.name}')"
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, (bool, int, float, complex)) or (
            isinstance(value, (list, tuple)) and not hasattr(value, "dtype")):
        # Python scalars and lists are weakly typed, as in JAX: they take the
        # argument's dtype when that loses nothing of their kind.
        raw = np.asarray(value)
        if raw.dtype == object or _KIND_ORDER.get(raw.dtype.kind, 9) > _KIND_ORDER.get(dtype.kind, -1):
            raise TypeError(f"{where}: expected {spec.type_str()}, got a Python value of type "
                            f"{raw.dtype} that does not fit {dtype}")
        arr = raw.astype(dtype)
    else:
        try:
            arr = np.asarray(value)
        except Exception as e:
            raise TypeError(f"{where}: expected an array of {spec.type_str()}, got "
                            f"{type(value).__name__} ({e})") from None
    if arr.dtype != dtype:
        raise TypeError(f"{where}: expected {spec.type_str()}, got {describe_array(arr)} "
                        f"(dtype {arr.dtype}, expected {dtype})")
    if not spec.accepts_shape(arr.shape):
        want = "(" + ", ".join("?" if d < 0 else str(d) for d in spec.shape) + \
            ("," if len(spec.shape) == 1 else "") + ")"
        raise ValueError(f"{where}: expected shape {want} ({spec.type_str()}), got "
                         f"{arr.shape} ({describe_array(arr)})")
    flags = arr.flags
    if not (flags.c_contiguous and flags.aligned) or not arr.dtype.isnative:
        arr = np.ascontiguousarray(arr, dtype=dtype.newbyteorder("="))
    return arr


def check_count(sig: Signature, args: tuple) -> None:
    if len(args) != len(sig.inputs):
        expected = ", ".join(map(str, sig.inputs)) or "no arguments"
        raise TypeError(f"{sig.entry}() takes {len(sig.inputs)} argument"
                        f"{'s' if len(sig.inputs) != 1 else ''} ({expected}), got {len(args)}")


class Executable:
    """Call with one array per input; returns an array, or a tuple for several results."""

    def __init__(self, signature: Signature, address: int, *, packed: bool,
                 keepalive: Any = None, stats: Optional[dict] = None,
                 saver: Optional[Callable[[str], None]] = None, manifest: Optional[dict] = None):
        self.signature = signature
        self._keepalive = keepalive  # the JIT engine or loaded library owning the code
        self._stats = dict(stats or {})
        self._saver = saver  # writes this program as an artifact (see runtime/artifact.py)
        self.manifest = manifest  # an artifact's manifest when loaded from one
        self._in_dtypes = [t.dtype for t in signature.inputs]
        self._out = [(t.shape, t.dtype) for t in signature.outputs]
        self._nbuf = len(signature.inputs) + len(signature.outputs)
        self._buffers_type = ctypes.c_void_p * max(self._nbuf, 1)
        self._call = self._make_call(address, packed)

    def _make_call(self, address: int, packed: bool) -> Callable[[Any], None]:
        if packed:
            lib = native.load()
            call_packed = lib.mlxc_call_packed
            return lambda buffers: call_packed(address, buffers)
        fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
        return fn

    @property
    def num_inputs(self) -> int:
        return len(self.signature.inputs)

    def __call__(self, *args: Any):
        sig = self.signature
        check_count(sig, args)
        arrays = [coerce(a, spec, i, dt)
                  for i, (a, spec, dt) in enumerate(zip(args, sig.inputs, self._in_dtypes))]
        outputs = [np.empty(shape, dtype) for shape, dtype in self._out]
        buffers = self._buffers_type(*[a.ctypes.data for a in arrays],
                                     *[o.ctypes.data for o in outputs])
        self._call(buffers)
        if len(outputs) == 1:
            return outputs[0]
        return tuple(outputs)

    def save(self, path) -> None:
        """Write this program as an artifact: one shared library that `mlxc.load(path)`
        opens, and C programs call, where the compiler is not installed."""
        if self._saver is None:
            raise TypeError("this executable cannot be saved: it was not made by mlxc.compile "
                            "or mlxc.load")
        self._saver(os.fspath(path))

    def memory_stats(self) -> dict:
        """Sizes in bytes known at compile time: arguments, results, constants, temporaries."""
        return dict(self._stats)

    def __repr__(self) -> str:
        return f"<mlxc.Executable {self.signature}>"
