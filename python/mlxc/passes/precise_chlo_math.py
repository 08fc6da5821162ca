"""mlxc-precise-chlo-math: accurate expansions of chlo.asinh, chlo.atanh and chlo.sinh.

`chlo-legalize-to-stablehlo` expands these with textbook formulas that cancel near
zero (asinh(x) = log(x + sqrt(x^2 + 1)) loses most digits for small x), so results
differ from XLA's by many units in the last place. XLA writes them through log1p and
expm1, which keep full precision; we do the same, for f32 and f64. Other element
types (f16/bf16 are computed in f32 and rounded anyway, complex numbers) keep the
upstream expansion. Runs before chlo-legalize-to-stablehlo.
"""

from __future__ import annotations

import math

from .. import irutil
from .._mlir import ir
from . import PythonPass

_TYPES = ("f32", "f64")


class _Builder:
    """StableHLO elementwise ops of one tensor type, at one insertion point."""

    def __init__(self, t: ir.Type):
        self.t = t
        self.element = ir.RankedTensorType(t).element_type
        self.i1 = ir.RankedTensorType.get(ir.RankedTensorType(t).shape, ir.IntegerType.get_signless(1))

    def const(self, value: float):
        attr = ir.DenseElementsAttr.get_splat(self.t, ir.FloatAttr.get(self.element, value))
        return ir.Operation.create("stablehlo.constant", results=[self.t],
                                   attributes={"value": attr}).result

    def op(self, name: str, *operands):
        return ir.Operation.create(f"stablehlo.{name}", results=[self.t],
                                   operands=list(operands)).result

    def less(self, a, b):
        direction = ir.Attribute.parse("#stablehlo<comparison_direction LT>")
        return ir.Operation.create("stablehlo.compare", results=[self.i1], operands=[a, b],
                                   attributes={"comparison_direction": direction}).result

    def select(self, cond, a, b):
        return ir.Operation.create("stablehlo.select", results=[self.t],
                                   operands=[cond, a, b]).result


def _asinh(b: _Builder, x):
    # asinh(|x|) = log1p(a + a^2 / (1 + sqrt(1 + a^2))) while a^2 does not overflow;
    # beyond, log(a) + log(2). The sign is restored at the end (asinh is odd).
    a = b.op("abs", x)
    a2 = b.op("multiply", a, a)
    one = b.const(1.0)
    root = b.op("sqrt", b.op("add", one, a2))
    moderate = b.op("log_plus_one", b.op("add", a, b.op("divide", a2, b.op("add", one, root))))
    big = b.op("add", b.op("log", a), b.const(math.log(2.0)))
    limit = b.const(math.sqrt(float(1.7976931348623157e308 if str(b.element) == "f64"
                                    else 3.4028234663852886e38)))
    magnitude = b.select(b.less(a, limit), moderate, big)
    return _copysign(b, magnitude, x)


def _copysign(b: _Builder, magnitude, x):
    # Select on x < 0 rather than multiply by sign(x): NaN stays NaN, and no 0 * inf.
    negative = b.less(x, b.const(0.0))
    return b.select(negative, b.op("negate", magnitude), magnitude)


def _atanh(b: _Builder, x):
    # atanh(x) = (log1p(x) - log1p(-x)) / 2: the two terms have opposite signs, so
    # nothing cancels near 0, and each is exact near +-1 too; +-inf at +-1, NaN beyond.
    difference = b.op("subtract", b.op("log_plus_one", x), b.op("log_plus_one", b.op("negate", x)))
    return b.op("multiply", b.const(0.5), difference)


def _sinh(b: _Builder, x):
    # |x| < 1: with e = expm1(x), sinh(x) = (e + e / (e + 1)) / 2, no cancellation.
    # Otherwise exp(x - log 2) - exp(-x - log 2), which overflows only when sinh does.
    e = b.op("exponential_minus_one", x)
    small = b.op("multiply", b.const(0.5), b.op("add", e, b.op("divide", e, b.op("add", e, b.const(1.0)))))
    log_half = b.const(math.log(0.5))
    large = b.op("subtract", b.op("exponential", b.op("add", x, log_half)),
                 b.op("exponential", b.op("subtract", log_half, x)))
    return b.select(b.less(b.op("abs", x), b.const(1.0)), small, large)


_EXPANSIONS = {"chlo.asinh": _asinh, "chlo.atanh": _atanh, "chlo.sinh": _sinh}


def run(module) -> None:
    for op in irutil.ops_named(module, *_EXPANSIONS):
        expand = _EXPANSIONS[op.name]
        if not isinstance(op.result.type, ir.RankedTensorType):
            continue
        if str(ir.RankedTensorType(op.result.type).element_type) not in _TYPES:
            continue
        irutil.replace_op(op, lambda: expand(_Builder(op.result.type), op.operands[0]))


PASS = PythonPass(
    argument="mlxc-precise-chlo-math",
    summary="Expand chlo.asinh, chlo.atanh and chlo.sinh (f32, f64) through log1p and expm1",
    run=run,
)
