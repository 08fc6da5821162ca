"""stablehlo.fft (FFT, IFFT, RFFT, IRFFT) as discrete Fourier transforms: one dot with
a twiddle matrix per transformed dimension, innermost first.

A DFT costs O(N^2) per dimension where an FFT costs O(N log N); in exchange it is a
plain dot that the rest of the pipeline already handles, for every length. Twiddles
are computed in f64 from the exact integer k*n mod N, and the transform runs in f64
whatever the element type, so f32 results are the exact DFT rounded once at the end:
the error does not grow with N, as it does for a naive f32 DFT.
"""

from __future__ import annotations

import math

from .._mlir import ir
from . import lowering
from .from_text import replace_with_text
from .text import Emitter, i64_array, tensor_type

_WORK = "complex<f64>"


@lowering("stablehlo.fft")
def fft(op) -> None:
    kind = str(op.attributes["fft_type"]).rstrip(">").split()[-1]  # #stablehlo<fft_type RFFT>
    lengths = list(ir.DenseI64ArrayAttr(op.attributes["fft_length"]))
    in_type = ir.RankedTensorType(op.operands[0].type)
    out_type = ir.RankedTensorType(op.results[0].type)
    in_shape, out_shape = list(in_type.shape), list(out_type.shape)
    in_elem, out_elem = str(in_type.element_type), str(out_type.element_type)
    rank = len(in_shape)
    axes = list(range(rank - len(lengths), rank))
    e = Emitter(x=tensor_type(in_shape, in_elem))
    x, shape = "%x", list(in_shape)

    if kind == "RFFT":
        # Real input: a complex transform of (x + 0i) along the last axis keeps only
        # the non-redundant half of the spectrum, N/2 + 1 entries.
        x = _to_work(e, x, shape, in_elem)
        x, shape = _dft(e, x, shape, axes[-1], lengths[-1], lengths[-1] // 2 + 1, inverse=False)
        for axis in reversed(axes[:-1]):
            x, shape = _dft(e, x, shape, axis, lengths[axis - axes[0]], None, inverse=False)
    elif kind == "IRFFT":
        x = _to_work(e, x, shape, in_elem)
        for axis in reversed(axes[:-1]):
            x, shape = _dft(e, x, shape, axis, lengths[axis - axes[0]], None, inverse=True)
        # Hermitian input: X[N-k] = conj(X[k]), so the real result is Re(sum over the
        # stored half, with every term but k = 0 and k = N/2 counted twice).
        x, shape = _dft(e, x, shape, axes[-1], lengths[-1], None, inverse=True, real_output=True)
    else:
        x = _to_work(e, x, shape, in_elem)
        for axis in reversed(axes):
            x, shape = _dft(e, x, shape, axis, lengths[axis - axes[0]], None, inverse=kind == "IFFT")

    if out_elem != ("f64" if kind == "IRFFT" else _WORK):
        x = e.op("stablehlo.convert", [x], tensor_type(out_shape, out_elem))
    e.line(f"return {x} : {tensor_type(out_shape, out_elem)}")
    replace_with_text(op, e.text(), ["x"])


def _to_work(e: Emitter, x: str, shape: list, elem: str) -> str:
    if elem == _WORK:
        return x
    if elem.startswith("complex"):
        return e.op("stablehlo.convert", [x], tensor_type(shape, _WORK))
    real = x if elem == "f64" else e.op("stablehlo.convert", [x], tensor_type(shape, "f64"))
    zero = e.constant("0.0", tensor_type(shape, "f64"))
    return e.op("stablehlo.complex", [real, zero], tensor_type(shape, _WORK))


def _dft(e: Emitter, x: str, shape: list, axis: int, n: int, keep, inverse: bool,
         real_output: bool = False):
    """Transform `x` along `axis` (length `n` of the transform). `keep` entries of the
    result are kept (RFFT); with `real_output` the input holds n/2 + 1 entries of a
    Hermitian spectrum and the result is real (IRFFT)."""
    rank = len(shape)
    size_in = shape[axis]
    size_out = keep if keep is not None else n
    w = _twiddles(e, size_in, size_out, n, inverse, real_output)
    # dot_general puts the transformed axis last; a transpose moves it back.
    free = [d for d in range(rank) if d != axis]
    dot_shape = [shape[d] for d in free] + [size_out]
    dims = ("#stablehlo.dot<lhs_contracting_dimensions = "
            f"[{axis}], rhs_contracting_dimensions = [0]>")
    y = e.op("stablehlo.dot_general", [x, w], tensor_type(dot_shape, _WORK),
             f"dot_dimension_numbers = {dims}, "
             "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]")
    out_shape = list(shape)
    out_shape[axis] = size_out
    if axis != rank - 1:
        perm = list(range(axis)) + [rank - 1] + list(range(axis, rank - 1))
        y = e.op("stablehlo.transpose", [y], tensor_type(out_shape, _WORK),
                 f"permutation = {i64_array(perm)}")
    if real_output:
        y = e.op("stablehlo.real", [y], tensor_type(out_shape, "f64"))
    return y, out_shape


def _twiddles(e: Emitter, rows: int, cols: int, n: int, inverse: bool, hermitian: bool) -> str:
    """W[k, j] = exp(-+2 pi i (k j mod n) / n), scaled by 1/n for an inverse (and by
    each row's multiplicity in a Hermitian half-spectrum)."""
    shape = [rows, cols]
    i64_t, f64_t = tensor_type(shape, "i64"), tensor_type(shape, "f64")
    k = e.op("stablehlo.iota", [], i64_t, "iota_dimension = 0 : i64")
    j = e.op("stablehlo.iota", [], i64_t, "iota_dimension = 1 : i64")
    # k * j mod n in integers, so the angle is exact whatever the length.
    turns = e.op("stablehlo.remainder", [e.op("stablehlo.multiply", [k, j], i64_t),
                                         e.constant(str(max(n, 1)), i64_t)], i64_t)
    step = (2 if inverse else -2) * math.pi / max(n, 1)
    angle = e.op("stablehlo.multiply", [e.op("stablehlo.convert", [turns], f64_t),
                                        e.constant(repr(step), f64_t)], f64_t)
    cos = e.op("stablehlo.cosine", [angle], f64_t)
    sin = e.op("stablehlo.sine", [angle], f64_t)
    if inverse:
        scale = [1.0 / max(n, 1)] * rows
        if hermitian:
            scale = [(1.0 if r == 0 or 2 * r == n else 2.0) / n for r in range(rows)]
        if len(set(scale)) == 1:
            factor = e.constant(repr(scale[0]), f64_t)
        else:
            column = e.constant("[" + ", ".join(map(repr, scale)) + "]", tensor_type([rows], "f64"))
            factor = e.op("stablehlo.broadcast_in_dim", [column], f64_t,
                          "broadcast_dimensions = array<i64: 0>")
        cos = e.op("stablehlo.multiply", [cos, factor], f64_t)
        sin = e.op("stablehlo.multiply", [sin, factor], f64_t)
    return e.op("stablehlo.complex", [cos, sin], tensor_type(shape, _WORK))
