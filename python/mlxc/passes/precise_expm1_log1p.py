"""mlxc-precise-expm1-log1p: expm1 and log1p to full precision.

`convert-math-to-llvm` lowers math.expm1 to exp(x) - 1 and math.log1p to
log(1 + x), which lose every digit near zero (expm1(1e-8) comes out as 0), while
XLA and numpy are accurate there. We rewrite both with formulas that need only an
accurate exp, tanh and log:

    expm1(x) = exp(x) - 1                 for |x| > 1/2 (nothing cancels there)
             = tanh(x / 2) * (exp(x) + 1)  otherwise; x itself where x/2 == 0
    log1p(x) = log(u) * (x / (u - 1)),  u = 1 + x    (x itself when u == 1)

expm1 is XLA's own formula: in f32, on mlxc-approximate-math's exp and tanh (XLA's
algorithms), results are XLA's bit for bit, and chlo.sinh, built on expm1, follows; in
f64, tanh is libm's, so results are within a few ulp of XLA's and more accurate. For log1p, the infinities and -1 are handled apart, and the quotient
comes first: it is near 1, while (u - 1) * x overflows for large x (log1p(4e36) is
finite). Works on scalars and vectors of any float type; runs after
math-extend-to-supported-types, so f16/bf16 arrive as f32.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

# arith.cmpf predicates (arith::CmpFPredicate).
_OEQ, _OGT = 1, 2


class _Arith:
    def __init__(self, t: ir.Type):
        self.t = t
        element = irutil.element_type(t)
        self.element = element
        i1 = ir.IntegerType.get_signless(1)
        self.i1 = ir.VectorType.get(ir.VectorType(t).shape, i1) if isinstance(t, ir.VectorType) else i1

    def const(self, value: float):
        scalar = ir.FloatAttr.get(self.element, value)
        attr = ir.DenseElementsAttr.get_splat(self.t, scalar) if isinstance(self.t, ir.VectorType) else scalar
        return ir.Operation.create("arith.constant", results=[self.t], attributes={"value": attr}).result

    def op(self, name: str, *operands):
        return ir.Operation.create(name, results=[self.t], operands=list(operands)).result

    def compare(self, predicate: int, a, b):
        pred = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), predicate)
        return ir.Operation.create("arith.cmpf", results=[self.i1], operands=[a, b],
                                   attributes={"predicate": pred}).result

    def eq(self, a, b):
        return self.compare(_OEQ, a, b)

    def select(self, cond, a, b):
        return ir.Operation.create("arith.select", results=[self.t], operands=[cond, a, b]).result


def _expm1(m: _Arith, x):
    u = m.op("math.exp", x)
    half = m.op("arith.mulf", x, m.const(0.5))
    near_zero = m.op("arith.mulf", m.op("math.tanh", half), m.op("arith.addf", u, m.const(1.0)))
    away = m.op("arith.subf", u, m.const(1.0))
    far = m.compare(_OGT, m.op("math.absf", x), m.const(0.5))
    value = m.select(far, away, near_zero)
    return m.select(m.eq(half, m.const(0.0)), x, value)  # +-0, and x/2 underflowing


def _log1p(m: _Arith, x):
    u = m.op("arith.addf", x, m.const(1.0))
    corrected = m.op("arith.mulf", m.op("math.log", u),
                     m.op("arith.divf", x, m.op("arith.subf", u, m.const(1.0))))
    inf = m.const(float("inf"))
    value = m.select(m.eq(u, inf), inf, corrected)
    value = m.select(m.eq(u, m.const(0.0)), m.op("math.log", u), value)  # log1p(-1) = -inf
    return m.select(m.eq(u, m.const(1.0)), x, value)


_REWRITES = {"math.expm1": _expm1, "math.log1p": _log1p}


def run(module) -> None:
    for op in irutil.ops_named(module, *_REWRITES):
        rewrite = _REWRITES[op.name]
        irutil.replace_op(op, lambda: rewrite(_Arith(op.result.type), op.operands[0]))


PASS = PythonPass(
    argument="mlxc-precise-expm1-log1p",
    summary="Rewrite math.expm1 (XLA's formula) and math.log1p, both exact near zero",
    run=run,
)
