"""mlxc-complex-mul-fma: complex multiplication with fused multiply-adds, as XLA does.

(a + bi)(c + di) = (ac - bd) + (bc + ad)i. XLA's CPU backend lets LLVM contract this
into re = fma(a, c, -(b*d)) and im = fma(b, c, a*d), one rounding fewer per part; JAX's
results (and StableHLO's testdata, produced by JAX) carry exactly that rounding, and
products of many complex numbers (cumprod, integer powers) drift apart without it.
`convert-complex-to-standard` would round every product. We emit the same fma's
explicitly, on the scalar complex.mul ops left after bufferization; runs before
convert-complex-to-standard.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass


def _float_op(name: str, t: ir.Type, *operands) -> ir.Value:
    return ir.Operation.create(name, results=[t], operands=list(operands)).result


def _rewrite(op) -> None:
    ctype = ir.ComplexType(op.result.type)
    f = ctype.element_type
    lhs, rhs = op.operands
    with ir.InsertionPoint(op), op.location:
        a, b = _float_op("complex.re", f, lhs), _float_op("complex.im", f, lhs)
        c, d = _float_op("complex.re", f, rhs), _float_op("complex.im", f, rhs)
        bd = _float_op("arith.mulf", f, b, d)
        re = _float_op("math.fma", f, a, c, _float_op("arith.negf", f, bd))
        im = _float_op("math.fma", f, b, c, _float_op("arith.mulf", f, a, d))
        result = _float_op("complex.create", ctype, re, im)
    op.result.replace_all_uses_with(result)
    op.erase()


def run(module) -> None:
    for op in irutil.ops_named(module, "complex.mul"):
        if isinstance(op.result.type, ir.ComplexType):
            _rewrite(op)


PASS = PythonPass(
    argument="mlxc-complex-mul-fma",
    summary="complex.mul as fma(a,c,-bd) + i fma(b,c,ad), the rounding of XLA's CPU backend",
    run=run,
)
