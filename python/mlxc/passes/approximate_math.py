"""mlxc-approximate-math: f32 exp, log, tanh and erf, and f64 exp, as inline vector
arithmetic.

`convert-math-to-llvm` turns math.exp/log/tanh/erf into LLVM intrinsics that the
backend scalarizes into one libm call per element, so a vector<64xf32> exp costs 64
calls. XLA's CPU backend replaces them with polynomial approximations that vectorize;
we expand them the same way, into arith ops on the same (scalar or vector) type,
following XLA's algorithms so that results agree with XLA bit for bit far more
often than libm's do. Multiply-adds are mulf/addf pairs marked `contract`, as XLA
emits them: LLVM fuses them into FMAs where the CPU has them (every host mlxc JITs
for today), and a cross-compile for a CPU without FMA gets plain, still accurate,
multiplies and adds instead of one fmaf call per element.

- exp: Cephes' range reduction x = n ln2 + a (ln2 split in two, n = floor(x log2e +
  1/2) clamped to [-127, 127]), a degree-7 polynomial for e^a, and 2^n built from its
  exponent bits; 2^-127 has none, so results below about 2^-126.5 flush to 0 (XLA
  flushes all subnormals). At most 1 ulp, 5 ulp just under the overflow threshold.
- tanh: Eigen's odd 13/6 rational function on x clamped to +-7.9988 (where it is
  exactly +-1), and x itself for |x| < 0.0004 (so -0 and tiny x are exact).
- log: Cephes' logf, the mantissa in [sqrt(1/2), sqrt(2)) and its degree-8 polynomial,
  with subnormal inputs scaled first; at most 1 ulp.
- erf: Eigen's odd 9/12 rational function, +-1 from |x| >= 3.8325.

f64 exp, as XLA's CPU backend computes it (bit-equal to jax.jit with x64): the same
range reduction with n clamped to [-1022, 1024], Cephes' rational function
e^g = 1 + 2 P(g) / (Q(g^2) - P(g)), and 2^n as two exponent-bit factors (each a normal
number; the product is rounded once); 0 below -708.396, inf above 709.783. At most 1 ulp.

f64 tanh stays libm's (under 1 ulp). XLA's f64 tanh is a rational function up to 6 ulp
off (3 below |x| = 1); in expm1 = tanh(x/2)(e^x + 1), and so in sinh, that error makes
XLA miss StableHLO's own f64 sinh test by 4 ulp, which libm's tanh passes. f64 users
pay for accuracy, and tanh is rarely hot in f64.

Infinities, NaN, +-0 and negative logs follow IEEE (log(0) = -inf, log(x<0) = NaN).
Other functions and types (f64 log, tanh and erf; f16/bf16 arrive here as f32) keep
the libm path. Runs in the lower stage after mlxc-precise-expm1-log1p, whose expansions
use exp, tanh and log.
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir
from . import PythonPass

# arith.cmpf predicates (arith::CmpFPredicate).
_OEQ, _OGT, _OGE, _OLT, _ULT = 1, 2, 3, 4, 11

_F32_MIN_NORMAL = 1.1754943508222875e-38


class _Float:
    """Builds arith/math ops on one f32 or f64 type (scalar or vector) and its
    same-width integer and i1 twins (`i32` is i64 for f64)."""

    def __init__(self, t: ir.Type):
        self.t = t
        self.vector = isinstance(t, ir.VectorType)
        shape = ir.VectorType(t).shape if self.vector else None
        self.f32 = ir.VectorType(t).element_type if self.vector else t
        width = 64 if isinstance(self.f32, ir.F64Type) else 32
        self.i32_element = ir.IntegerType.get_signless(width)
        self.i32 = ir.VectorType.get(shape, self.i32_element) if self.vector else self.i32_element
        i1 = ir.IntegerType.get_signless(1)
        self.i1 = ir.VectorType.get(shape, i1) if self.vector else i1
        self._pred_type = ir.IntegerType.get_signless(64)
        self._contract = {"fastmath": ir.Attribute.parse("#arith.fastmath<contract>")}

    def _constant(self, t, element_attr):
        attr = ir.DenseElementsAttr.get_splat(t, element_attr) if self.vector else element_attr
        return ir.Operation.create("arith.constant", results=[t], attributes={"value": attr}).result

    def c(self, value: float):
        return self._constant(self.t, ir.FloatAttr.get(self.f32, value))

    def ci(self, value: int):
        return self._constant(self.i32, ir.IntegerAttr.get(self.i32_element, value))

    def op(self, name: str, *operands, t=None):
        return ir.Operation.create(name, results=[t or self.t], operands=list(operands)).result

    def add(self, a, b):
        return self.op("arith.addf", a, b)

    def sub(self, a, b):
        return self.op("arith.subf", a, b)

    def mul(self, a, b):
        return self.op("arith.mulf", a, b)

    def fma(self, a, b, c):
        """a * b + c, fused where the target allows (see the module docstring)."""
        product = ir.Operation.create("arith.mulf", results=[self.t], operands=[a, b],
                                      attributes=self._contract).result
        return ir.Operation.create("arith.addf", results=[self.t], operands=[product, c],
                                   attributes=self._contract).result

    def cmp(self, predicate: int, a, b):
        return ir.Operation.create(
            "arith.cmpf", results=[self.i1], operands=[a, b],
            attributes={"predicate": ir.IntegerAttr.get(self._pred_type, predicate)}).result

    def select(self, cond, a, b):
        return ir.Operation.create("arith.select", results=[a.type], operands=[cond, a, b]).result

    def clamp(self, x, lo: float, hi: float):
        # x < lo ? lo : x keeps a NaN x and is a single max instruction on x86.
        low, high = self.c(lo), self.c(hi)
        x = self.select(self.cmp(_OLT, x, low), low, x)
        return self.select(self.cmp(_OGT, x, high), high, x)

    def horner(self, x, coefficients):
        """c0 x^n + ... + cn, highest degree first, one multiply-add per step."""
        acc = self.c(coefficients[0])
        for c in coefficients[1:]:
            acc = self.fma(acc, x, self.c(c))
        return acc


def _split_ln2(m: _Float, x, n_low: float, n_high: float, ln2_rest: float):
    """exp's range reduction: n = round(x / ln2) clamped to [n_low, n_high], and
    x - n ln2 with ln2 split into a 16-bit high part (n * high is exact) and the rest.
    The clamp maps a NaN n to n_low (ogt/olt are false for NaN), so the fptosi of n
    never sees NaN; a NaN x still reaches the result through the reduced argument."""
    n = m.op("math.floor", m.fma(x, m.c(1.4426950408889634), m.c(0.5)))
    lo, hi = m.c(n_low), m.c(n_high)
    n = m.select(m.cmp(_OGT, n, lo), n, lo)
    n = m.select(m.cmp(_OLT, n, hi), n, hi)
    reduced = m.fma(n, m.c(-0.693145751953125), x)
    return n, m.fma(n, m.c(ln2_rest), reduced)


def _exp(m: _Float, x):
    # XLA's input clamp: beyond it exp is 0 or inf anyway, and n stays in range.
    x = m.clamp(x, -87.8, 88.8)
    n, a = _split_ln2(m, x, -127.0, 127.0, -1.4286067653301877e-6)
    z = m.horner(a, [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                     4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1])
    z = m.add(m.c(1.0), m.fma(z, m.mul(a, a), a))
    # 2^n from its biased exponent; n = -127 gives the bits of +0.
    biased = m.op("arith.addi", m.op("arith.fptosi", n, t=m.i32), m.ci(127), t=m.i32)
    two_n = m.op("arith.bitcast", m.op("arith.shli", biased, m.ci(23), t=m.i32))
    return m.mul(z, two_n)


_TANH_NUMERATOR = [-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                   5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                   4.89352455891786e-03]
_TANH_DENOMINATOR = [1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                     4.89352518554385e-03]


def _tanh(m: _Float, x):
    # With fused multiply-adds the rational function is exactly +-1 at the clamp, so the
    # clamp saturates every larger |x| and the infinities.
    xc = m.clamp(x, -7.99881172180175781, 7.99881172180175781)
    x2 = m.mul(xc, xc)
    p = m.mul(xc, m.horner(x2, _TANH_NUMERATOR))
    q = m.horner(x2, _TANH_DENOMINATOR)
    # Without them (a CPU lacking FMA) it may pass 1 by an ulp near the clamp: cap it.
    r = m.clamp(m.op("arith.divf", p, q), -1.0, 1.0)
    tiny = m.cmp(_OLT, m.op("math.absf", x), m.c(0.0004))
    return m.select(tiny, x, r)


_LOG_POLYNOMIAL = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                   1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                   3.3333331174e-1]


def _log(m: _Float, x):
    i32 = m.i32
    # Subnormals: scale by 2^23 so the exponent field holds the whole exponent.
    subnormal = m.cmp(_OLT, x, m.c(_F32_MIN_NORMAL))
    xs = m.select(subnormal, m.mul(x, m.c(8388608.0)), x)
    bits = m.op("arith.bitcast", xs, t=i32)
    # x = mantissa * 2^e with the mantissa in [1/2, 1).
    e = m.op("arith.subi", m.op("arith.shrsi", bits, m.ci(23), t=i32),
             m.select(subnormal, m.ci(126 + 23), m.ci(126)), t=i32)
    mantissa = m.op("arith.bitcast", m.op("arith.ori", m.op("arith.andi", bits, m.ci(0x007FFFFF), t=i32),
                                          m.ci(0x3F000000), t=i32))
    # Below sqrt(1/2), use 2 * mantissa and e - 1: f = mantissa - 1 in [-0.29, 0.41).
    low = m.cmp(_OLT, mantissa, m.c(0.707106781186547524))
    e = m.op("arith.sitofp", e, t=m.t)
    e = m.select(low, m.sub(e, m.c(1.0)), e)
    f = m.sub(m.select(low, m.add(mantissa, mantissa), mantissa), m.c(1.0))
    f2 = m.mul(f, f)
    y = m.mul(m.mul(f, f2), m.horner(f, _LOG_POLYNOMIAL))
    # log(x) = f - f^2/2 + y + e ln2, ln2 in a short exact part and a correction.
    y = m.fma(e, m.c(-2.12194440e-4), y)
    y = m.fma(f2, m.c(-0.5), y)
    result = m.fma(e, m.c(0.693359375), m.add(f, y))
    result = m.select(m.cmp(_OEQ, x, m.c(0.0)), m.c(float("-inf")), result)
    inf = m.c(float("inf"))
    result = m.select(m.cmp(_OEQ, x, inf), inf, result)
    return m.select(m.cmp(_ULT, x, m.c(0.0)), m.c(float("nan")), result)  # and NaN -> NaN


_ERF_NUMERATOR = [0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861,
                  0.18520832239976145, 1.128379143519084]
_ERF_DENOMINATOR = [-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
                    0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0]


def _erf(m: _Float, x):
    x2 = m.mul(x, x)
    p = m.mul(x, m.horner(x2, _ERF_NUMERATOR))
    q = m.horner(x2, _ERF_DENOMINATOR)
    # +-1 where erf rounds to it (q's root lies beyond); NaN fails the compare.
    saturated = m.cmp(_OGE, m.op("math.absf", x), m.c(3.832506856900711))
    one = m.op("math.copysign", m.c(1.0), x)
    return m.select(saturated, one, m.op("arith.divf", p, q))


_EXP64_LOW, _EXP64_HIGH = -708.3964185322641, 709.782712893384
_EXP64_P = [1.26177193074810590878e-4, 3.02994407707441961300e-2, 9.99999999999999999910e-1]
_EXP64_Q = [3.00198505138664455042e-6, 2.52448340349684104192e-3, 2.27265548208155028766e-1, 2.0]


def _exp_f64(m: _Float, x):
    below = m.cmp(_OLT, x, m.c(_EXP64_LOW))
    above = m.cmp(_OGT, x, m.c(_EXP64_HIGH))
    xc = m.clamp(x, _EXP64_LOW, _EXP64_HIGH)
    n, g = _split_ln2(m, xc, -1022.0, 1024.0, -1.42860682030941723212e-6)
    g2 = m.mul(g, g)
    p = m.mul(m.horner(g2, _EXP64_P), g)
    q = m.horner(g2, _EXP64_Q)
    e = m.fma(m.op("arith.divf", p, m.sub(q, p)), m.c(2.0), m.c(1.0))
    # 2^n as two factors, each a normal number for n in [-1022, 1024]; e * 2^h is
    # exact, so the result is rounded once.
    i64 = m.i32
    k = m.op("arith.fptosi", n, t=i64)
    half = m.op("arith.shrsi", k, m.ci(1), t=i64)

    def power_of_two(exponent):
        biased = m.op("arith.addi", exponent, m.ci(1023), t=i64)
        return m.op("arith.bitcast", m.op("arith.shli", biased, m.ci(52), t=i64))

    result = m.mul(m.mul(e, power_of_two(half)),
                   power_of_two(m.op("arith.subi", k, half, t=i64)))
    result = m.select(below, m.c(0.0), result)
    return m.select(above, m.c(float("inf")), result)


_REWRITES = {
    (32, "math.exp"): _exp, (32, "math.tanh"): _tanh, (32, "math.log"): _log,
    (32, "math.erf"): _erf, (64, "math.exp"): _exp_f64,
}
_NAMES = {name for _, name in _REWRITES}


def _width(t: ir.Type) -> int:
    element = irutil.element_type(t)
    return 32 if isinstance(element, ir.F32Type) else 64 if isinstance(element, ir.F64Type) else 0


def run(module) -> None:
    for op in irutil.ops_named(module, *_NAMES):
        rewrite = _REWRITES.get((_width(op.result.type), op.name))
        if rewrite is None:
            continue
        irutil.replace_op(op, lambda: rewrite(_Float(op.result.type), op.operands[0]))


PASS = PythonPass(
    argument="mlxc-approximate-math",
    summary="Expand f32 math.exp/log/tanh/erf and f64 math.exp into vectorizable "
            "polynomials (XLA's algorithms)",
    run=run,
)
