"""A compiled program you call on numpy arrays. Part of the runtime: no compiler imports.

Calling convention of every mlxc entry point (JIT and AOT alike):

    void mlxc_entry(void **buffers);

`buffers` holds one pointer per input, then one per output, each to a dense
row-major array of the signature's shape and element type. Inputs are only read;
outputs are written in full. Nothing else is shared between calls, so one
executable may be called from several threads at once.
"""

from __future__ import annotations

import copy
import ctypes
import functools
import math
import os
import sys
import threading
from typing import Any, Callable, Optional

import numpy as np

from . import host_arrays, native
from .signature import LONG, Signature, TensorSpec, describe_array

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
            # jax.Arrays and __dlpack__ producers (torch tensors) as views, not copies
            arr = np.asarray(host_arrays.to_numpy(value))
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


def _exports_buffer(dtype: np.dtype) -> bool:
    """Whether arrays of `dtype` export the buffer protocol (ml_dtypes' types do not)."""
    try:
        ctypes.c_char.from_buffer(np.zeros(1, dtype))
        return True
    except (TypeError, ValueError, BufferError):
        return False


def _dense(flags) -> bool:
    return flags.c_contiguous and flags.aligned


def _c_char_at(arr: np.ndarray) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(arr))


def _address(arr: np.ndarray) -> int:
    """The address of a C-contiguous array's data. `arr.ctypes.data` costs a microsecond
    or more (it builds a helper object); a ctypes view of the buffer costs a fraction of
    that but needs a writable, non-empty array."""
    if arr.flags.writeable and arr.size:
        return _c_char_at(arr)
    return arr.ctypes.data


def check_count(sig: Signature, args: tuple) -> None:
    if len(args) != len(sig.inputs):
        expected = ", ".join(map(str, sig.inputs[:LONG])) or "no arguments"
        if len(sig.inputs) > LONG:
            expected += f", ... {len(sig.inputs) - LONG} more"
        hint = ""
        if any(isinstance(a, (dict, list, tuple)) for a in args):
            # JAX exports a pytree argument as its leaves, one input each
            hint = ("; an executable takes arrays, one per leaf of a pytree "
                    "(jax.tree_util.tree_leaves), or use mlxc.jit, which takes pytrees")
        raise TypeError(f"{sig.entry}() takes {len(sig.inputs)} argument"
                        f"{'s' if len(sig.inputs) != 1 else ''} ({expected}), got {len(args)}"
                        + hint)


# Results at least this large are made in memory the executable keeps (see Executable):
# glibc's default mmap threshold, below which numpy's memory comes from a heap glibc
# keeps, and a kept buffer's bookkeeping (2 us a call) would cost more than it saves.
POOLED_RESULT_BYTES = 128 << 10


class Executable:
    """Call with one array per input; returns an array, or a tuple for several results.

    A result of POOLED_RESULT_BYTES or more is a view of a buffer the executable keeps:
    once the caller has dropped every array that holds it (each holds its base), the
    next call writes its result there, as XLA's allocator hands a freed buffer to the
    next computation. Memory that numpy had to fault in afresh on every call cost an
    optimizer step over 6 MB of parameters 750 page faults, 1.5 ms of its 2.3.
    """

    def __init__(self, signature: Signature, address: int, *, packed: bool,
                 keepalive: Any = None, stats: Optional[dict] = None,
                 saver: Optional[Callable[[str], None]] = None, manifest: Optional[dict] = None):
        self.signature = signature
        self._keepalive = keepalive  # the JIT engine or loaded library owning the code
        self._stats = dict(stats or {})
        self._saver = saver  # writes this program as an artifact (see runtime/artifact.py)
        self.manifest = manifest  # an artifact's manifest when loaded from one
        self._compile_stats: dict = {}  # set by mlxc.compile (compile_timing)
        self.from_cache: Optional[str] = None  # the compile cache's entry this came from
        self._in_dtypes = [t.dtype for t in signature.inputs]
        self._out = [(t.shape, t.dtype) for t in signature.outputs]
        self._nbuf = len(signature.inputs) + len(signature.outputs)
        self._buffers_type = ctypes.c_void_p * max(self._nbuf, 1)
        # What each call checks, worked out once: (position, spec, dtype, shape, whether
        # the dtype's address can be taken through the buffer protocol).
        self._plan = [(i, t, dt, t.shape, _exports_buffer(dt))
                      for i, (t, dt) in enumerate(zip(signature.inputs, self._in_dtypes))]
        self._out_plan = [(shape, dt, _exports_buffer(dt) and math.prod(shape) > 0,
                           math.prod(shape) * dt.itemsize)
                          for shape, dt in self._out]
        self._pooled = any(n >= POOLED_RESULT_BYTES for *_, n in self._out_plan)
        self._pool: list = [None] * len(self._out_plan)
        self._pool_lock = threading.Lock()
        self._call = self._make_call(address, packed)

    def _make_call(self, address: int, packed: bool) -> Callable[[Any], None]:
        # Through the runtime's checked call: a temporary that cannot be allocated ends
        # the call with its size, not the process (runtime/mlxc_runtime.c).
        checked = functools.partial(native.load().mlxc_call_checked, address)
        packed = int(packed)
        entry = self.signature.entry

        def call(buffers):
            failed = checked(buffers, packed)
            if failed:
                raise MemoryError(f"{entry}(): a temporary of {failed:,} bytes "
                                  f"({failed / 2**30:.1f} GiB) could not be allocated")
        return call

    @property
    def num_inputs(self) -> int:
        return len(self.signature.inputs)

    def __call__(self, *args: Any):
        if len(args) != len(self._plan):
            check_count(self.signature, args)
        # A call on small arrays costs what Python does here, so the common case (an
        # ndarray already of the right dtype, shape and layout) takes the shortest path;
        # anything else goes through `coerce`, which converts or raises.
        arrays = []
        addresses = []
        for a, (i, spec, dt, shape, exports) in zip(args, self._plan):
            if not (type(a) is np.ndarray and a.dtype is dt and a.shape == shape
                    and _dense(a.flags)):
                a = coerce(a, spec, i, dt)
            arrays.append(a)
            addresses.append(_address(a) if exports else a.ctypes.data)
        outputs = self._results() if self._pooled else [
            np.empty(shape, dt) for shape, dt, _, _ in self._out_plan]
        for o, (_, _, exports, _) in zip(outputs, self._out_plan):
            addresses.append(_c_char_at(o) if exports else o.ctypes.data)
        buffers = self._buffers_type(*addresses)
        self._call(buffers)
        if len(outputs) == 1:
            return outputs[0]
        return tuple(outputs)

    def _results(self) -> list:
        """This call's result arrays, the large ones in kept buffers nothing else holds
        (see the class): a kept buffer referred to only by the pool (and by getrefcount's
        argument) is free. The lock keeps two threads' calls from taking the same one."""
        pool, out = self._pool, []
        with self._pool_lock:
            for k, (shape, dt, _, nbytes) in enumerate(self._out_plan):
                if nbytes < POOLED_RESULT_BYTES:
                    out.append(np.empty(shape, dt))
                    continue
                if pool[k] is None or sys.getrefcount(pool[k]) > 2:
                    pool[k] = np.empty(nbytes, np.uint8)
                out.append(pool[k].view(dt).reshape(shape))
        return out

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

    def compile_stats(self) -> dict:
        """Where the compile's time went: total_s, seconds per group (the frontend, each
        stage, codegen) and the rows under them (per pass with MLXC_TIMING=1); empty for a
        program loaded from an artifact or the compile cache."""
        return copy.deepcopy(self._compile_stats)

    def __repr__(self) -> str:
        return f"<mlxc.Executable {self.signature}>"
