"""Scalar-style arithmetic that writes StableHLO: the emitter backend of the exact FFT.

fft_complex and fft_real are written as plain arithmetic over "lanes", one value per
element of the transformed axis. Here a lane is a `Lane`: a tensor of the batch shape
(the operand's shape without that axis) whose `+ - *` and unary `-` each emit one
elementwise StableHLO op, so the program rounds exactly where the Python expression
does. Numpy scalars of the element type become splat constants; `__array_ufunc__ =
None` makes numpy hand `np.float32(c) * lane` over to the lane.

`split` cuts a tensor into lanes along an axis (moved to the front, the rest
flattened into rows of _ROW) and `join` stacks lanes back; `barrier` stacks and cuts
them again between passes, so that fusion does not repeat earlier passes' work in
every later lane.
"""

from __future__ import annotations

import numpy as np

from .text import Emitter, i64_array, tensor_type

_DTYPES = {"f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}
# Lanes are [rows, _ROW] tensors (the batch flattened, padded to whole rows): the
# vector width of the fused loop follows the innermost dim, and a transform's body
# is thousands of ops long, so wider vectors multiply the code LLVM must schedule
# (FFT [64] of 512 rows: 8.4 s to compile with 64-element vectors).
_ROW = 16


class LaneBuilder:
    """Emits lanes of one batch shape and element type ("f32" or "f64") into `e`."""

    def __init__(self, e: Emitter, batch_shape: list, elem: str):
        if elem not in _DTYPES:
            raise ValueError(f"lanes of {elem}: only f32 and f64 are supported")
        self.e, self.batch, self.elem = e, list(batch_shape), elem
        self.size = int(np.prod(self.batch, dtype=np.int64))
        rows = -(-self.size // _ROW)
        # A leading unit dim: a lane is then a slice of the stacked lanes as it is,
        # and lanes concatenate as they are, with no reshape either way.
        self.shape = [1, rows, _ROW] if self.size > _ROW else [1, self.size]
        self.padded = int(np.prod(self.shape, dtype=np.int64))
        self.dtype = _DTYPES[elem]
        self.type = tensor_type(self.shape, elem)
        self._constants: dict = {}
        self.arithmetic = 0  # ops emitted by lanes: what a transform costs to compile

    def lane(self, name: str) -> "Lane":
        return Lane(self, name)

    def constant(self, value) -> "Lane":
        """A splat of `value` (rounded to the element type), emitted once per value."""
        value = self.dtype.type(value)
        key = value.tobytes()
        if key not in self._constants:
            # 17 significant digits name a double exactly, and an f32 value is one.
            literal = f"{float(value):.17e}"
            self._constants[key] = self.e.constant(literal, self.type)
        return Lane(self, self._constants[key])


class Lane:
    __array_ufunc__ = None
    __slots__ = ("builder", "name")

    def __init__(self, builder: LaneBuilder, name: str):
        self.builder, self.name = builder, name

    def _operand(self, other) -> str:
        if isinstance(other, Lane):
            if other.builder is not self.builder:
                raise ValueError("lanes of different transforms mixed in one operation")
            return other.name
        if isinstance(other, (np.floating, float, int)):
            return self.builder.constant(other).name
        return NotImplemented

    def _binary(self, op: str, other, reflected: bool = False):
        name = self._operand(other)
        if name is NotImplemented:
            return NotImplemented
        operands = [name, self.name] if reflected else [self.name, name]
        b = self.builder
        b.arithmetic += 1
        return Lane(b, b.e.op(f"stablehlo.{op}", operands, b.type))

    def __add__(self, other):
        return self._binary("add", other)

    def __radd__(self, other):
        return self._binary("add", other, reflected=True)

    def __sub__(self, other):
        return self._binary("subtract", other)

    def __rsub__(self, other):
        return self._binary("subtract", other, reflected=True)

    def __mul__(self, other):
        return self._binary("multiply", other)

    def __rmul__(self, other):
        return self._binary("multiply", other, reflected=True)

    def __truediv__(self, other):
        return self._binary("divide", other)

    def __rtruediv__(self, other):
        return self._binary("divide", other, reflected=True)

    def __neg__(self):
        b = self.builder
        b.arithmetic += 1
        return Lane(b, b.e.op("stablehlo.negate", [self.name], b.type))


def _slices(b: LaneBuilder, x: str, shape: list, axis: int) -> list:
    """x[..., k, ...] for each k along `axis`, as lanes of `b`'s shape. The axis is
    moved to the front first, so that each lane is one contiguous block (a lane read
    across a minor axis is a strided gather per vector), and the batch is flattened
    and padded to whole rows."""
    e, elem, n = b.e, b.elem, shape[axis]
    if axis != 0:
        perm = [axis] + [d for d in range(len(shape)) if d != axis]
        x = e.op("stablehlo.transpose", [x], tensor_type([n] + b.batch, elem),
                 f"permutation = {i64_array(perm)}")
    if len(b.batch) != 1:
        x = e.op("stablehlo.reshape", [x], tensor_type([n, b.size], elem))
    if b.padded != b.size:
        zero = e.constant("0.0", tensor_type([], elem))
        x = e.op("stablehlo.pad", [x, zero], tensor_type([n, b.padded], elem),
                 f"edge_padding_low = {i64_array([0, 0])}, "
                 f"edge_padding_high = {i64_array([0, b.padded - b.size])}, "
                 f"interior_padding = {i64_array([0, 0])}")
    whole = [n] + b.shape[1:]
    if len(whole) > 2:
        x = e.op("stablehlo.reshape", [x], tensor_type(whole, elem))
    return [e.op("stablehlo.slice", [x], b.type,
                 f"start_indices = {i64_array([k] + [0] * (len(whole) - 1))}, "
                 f"limit_indices = {i64_array([k + 1] + whole[1:])}, "
                 f"strides = {i64_array([1] * len(whole))}") for k in range(n)]


def split(b: LaneBuilder, x: str, shape: list, axis: int, complex_input: bool) -> list:
    """The lanes of `x` along `axis`: (re, im) pairs of a complex tensor, or values of
    a real one. `b` must have the batch shape (shape without `axis`)."""
    if shape[:axis] + shape[axis + 1:] != b.batch:
        raise ValueError(f"lanes of batch {b.batch} split from a {shape} tensor on axis {axis}")
    if not complex_input:
        return [b.lane(name) for name in _slices(b, x, shape, axis)]
    part = tensor_type(shape, b.elem)
    re = _slices(b, b.e.op("stablehlo.real", [x], part), shape, axis)
    im = _slices(b, b.e.op("stablehlo.imag", [x], part), shape, axis)
    return [(b.lane(r), b.lane(i)) for r, i in zip(re, im)]


def _stack(b: LaneBuilder, names: list, axis: int) -> str:
    """Lanes stacked along a new leading axis (see _slices), unpadded, reshaped to the
    batch and that axis moved to `axis`."""
    e, elem, n = b.e, b.elem, len(names)
    whole = [n] + b.shape[1:]
    x = names[0] if n == 1 else e.op(
        "stablehlo.concatenate", names, tensor_type(whole, elem), "dimension = 0 : i64")
    if len(whole) > 2:
        x = e.op("stablehlo.reshape", [x], tensor_type([n, b.padded], elem))
    if b.padded != b.size:
        x = e.op("stablehlo.slice", [x], tensor_type([n, b.size], elem),
                 f"start_indices = {i64_array([0, 0])}, limit_indices = {i64_array([n, b.size])}, "
                 f"strides = {i64_array([1, 1])}")
    if len(b.batch) != 1:
        x = e.op("stablehlo.reshape", [x], tensor_type([n] + b.batch, elem))
    if axis == 0:
        return x
    perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, len(b.batch) + 1))
    out = b.batch[:axis] + [n] + b.batch[axis:]
    return e.op("stablehlo.transpose", [x], tensor_type(out, elem),
                f"permutation = {i64_array(perm)}")


def _materialize(b: LaneBuilder, value) -> str:
    # A pass can hand back an input or a constant untouched; either is a lane too.
    return value.name if isinstance(value, Lane) else b.constant(value).name


def join(b: LaneBuilder, lanes: list, axis: int) -> str:
    """Stack lanes along a new `axis`: a complex tensor from (re, im) pairs, else a
    real one. Returns the tensor's name."""
    if lanes and isinstance(lanes[0], tuple):
        re = _stack(b, [_materialize(b, r) for r, _ in lanes], axis)
        im = _stack(b, [_materialize(b, i) for _, i in lanes], axis)
        out = b.batch[:axis] + [len(lanes)] + b.batch[axis:]
        return b.e.op("stablehlo.complex", [re, im], tensor_type(out, f"complex<{b.elem}>"))
    return _stack(b, [_materialize(b, v) for v in lanes], axis)


def _restack(b: LaneBuilder, values: list) -> list:
    e, n = b.e, len(values)
    whole = [n] + b.shape[1:]
    x = e.op("stablehlo.concatenate", [_materialize(b, v) for v in values],
             tensor_type(whole, b.elem), "dimension = 0 : i64")
    return [b.lane(e.op("stablehlo.slice", [x], b.type,
                        f"start_indices = {i64_array([k] + [0] * (len(whole) - 1))}, "
                        f"limit_indices = {i64_array([k + 1] + whole[1:])}, "
                        f"strides = {i64_array([1] * len(whole))}")) for k in range(n)]


def barrier(b: LaneBuilder, lanes: list) -> list:
    """The same lanes, read back from one stacked tensor: the fusion stops there, so
    each lane of the next pass does not recompute the whole transform before it."""
    if lanes and isinstance(lanes[0], tuple):
        re = _restack(b, [r for r, _ in lanes])
        im = _restack(b, [i for _, i in lanes])
        return list(zip(re, im))
    return _restack(b, lanes)
