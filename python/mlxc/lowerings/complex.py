"""Complex-number ops that `stablehlo-legalize-to-linalg` gets wrong or crashes on.

- `bitcast_convert` between complex types: upstream emits an `arith.bitcast` on
  `complex<f32>`, which crashes. A complex tensor of shape S is, in memory, a float
  tensor of shape S x 2 (real, imaginary), so we go through that view and let the
  real-typed bitcast_convert do the rest.
- `maximum`/`minimum` on complex: the spec orders complex numbers lexicographically by
  (real, imaginary); upstream does not.
- `tanh` on complex: upstream's formula loses ~5 digits near the real axis. We use
  (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y), free of cancellation, and
  its limit sign(x) + 4i sin y cos y exp(-2|x|) where sinh^2 x would overflow.
- `log_plus_one` on complex: upstream's real part, log|1 + z|, cancels when |1 + z| is
  near 1. We use (1/2) log1p(x (x + 2) + y^2), as XLA does, and log|1 + z| only where
  the squares would overflow.
- `exponential_minus_one` on complex: XLA's formula, expm1(x) cos y + cosm1(y) +
  i exp(x) sin y with cos y = cosm1(y) + 1 and a series for cosm1 below y^2 = 0.61685,
  each multiply-add fused as XLA's are (in f64 for f32 parts: the product is exact
  there); upstream's exp(z) - 1 cancels near z = 0 and rounds differently.
- `cbrt` on complex: upstream has no lowering; we take the principal root,
  cbrt(|z|) * exp(i * arg(z) / 3), as the reference interpreter does.
"""

from __future__ import annotations

from .._mlir import ir
from . import lowering


def _tensor(shape, element) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element)


def _create(name: str, result: ir.Type, operands, **attrs) -> ir.Value:
    return ir.Operation.create(name, results=[result], operands=list(operands),
                               attributes=attrs).result


def _splat(t: ir.RankedTensorType, value: float) -> ir.Value:
    return _create("stablehlo.constant", t, [], value=ir.DenseElementsAttr.get_splat(
        t, ir.FloatAttr.get(t.element_type, value)))


def _is_complex(t: ir.Type) -> bool:
    return isinstance(ir.RankedTensorType(t).element_type, ir.ComplexType)


def _part_type(t: ir.Type) -> ir.RankedTensorType:
    rt = ir.RankedTensorType(t)
    return _tensor(rt.shape, ir.ComplexType(rt.element_type).element_type)


def _as_pairs(value: ir.Value) -> ir.Value:
    """A complex tensor of shape S as the float tensor S x 2 it is in memory."""
    part = _part_type(value.type)
    shape = list(part.shape)
    column = _tensor(shape + [1], part.element_type)
    re = _create("stablehlo.reshape", column, [_create("stablehlo.real", part, [value])])
    im = _create("stablehlo.reshape", column, [_create("stablehlo.imag", part, [value])])
    return _create("stablehlo.concatenate", _tensor(shape + [2], part.element_type), [re, im],
                   dimension=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(shape)))


def _from_pairs(pairs: ir.Value, complex_type: ir.RankedTensorType) -> ir.Value:
    """The inverse of `_as_pairs`: S x 2 floats to a complex tensor of shape S."""
    part = _part_type(complex_type)
    shape = list(part.shape)
    rank = len(shape) + 1

    def column(i: int) -> ir.Value:
        sliced = _create("stablehlo.slice", _tensor(shape + [1], part.element_type), [pairs],
                         start_indices=ir.DenseI64ArrayAttr.get([0] * len(shape) + [i]),
                         limit_indices=ir.DenseI64ArrayAttr.get(shape + [i + 1]),
                         strides=ir.DenseI64ArrayAttr.get([1] * rank))
        return _create("stablehlo.reshape", part, [sliced])

    return _create("stablehlo.complex", complex_type, [column(0), column(1)])


@lowering("stablehlo.bitcast_convert")
def bitcast_convert(op) -> None:
    # The verifier only allows complex-to-complex bitcasts among those with complex types.
    src, dst = op.operands[0], op.result
    if not (_is_complex(src.type) and _is_complex(dst.type)):
        return
    with ir.InsertionPoint(op), op.location:
        if src.type == dst.type:
            result = src
        else:
            part = _part_type(dst.type)
            pairs_t = _tensor(list(part.shape) + [2], part.element_type)
            bits = _create("stablehlo.bitcast_convert", pairs_t, [_as_pairs(src)])
            result = _from_pairs(bits, ir.RankedTensorType(dst.type))
    op.result.replace_all_uses_with(result)
    op.erase()


def _lexicographic(op, direction: str) -> None:
    a, b = op.operands
    if not _is_complex(a.type):
        return
    part = _part_type(a.type)
    pred = _tensor(part.shape, ir.IntegerType.get_signless(1))

    def compare(how: str, x, y) -> ir.Value:
        return _create("stablehlo.compare", pred, [x, y],
                       comparison_direction=ir.Attribute.parse(
                           f"#stablehlo<comparison_direction {how}>"),
                       compare_type=ir.Attribute.parse("#stablehlo<comparison_type FLOAT>"))

    with ir.InsertionPoint(op), op.location:
        ra, rb = _create("stablehlo.real", part, [a]), _create("stablehlo.real", part, [b])
        ia, ib = _create("stablehlo.imag", part, [a]), _create("stablehlo.imag", part, [b])
        # a wins when its real part wins, or the real parts tie and its imaginary part wins.
        wins = _create("stablehlo.or", pred, [
            compare(direction, ra, rb),
            _create("stablehlo.and", pred, [compare("EQ", ra, rb), compare(direction, ia, ib)])])
        result = _create("stablehlo.select", a.type, [wins, a, b])
    op.result.replace_all_uses_with(result)
    op.erase()


@lowering("stablehlo.maximum")
def maximum(op) -> None:
    _lexicographic(op, "GT")


@lowering("stablehlo.minimum")
def minimum(op) -> None:
    _lexicographic(op, "LT")


@lowering("stablehlo.cbrt")
def cbrt(op) -> None:
    z = op.operands[0]
    if not _is_complex(z.type):
        return
    part = _part_type(z.type)
    with ir.InsertionPoint(op), op.location:
        modulus = _create("stablehlo.cbrt", part, [_create("stablehlo.abs", part, [z])])
        angle = _create("stablehlo.atan2", part, [_create("stablehlo.imag", part, [z]),
                                                  _create("stablehlo.real", part, [z])])
        angle = _create("stablehlo.divide", part, [angle, _splat(part, 3.0)])
        re = _create("stablehlo.multiply", part, [modulus, _create("stablehlo.cosine", part, [angle])])
        im = _create("stablehlo.multiply", part, [modulus, _create("stablehlo.sine", part, [angle])])
        result = _create("stablehlo.complex", z.type, [re, im])
    op.result.replace_all_uses_with(result)
    op.erase()


@lowering("stablehlo.tanh")
def tanh(op) -> None:
    z = op.operands[0]
    if not _is_complex(z.type):
        return
    part = _part_type(z.type)
    pred = _tensor(part.shape, ir.IntegerType.get_signless(1))

    def f(name, *args):
        return _create(f"stablehlo.{name}", part, list(args))

    with ir.InsertionPoint(op), op.location:
        x, y = f("real", z), f("imag", z)
        # StableHLO has no sinh/cosh; expm1 keeps sinh accurate near 0.
        up, down = f("exponential_minus_one", x), f("exponential_minus_one", f("negate", x))
        half = _splat(part, 0.5)
        sinh_x = f("multiply", half, f("subtract", up, down))
        cosh_x = f("multiply", half, f("add", f("add", up, down), _splat(part, 2.0)))
        cos_y = f("cosine", y)
        sin_cos = f("multiply", f("sine", y), cos_y)
        denom = f("add", f("multiply", sinh_x, sinh_x), f("multiply", cos_y, cos_y))
        near = _create("stablehlo.complex", z.type, [
            f("divide", f("multiply", sinh_x, cosh_x), denom), f("divide", sin_cos, denom)])
        # Past |x| = 40, sinh^2 x overflows f32 while tanh x is 1 in both f32 and f64.
        far_im = f("multiply", f("multiply", _splat(part, 4.0), sin_cos),
                   f("exponential", f("multiply", _splat(part, -2.0), f("abs", x))))
        far = _create("stablehlo.complex", z.type, [f("sign", x), far_im])
        is_far = _create("stablehlo.compare", pred, [f("abs", x), _splat(part, 40.0)],
                         comparison_direction=ir.Attribute.parse(
                             "#stablehlo<comparison_direction GT>"),
                         compare_type=ir.Attribute.parse("#stablehlo<comparison_type FLOAT>"))
        result = _create("stablehlo.select", z.type, [is_far, far, near])
    op.result.replace_all_uses_with(result)
    op.erase()


# cosm1(y) = y^4 P(y^2) - y^2 / 2 below y^2 = 0.61685, P highest degree first.
_COSM1 = {
    "f32": [4.737750719085304e-14, -1.1470284791426089e-11, 2.0876753659138103e-09,
            -2.755731998149713e-07, 2.4801587642286904e-05, -0.0013888889225199819,
            0.0416666679084301],
    "f64": [4.737750796424621e-14, -1.147028484342536e-11, 2.087675428708152e-09,
            -2.755731921499979e-07, 2.480158730157055e-05, -0.0013888888888888872,
            0.041666666666666664],
}


def _split(f, part, a):
    """Veltkamp's split: a = high + low, each with at most 26 significant bits."""
    t = f("multiply", _splat(part, 134217729.0), a)
    high = f("subtract", t, f("subtract", t, a))
    return high, f("subtract", a, high)


def _fma_f64(f, pred, a, b, c):
    part = a.type
    p = f("multiply", a, b)
    (ah, al), (bh, bl) = _split(f, part, a), _split(f, part, b)
    e = f("add", f("add", f("add", f("subtract", f("multiply", ah, bh), p),
                               f("multiply", ah, bl)), f("multiply", al, bh)),
          f("multiply", al, bl))
    fused = f("add", f("add", p, c), e)
    # Splitting overflows beyond |a|, |b| ~ 1e300: there, the plain product and sum.
    finite = _create("stablehlo.is_finite", pred, [fused])
    return f("select", finite, fused, f("add", p, c))


@lowering("stablehlo.exponential_minus_one")
def exponential_minus_one(op) -> None:
    z = op.operands[0]
    if not _is_complex(z.type):
        return
    part = _part_type(z.type)
    element = str(part.element_type)
    if element not in _COSM1:
        return
    wide = _tensor(part.shape, ir.F64Type.get())
    pred = _tensor(part.shape, ir.IntegerType.get_signless(1))

    def f(name, *args):
        return _create(f"stablehlo.{name}", part, list(args))

    def fma(a, b, c):
        # a * b + c rounded once: for f32 parts a * b is exact in f64 and the sum is
        # rounded twice, which differs from one rounding only on rare exact ties. f64
        # has no wider type: a * b = p + e exactly (Dekker's product), then (p + c) + e,
        # exact where p and c cancel, as they do when re is near 0.
        if element == "f64":
            return _fma_f64(f, pred, a, b, c)
        a, b, c = (_create("stablehlo.convert", wide, [v]) for v in (a, b, c))
        total = _create("stablehlo.add", wide, [_create("stablehlo.multiply", wide, [a, b]), c])
        return _create("stablehlo.convert", part, [total])

    def compare(direction, a, b):
        return _create("stablehlo.compare", pred, [a, b], comparison_direction=ir.Attribute.parse(
            f"#stablehlo<comparison_direction {direction}>"))

    with ir.InsertionPoint(op), op.location:
        x, y = f("real", z), f("imag", z)
        em1 = f("exponential_minus_one", x)
        y2 = f("multiply", y, y)
        coefficients = _COSM1[element]
        poly = _splat(part, coefficients[0])
        for c in coefficients[1:]:
            poly = fma(poly, y2, _splat(part, c))
        series = fma(f("multiply", y2, y2), poly, f("multiply", y2, _splat(part, -0.5)))
        direct = f("subtract", f("cosine", y), _splat(part, 1.0))
        cosm1 = f("select", compare("GE", y2, _splat(part, 0.61685)), direct, series)
        re = fma(em1, f("add", cosm1, _splat(part, 1.0)), cosm1)
        im = f("multiply", f("add", em1, _splat(part, 1.0)), f("sine", y))
        im = f("select", compare("EQ", y, _splat(part, 0.0)), _splat(part, 0.0), im)
        result = _create("stablehlo.complex", z.type, [re, im])
    op.result.replace_all_uses_with(result)
    op.erase()


@lowering("stablehlo.log_plus_one")
def log_plus_one(op) -> None:
    z = op.operands[0]
    if not _is_complex(z.type):
        return
    part = _part_type(z.type)
    pred = _tensor(part.shape, ir.IntegerType.get_signless(1))
    # Below this |x| + |y|, x (x + 2) + y^2 cannot overflow.
    limit = 4e18 if str(part.element_type) == "f32" else 3e153

    def f(name, *args):
        return _create(f"stablehlo.{name}", part, list(args))

    with ir.InsertionPoint(op), op.location:
        x, y = f("real", z), f("imag", z)
        x1 = f("add", x, _splat(part, 1.0))
        small = f("multiply", _splat(part, 0.5), f("log_plus_one", f("add", f("multiply", x, f(
            "add", x, _splat(part, 2.0))), f("multiply", y, y))))
        large = f("log", _create("stablehlo.abs", part, [_create("stablehlo.complex", z.type, [x1, y])]))
        is_large = _create("stablehlo.compare", pred, [f("add", f("abs", x), f("abs", y)),
                                                       _splat(part, limit)],
                           comparison_direction=ir.Attribute.parse(
                               "#stablehlo<comparison_direction GT>"),
                           compare_type=ir.Attribute.parse("#stablehlo<comparison_type FLOAT>"))
        re = _create("stablehlo.select", part, [is_large, large, small])
        result = _create("stablehlo.complex", z.type, [re, f("atan2", y, x1)])
    op.result.replace_all_uses_with(result)
    op.erase()
