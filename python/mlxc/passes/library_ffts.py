"""mlxc-library-ffts: stablehlo.fft calls the runtime's FFT (runtime/mlxc_fft.c), as XLA
calls its FFT library on the CPU.

The kernel is lowerings/fft_complex.py, fft_real.py and fft_roots.py written in C, so it
gives XLA's results bit for bit, and the program compiles in milliseconds where the
same transform unrolled into elementwise ops (lowerings/fft.py's exact path) takes
seconds. It takes the transforms of f32/f64 (complex64/complex128) data whose every
length it covers (`covered`): complex lengths of ducc0's radix passes (prime factors
below 110, and not the longer lengths ducc0 transforms otherwise), and real lengths
with fft_real.uses_radix_passes. Other ffts stay for mlxc-lower-extra-ops.

Runs in the linalg stage before mlxc-lower-extra-ops, on the CPU only. The operand goes
to the call as a read-only buffer and the result is a fresh one
(targets/cpu/kernel_calls.py); the buffers keep their element type, complex included,
so each operand/result type pair has its entry point.
"""

from __future__ import annotations

from typing import Optional

from .. import irutil, settings
from .._mlir import ir
from ..lowerings import fft_complex, fft_real
from ..targets.cpu import kernel_calls
from . import PythonPass

# stablehlo's fft_type, as runtime/mlxc_fft.h numbers it.
_KINDS = {"FFT": 0, "IFFT": 1, "RFFT": 2, "IRFFT": 3}
# The entry point by kind and precision (an MLIR declaration has one signature).
_CALLEES = {("FFT", "f32"): "mlxc_fft_c64", ("FFT", "f64"): "mlxc_fft_c128",
            ("RFFT", "f32"): "mlxc_rfft_f32", ("RFFT", "f64"): "mlxc_rfft_f64",
            ("IRFFT", "f32"): "mlxc_irfft_f32", ("IRFFT", "f64"): "mlxc_irfft_f64"}
_SIZES, _FLAGS = 4, 3  # batch, n0, n1, n2; rank, kind, threads


def covered(n: int, real: bool) -> bool:
    """Whether the kernel transforms length n as XLA does (mlxc_fft_supported)."""
    if real:
        return fft_real.uses_radix_passes(n)
    # ducc0 splits longer axes whose length is a multiple of 4 into interleaved
    # transforms, and axes over 10000 into two halves: other operation orders.
    return fft_complex.supported(n) and n <= 10000 and (n <= 300 or n % 4 != 0)


def _precision(t: ir.Type) -> Optional[str]:
    if isinstance(t, ir.ComplexType):
        t = t.element_type
    if isinstance(t, ir.F32Type):
        return "f32"
    if isinstance(t, ir.F64Type):
        return "f64"
    return None


def _plan(op) -> Optional[tuple]:
    """(callee, kind, batch, lengths) for an fft the kernel takes, else None."""
    kind = str(op.attributes["fft_type"]).rstrip(">").split()[-1]  # #stablehlo<fft_type RFFT>
    lengths = list(ir.DenseI64ArrayAttr(op.attributes["fft_length"]))
    in_t, out_t = op.operands[0].type, op.results[0].type
    if kind not in _KINDS or not 1 <= len(lengths) <= 3:
        return None
    if not all(isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape
               for t in (in_t, out_t)):
        return None
    in_t, out_t = ir.RankedTensorType(in_t), ir.RankedTensorType(out_t)
    precision = _precision(in_t.element_type)
    if precision is None or _precision(out_t.element_type) != precision:
        return None
    real = kind in ("RFFT", "IRFFT")
    if not all(covered(n, real and i == len(lengths) - 1) for i, n in enumerate(lengths)):
        return None
    # The shapes the kernel assumes: lengths trailing, n/2 + 1 on a complex side.
    spatial = list(lengths)
    half = spatial[:-1] + [spatial[-1] // 2 + 1]
    rank = len(lengths)
    in_shape, out_shape = list(in_t.shape), list(out_t.shape)
    if len(in_shape) < rank or in_shape[:-rank] != out_shape[:-rank]:
        return None
    want_in, want_out = {"FFT": (spatial, spatial), "IFFT": (spatial, spatial),
                         "RFFT": (spatial, half), "IRFFT": (half, spatial)}[kind]
    if in_shape[-rank:] != want_in or out_shape[-rank:] != want_out:
        return None
    batch = 1
    for d in in_shape[:-rank]:
        batch *= d
    callee = _CALLEES[("FFT" if kind == "IFFT" else kind, precision)]
    return callee, kind, batch, lengths


def _rewrite(op, callee: str, kind: str, batch: int, lengths: list, threads: int) -> None:
    padded = list(lengths) + [1] * (3 - len(lengths))
    with ir.InsertionPoint(op), op.location:
        result = kernel_calls.call(callee, [op.operands[0]], op.results[0].type,
                                   [batch] + padded, [len(lengths), _KINDS[kind], threads])
    op.results[0].replace_all_uses_with(result)
    op.erase()


def run(module) -> None:
    found = []
    for op in irutil.ops_named(module, "stablehlo.fft"):
        plan = _plan(op)
        if plan is not None:
            found.append((op, plan))
    if not found:
        return
    threads = settings.get("threads")
    with irutil.as_operation(module).context:
        for op, (callee, kind, batch, lengths) in found:
            kernel_calls.declare(module, callee, 2, _SIZES, _FLAGS, [
                ir.RankedTensorType(v.type).element_type for v in (op.operands[0], op.results[0])])
        for op, (callee, kind, batch, lengths) in found:
            _rewrite(op, callee, kind, batch, lengths, threads)


PASS = PythonPass(
    argument="mlxc-library-ffts",
    summary="an FFT of lengths XLA's library transforms with its radix passes calls the "
            "runtime's port of them (runtime/mlxc_fft.c): XLA's results bit for bit, "
            "compiled in milliseconds",
    run=run,
)
