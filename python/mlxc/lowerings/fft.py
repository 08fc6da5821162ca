"""stablehlo.fft (FFT, IFFT, RFFT, IRFFT), one transformed dimension at a time.

Transforms of f32/f64 (complex64/complex128) whose lengths are at most _EXACT_MAX
and run ducc0's radix passes (no prime factor of 110 or more), and whose unrolled
program stays within _EXACT_OPS arithmetic ops, run XLA's CPU FFT library (ducc0)
operation for operation: fft_complex and fft_real written over lanes, emitted
through fft_scalar as elementwise StableHLO. Their results are bit-identical to XLA's: checked against
jax 0.10.2 for every such length up to 129 (complex) and 134 (real), and over two
and three axes. On one axis that is every FFT/IFFT up to length 28 and the composite
ones up to 48 (not 64: 1254 ops), and every RFFT/IRFFT up to 36 and most composite
ones up to 80 (RFFT 96); prime lengths cost O(n^2) ops.

XLA's multi-dimensional order is kept, and it differs by kind: FFT/IFFT swap the
first axis with the first later one of unit stride (the innermost, unless trailing
dims are 1: [a, b, c] runs c, b, a) and an inverse applies its 1/N (formed in double,
rounded to the element type) on the first axis run; RFFT transforms the real (last)
axis, then the others outermost first; IRFFT transforms the leading axes (in FFT's
order, usually outermost first), then the real axis, which takes the 1/N.

Everything else takes the f64 path: a dimension of length up to 64, or of prime
length up to 512, is one dot with a twiddle matrix (a DFT, O(N^2)); a longer composite
one splits Cooley-Tukey style into two shorter transforms and a twiddle product,
recursively (O(N sqrt N) or better), and a longer prime one becomes a power-of-two
convolution (Bluestein), so long lengths stay cheap in time and memory. Twiddles are
computed in f64 from the exact integer k*n mod N, and the transform runs in f64
whatever the element type, so f32 results are the transform rounded once at the end.
"""

from __future__ import annotations

import math

import numpy as np

from .._mlir import ir
from . import fft_complex, fft_real, fft_scalar, lowering
from .from_text import replace_with_text
from .text import Emitter, i64_array, tensor_type

_WORK = "complex<f64>"
# Longer transforms of composite length split into two shorter ones (Cooley-Tukey).
_DIRECT_MAX = 64
# Longer prime lengths become a power-of-two convolution (Bluestein): their DFT matrix
# would take n^2 * 16 bytes.
_PRIME_DIRECT_MAX = 512
# The exact (XLA-identical) path unrolls the transform into scalar-style arithmetic
# on the batch: O(n log n) ops per axis, O(n^2) for a large prime factor. It is taken
# when every length is at most _EXACT_MAX (the lengths checked bit for bit) and the
# whole transform is at most _EXACT_OPS arithmetic ops, about 3 s of compile time at
# most (FFT [32]: 502 ops, 1.2 s; IRFFT [15, 16, 32]: 751 ops, 2.3 s; FFT [40]: 1034
# ops, 2.4 s; FFT [64]: 1254 ops, 4.5 s; FFT [61]: 7440 ops; on a shared 2-core
# machine); anything longer keeps the f64 path (0.1 s).
_EXACT_MAX = 128
_EXACT_OPS = 1200
_EXACT_ELEM = {"f32": "f32", "f64": "f64", "complex<f32>": "f32", "complex<f64>": "f64"}


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

    if _exact_supported(kind, lengths, in_elem):
        y, cost = _exact(e, kind, lengths, axes, in_shape, _EXACT_ELEM[in_elem])
        if cost <= _EXACT_OPS:
            e.line(f"return {y} : {tensor_type(out_shape, out_elem)}")
            replace_with_text(op, e.text(), ["x"])
            return
        e = Emitter(x=tensor_type(in_shape, in_elem))

    if kind == "RFFT":
        # Real input: a complex transform of (x + 0i) along the last axis keeps only
        # the non-redundant half of the spectrum, N/2 + 1 entries.
        x = _to_work(e, x, shape, in_elem)
        if lengths[-1] <= _DIRECT_MAX:
            x, shape = _dft(e, x, shape, axes[-1], lengths[-1], lengths[-1] // 2 + 1,
                            inverse=False)
        else:
            x, shape = _transform(e, x, shape, axes[-1], lengths[-1], inverse=False)
            x, shape = _slice_axis(e, x, shape, axes[-1], 0, lengths[-1] // 2 + 1)
        for axis in reversed(axes[:-1]):
            x, shape = _transform(e, x, shape, axis, lengths[axis - axes[0]], inverse=False)
    elif kind == "IRFFT":
        x = _to_work(e, x, shape, in_elem)
        for axis in reversed(axes[:-1]):
            x, shape = _transform(e, x, shape, axis, lengths[axis - axes[0]], inverse=True)
        n = lengths[-1]
        if n <= _DIRECT_MAX:
            # Hermitian input: X[N-k] = conj(X[k]), so the real result is Re(sum over
            # the stored half, every term but k = 0 and k = N/2 counted twice).
            x, shape = _dft(e, x, shape, axes[-1], n, None, inverse=True, real_output=True)
        else:
            # The whole spectrum from its stored half, then Re(IFFT): the imaginary
            # parts of X[0] and X[N/2] drop out there, as in numpy and XLA.
            x, shape = _slice_axis(e, x, shape, axes[-1], 0, n // 2 + 1)
            mirror, mirror_shape = _slice_axis(e, x, shape, axes[-1], 1, n - n // 2)
            mirror = e.op("stablehlo.reverse", [_conj(e, mirror, mirror_shape)],
                          tensor_type(mirror_shape, _WORK),
                          f"dimensions = {i64_array([axes[-1]])}")
            shape = shape[:axes[-1]] + [n] + shape[axes[-1] + 1:]
            x = e.op("stablehlo.concatenate", [x, mirror], tensor_type(shape, _WORK),
                     f"dimension = {axes[-1]} : i64")
            x, shape = _transform(e, x, shape, axes[-1], n, inverse=True)
            x = e.op("stablehlo.real", [x], tensor_type(shape, "f64"))
    else:
        x = _to_work(e, x, shape, in_elem)
        for axis in reversed(axes):
            x, shape = _transform(e, x, shape, axis, lengths[axis - axes[0]],
                                  inverse=kind == "IFFT")

    if out_elem != ("f64" if kind == "IRFFT" else _WORK):
        x = e.op("stablehlo.convert", [x], tensor_type(out_shape, out_elem))
    e.line(f"return {x} : {tensor_type(out_shape, out_elem)}")
    replace_with_text(op, e.text(), ["x"])


def _exact_supported(kind: str, lengths: list, in_elem: str) -> bool:
    if in_elem not in _EXACT_ELEM or not all(0 < n <= _EXACT_MAX for n in lengths):
        return False
    if kind in ("FFT", "IFFT"):
        return all(fft_complex.supported(n) for n in lengths)
    return (all(fft_complex.supported(n) for n in lengths[:-1])
            and fft_real.uses_radix_passes(lengths[-1]))


def _exact(e: Emitter, kind: str, lengths: list, axes: list, shape: list, elem: str):
    """The transform as XLA's FFT library computes it (see the module docstring): its
    result's name and the number of arithmetic ops it took."""
    dtype = np.dtype(np.float32 if elem == "f32" else np.float64)
    scale = 1.0
    for n in lengths:  # XLA forms 1/N in double and rounds it once
        scale *= n
    fct = dtype.type(1.0 / scale) if kind in ("IFFT", "IRFFT") else dtype.type(1)
    x, shape = "%x", list(shape)

    builders = []

    def builder(shape, axis):
        builders.append(fft_scalar.LaneBuilder(e, shape[:axis] + shape[axis + 1:], elem))
        return builders[-1]

    def cost():
        return sum(b.arithmetic for b in builders)

    def c2c(x, axes, forward, fct):
        for axis in axes:
            b = builder(shape, axis)
            lanes = fft_scalar.split(b, x, shape, axis, complex_input=True)
            lanes = fft_complex.c2c(lanes, shape[axis], dtype, forward, fct,
                                    between=lambda lanes: fft_scalar.barrier(b, lanes))
            x, fct = fft_scalar.join(b, lanes, axis), None
        return x

    last, n = axes[-1], lengths[-1]
    if kind in ("FFT", "IFFT"):
        x = c2c(x, _ducc_c2c_order(axes, shape), kind == "FFT", fct)
        return x, cost()
    if kind == "RFFT":
        # The real axis first, then the others in place, so in their own order.
        b = builder(shape, last)
        pairs = fft_real.r2c(fft_scalar.split(b, x, shape, last, complex_input=False),
                             n, dtype, fct)
        x = fft_scalar.join(b, pairs, last)
        shape[last] = n // 2 + 1
        x = c2c(x, axes[:-1], True, None)
        return x, cost()
    # IRFFT: the leading axes into a new buffer, then the real axis with the scale.
    x = c2c(x, _ducc_c2c_order(axes[:-1], shape), False, None)
    b = builder(shape, last)
    pairs = fft_scalar.split(b, x, shape, last, complex_input=True)
    x = fft_scalar.join(b, fft_real.c2r(pairs, n, dtype, fct), last)
    return x, cost()


def _ducc_c2c_order(axes: list, shape: list) -> list:
    """The order in which ducc0's c2c, from one buffer into another, transforms `axes`
    of a dense row-major `shape`: it swaps the first axis with the first later one of
    unit stride (all later dims of size 1), which is the last axis unless trailing
    dims are 1. The first axis in that order takes the scale."""
    order = list(axes)
    for i in range(1, len(order)):
        if math.prod(shape[order[i] + 1:]) == 1:
            order[0], order[i] = order[i], order[0]
            break
    return order


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


def _transform(e: Emitter, x: str, shape: list, axis: int, n: int, inverse: bool):
    """The complex DFT of `x` along `axis`: one dot when `n` is short or prime, else
    the four-step split n = n1 * n2 (n1 the largest factor up to sqrt(n)):
    X[k1 + n1 k2] = sum_n2 w_n2^(n2 k2) w_n^(n2 k1) sum_n1 w_n1^(n1 k1) x[n2 + n2_len n1],
    which costs O(n (n1 + n2)) instead of O(n^2)."""
    n1 = max((f for f in range(1, math.isqrt(n) + 1) if n % f == 0), default=1)
    if n1 == 1 and n > _PRIME_DIRECT_MAX:
        return _bluestein(e, x, shape, axis, n, inverse)
    if n <= _DIRECT_MAX or n1 == 1:
        return _dft(e, x, shape, axis, n, None, inverse)
    n2 = n // n1
    rank = len(shape)
    # Work on the last axis, split into [n1, n2]: element [a, b] is x[n2 * a + b].
    last = list(range(axis)) + list(range(axis + 1, rank)) + [axis]
    moved = [shape[d] for d in last]
    y = x if axis == rank - 1 else e.op("stablehlo.transpose", [x], tensor_type(moved, _WORK),
                                        f"permutation = {i64_array(last)}")
    split = moved[:-1] + [n1, n2]
    y = e.op("stablehlo.reshape", [y], tensor_type(split, _WORK))
    y, _ = _transform(e, y, split, rank - 1, n1, inverse)  # over a: [k1, b]
    # Twiddles w_n^(b k1), from the exact b * k1 mod n.
    i64_t, f64_t = tensor_type([n1, n2], "i64"), tensor_type([n1, n2], "f64")
    k1 = e.op("stablehlo.iota", [], i64_t, "iota_dimension = 0 : i64")
    b = e.op("stablehlo.iota", [], i64_t, "iota_dimension = 1 : i64")
    turns = e.op("stablehlo.remainder", [e.op("stablehlo.multiply", [k1, b], i64_t),
                                         e.constant(str(n), i64_t)], i64_t)
    angle = e.op("stablehlo.multiply", [e.op("stablehlo.convert", [turns], f64_t),
                                        e.constant(repr((2 if inverse else -2) * math.pi / n), f64_t)],
                 f64_t)
    w = e.op("stablehlo.complex", [e.op("stablehlo.cosine", [angle], f64_t),
                                   e.op("stablehlo.sine", [angle], f64_t)],
             tensor_type([n1, n2], _WORK))
    w = e.op("stablehlo.broadcast_in_dim", [w], tensor_type(split, _WORK),
             f"broadcast_dimensions = {i64_array([rank - 1, rank])}")
    y = e.op("stablehlo.multiply", [y, w], tensor_type(split, _WORK))
    y, _ = _transform(e, y, split, rank, n2, inverse)  # over b: [k1, k2]
    # Output index k1 + n1 * k2: k2 major.
    swapped = moved[:-1] + [n2, n1]
    y = e.op("stablehlo.transpose", [y], tensor_type(swapped, _WORK),
             f"permutation = {i64_array(list(range(rank - 1)) + [rank, rank - 1])}")
    y = e.op("stablehlo.reshape", [y], tensor_type(moved, _WORK))
    if axis != rank - 1:
        back = [last.index(d) for d in range(rank)]
        y = e.op("stablehlo.transpose", [y], tensor_type(shape, _WORK),
                 f"permutation = {i64_array(back)}")
    return y, list(shape)


def _slice_axis(e: Emitter, x: str, shape: list, axis: int, start: int, stop: int):
    out = list(shape)
    out[axis] = stop - start
    starts = [0] * len(shape)
    starts[axis] = start
    return e.op("stablehlo.slice", [x], tensor_type(out, _WORK),
                f"start_indices = {i64_array(starts)}, "
                f"limit_indices = {i64_array([*shape[:axis], stop, *shape[axis + 1:]])}, "
                f"strides = {i64_array([1] * len(shape))}"), out


def _conj(e: Emitter, x: str, shape: list) -> str:
    part = tensor_type(shape, "f64")
    return e.op("stablehlo.complex", [e.op("stablehlo.real", [x], part), e.op(
        "stablehlo.negate", [e.op("stablehlo.imag", [x], part)], part)], tensor_type(shape, _WORK))


def _bluestein(e: Emitter, x: str, shape: list, axis: int, n: int, inverse: bool):
    """A DFT of any length as a circular convolution of length m >= 2n - 1, a power of
    two: X[k] = w[k] sum_j (x[j] w[j]) v[k - j], with the chirps w[j] = exp(-+i pi j^2 / n)
    and v = conj(w) (angles from the exact j^2 mod 2n)."""
    rank = len(shape)
    m = 1 << (2 * n - 2).bit_length()
    last = list(range(axis)) + list(range(axis + 1, rank)) + [axis]
    moved = [shape[d] for d in last]
    y = x if axis == rank - 1 else e.op("stablehlo.transpose", [x], tensor_type(moved, _WORK),
                                        f"permutation = {i64_array(last)}")
    step = (1 if inverse else -1) * math.pi / n

    def chirp(size: int, sign: float, wrap: bool) -> str:
        i64_t, f64_t = tensor_type([size], "i64"), tensor_type([size], "f64")
        j = e.op("stablehlo.iota", [], i64_t, "iota_dimension = 0 : i64")
        if wrap:  # v[j] for j in [0, m): distance min(j, m - j) back to 0
            j = e.op("stablehlo.minimum", [j, e.op("stablehlo.subtract", [
                e.constant(str(m), i64_t), j], i64_t)], i64_t)
        turns = e.op("stablehlo.remainder", [e.op("stablehlo.multiply", [j, j], i64_t),
                                             e.constant(str(2 * n), i64_t)], i64_t)
        angle = e.op("stablehlo.multiply", [e.op("stablehlo.convert", [turns], f64_t),
                                            e.constant(repr(sign * step), f64_t)], f64_t)
        value = e.op("stablehlo.complex", [e.op("stablehlo.cosine", [angle], f64_t),
                                           e.op("stablehlo.sine", [angle], f64_t)],
                     tensor_type([size], _WORK))
        if not wrap:
            return value
        # Only distances below n take part; the middle of v is zero padding.
        near = e.op("stablehlo.compare", [j, e.constant(str(n), i64_t)],
                    tensor_type([size], "i1"),
                    "comparison_direction = #stablehlo<comparison_direction LT>")
        return e.op("stablehlo.select", [near, value, e.constant("(0.0, 0.0)", tensor_type(
            [size], _WORK))], tensor_type([size], _WORK))

    w = e.op("stablehlo.broadcast_in_dim", [chirp(n, 1.0, False)], tensor_type(moved, _WORK),
             f"broadcast_dimensions = {i64_array([rank - 1])}")
    a = e.op("stablehlo.multiply", [y, w], tensor_type(moved, _WORK))
    padded = moved[:-1] + [m]
    a = e.op("stablehlo.pad", [a, e.constant("(0.0, 0.0)", tensor_type([], _WORK))],
             tensor_type(padded, _WORK),
             f"edge_padding_low = {i64_array([0] * rank)}, "
             f"edge_padding_high = {i64_array([0] * (rank - 1) + [m - n])}, "
             f"interior_padding = {i64_array([0] * rank)}")
    spectrum, _ = _transform(e, a, padded, rank - 1, m, inverse=False)
    kernel, _ = _transform(e, chirp(m, -1.0, True), [m], 0, m, inverse=False)
    kernel = e.op("stablehlo.broadcast_in_dim", [kernel], tensor_type(padded, _WORK),
                  f"broadcast_dimensions = {i64_array([rank - 1])}")
    product = e.op("stablehlo.multiply", [spectrum, kernel], tensor_type(padded, _WORK))
    conv, _ = _transform(e, product, padded, rank - 1, m, inverse=True)
    conv, _ = _slice_axis(e, conv, padded, rank - 1, 0, n)
    out = e.op("stablehlo.multiply", [conv, w], tensor_type(moved, _WORK))
    if inverse:
        out = e.op("stablehlo.multiply", [out, e.constant(f"({1.0 / n!r}, 0.0)",
                                                          tensor_type(moved, _WORK))],
                   tensor_type(moved, _WORK))
    if axis != rank - 1:
        back = [last.index(d) for d in range(rank)]
        out = e.op("stablehlo.transpose", [out], tensor_type(shape, _WORK),
                   f"permutation = {i64_array(back)}")
    return out, list(shape)
