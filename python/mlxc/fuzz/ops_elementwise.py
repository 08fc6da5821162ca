"""Elementwise ops: unary, binary, compare/select/clamp, converts and bitcasts."""

from __future__ import annotations

from .ops import (BOOL, COMPLEX, FLOAT, OPS, SINT, UINT, _lax, kind, op,
                  same_type_operands, elem)

# -- elementwise --------------------------------------------------------------------

EW = "elementwise lowp inplace control hlo"

_UNARY = [
    # name, lax function, kinds, tolerance, discontinuous, stablehlo name
    ("neg", "neg", "FCIU", "exact", False, "negate"),
    ("abs", "abs", "FI", "exact", False, "abs"),
    ("sign", "sign", "FI", "exact", True, "sign"),
    ("floor", "floor", "F", "exact", True, "floor"),
    ("ceil", "ceil", "F", "exact", True, "ceil"),
    ("round_even", None, "F", "exact", True, "round_nearest_even"),
    ("round_away", None, "F", "exact", True, "round_nearest_afz"),
    ("sqrt", "sqrt", "FC", "round", False, "sqrt"),
    ("rsqrt", "rsqrt", "F", "transcendental", False, "rsqrt"),
    ("cbrt", "cbrt", "F", "transcendental", False, "cbrt"),
    ("exp", "exp", "FC", "transcendental", False, "exponential"),
    ("expm1", "expm1", "F", "transcendental", False, "exponential_minus_one"),
    ("log", "log", "FC", "transcendental", False, "log"),
    ("log1p", "log1p", "F", "transcendental", False, "log_plus_one"),
    ("sin", "sin", "F", "transcendental", False, "sine"),
    ("cos", "cos", "F", "transcendental", False, "cosine"),
    ("tan", "tan", "F", "special", False, "tan"),
    ("tanh", "tanh", "FC", "transcendental", False, "tanh"),
    ("logistic", "logistic", "F", "transcendental", False, "logistic"),
    ("not", "bitwise_not", "IUB", "exact", False, "not"),
    ("popcnt", "population_count", "IU", "exact", False, "popcnt"),
    ("clz", "clz", "IU", "exact", False, "count_leading_zeros"),
    ("is_finite", "is_finite", "F", "exact", True, "is_finite"),
    ("real", "real", "C", "exact", False, "real"),
    ("imag", "imag", "C", "exact", False, "imag"),
    ("square", "square", "FCI", "round", False, None),
]


def _unary_fn(lax_name, name):
    def fn(p, x):
        jax, lax, jnp = _lax()
        if name == "round_even":
            return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
        if name == "round_away":
            return lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO)
        return getattr(lax, lax_name)(x)
    return fn


def _unary_hlo(hname):
    def write(p, a, t, r):
        return [f'"stablehlo.{hname}"({a[0]}) : ({t[0]}) -> {r}']
    return write


for _n, _l, _k, _t, _d, _h in _UNARY:
    op(_n, _unary_fn(_l, _n), _k, EW if _h else "elementwise lowp inplace control",
       tol=_t, discontinuous=_d, sample=same_type_operands(1), hlo=_unary_hlo(_h) if _h else None)

OPS["is_finite"].only = ()
for _n in ("sin", "cos", "tan", "rsqrt", "cbrt", "expm1", "log1p", "logistic"):
    OPS[_n].extra["no_lowp"] = True  # XLA computes these in f32 for bf16/f16 too; kept to f32/f64
OPS["popcnt"].extra["no_hlo_kinds"] = ""

_BINARY = [
    ("add", "add", "FCIU", "round", False, "add"),
    ("sub", "sub", "FCIU", "round", False, "subtract"),
    ("mul", "mul", "FCIU", "round", False, "multiply"),
    ("div", "div", "FCIU", "round", False, "divide"),
    ("rem", "rem", "FIU", "exact", True, "remainder"),
    ("pow", "pow", "FC", "special", False, "power"),
    ("max", "max", "FIUB", "exact", False, "maximum"),
    ("min", "min", "FIUB", "exact", False, "minimum"),
    ("atan2", "atan2", "F", "transcendental", False, "atan2"),
    ("and", "bitwise_and", "IUB", "exact", False, "and"),
    ("or", "bitwise_or", "IUB", "exact", False, "or"),
    ("xor", "bitwise_xor", "IUB", "exact", False, "xor"),
    ("shl", "shift_left", "IU", "exact", False, "shift_left"),
    ("shr_logical", "shift_right_logical", "IU", "exact", False, "shift_right_logical"),
    ("shr_arith", "shift_right_arithmetic", "IU", "exact", False, "shift_right_arithmetic"),
    ("nextafter", "nextafter", "F", "exact", True, None),
]


def _binary_fn(lax_name):
    def fn(p, x, y):
        jax, lax, jnp = _lax()
        return getattr(lax, lax_name)(x, y)
    return fn


def _binary_hlo(hname):
    def write(p, a, t, r):
        return [f'"stablehlo.{hname}"({a[0]}, {a[1]}) : ({t[0]}, {t[1]}) -> {r}']
    return write


def _division_hlo(hname):
    """Integer division with the divisor made nonzero and never -1 first: the
    interpreter dies of SIGFPE on x/0 and INT_MIN/-1 (JAX-made programs test those
    against XLA instead)."""
    def write(p, a, t, r):
        k = elem(t[0])
        if not k.startswith(("i", "ui")) or k == "i1":
            return _binary_hlo(hname)(p, a, t, r)
        lines = [f"%TMP1 = stablehlo.constant dense<1> : {t[1]}",
                 f'%TMP2 = "stablehlo.or"({a[1]}, %TMP1) : ({t[1]}, {t[1]}) -> {t[1]}']
        divisor = "%TMP2"
        if k.startswith("i"):
            i1 = t[1].replace(k + ">", "i1>")
            lines += [f"%TMP3 = stablehlo.constant dense<-1> : {t[1]}",
                      f'%TMP4 = "stablehlo.compare"(%TMP2, %TMP3) {{comparison_direction = '
                      f'#stablehlo<comparison_direction EQ>}} : ({t[1]}, {t[1]}) -> {i1}',
                      f'%TMP5 = "stablehlo.select"(%TMP4, %TMP1, %TMP2) : ({i1}, {t[1]}, {t[1]}) -> {t[1]}']
            divisor = "%TMP5"
        return lines + [f'"stablehlo.{hname}"({a[0]}, {divisor}) : ({t[0]}, {t[1]}) -> {r}']
    return write


for _n, _l, _k, _t, _d, _h in _BINARY:
    writer = (_division_hlo(_h) if _n in ("div", "rem") else _binary_hlo(_h)) if _h else None
    op(_n, _binary_fn(_l), _k, EW if _h else "elementwise inplace control", tol=_t,
       discontinuous=_d, sample=same_type_operands(2), hlo=writer)
for _n in ("pow", "atan2", "rem", "nextafter"):
    OPS[_n].extra["no_lowp"] = True
OPS["nextafter"].only = ("float32", "float64")

_DIRECTIONS = ["EQ", "NE", "LT", "LE", "GT", "GE"]


def _compare_fn(p, x, y):
    jax, lax, jnp = _lax()
    return {"EQ": lax.eq, "NE": lax.ne, "LT": lax.lt, "LE": lax.le, "GT": lax.gt,
            "GE": lax.ge}[p["dir"]](x, y)


def _compare_hlo(p, a, t, r):
    k = elem(t[0])
    ctype = ("FLOAT" if k.startswith(("f", "bf")) else "UNSIGNED" if k.startswith("ui")
             or k == "i1" else "SIGNED" if k.startswith("i") else "FLOAT")
    extra = "" if k.startswith("complex") else f", compare_type = #stablehlo<comparison_type {ctype}>"
    return [f'"stablehlo.compare"({a[0]}, {a[1]}) {{comparison_direction = '
            f'#stablehlo<comparison_direction {p["dir"]}>{extra}}} : ({t[0]}, {t[1]}) -> {r}']


def _compare_sample(g, o):
    got = same_type_operands(2)(g, o)
    if got is None:
        return None
    complex_ = kind(g.value(got[0][0]).dtype) == COMPLEX
    return got[0], {"dir": g.choice(["EQ", "NE"] if complex_ else _DIRECTIONS)}


op("compare", _compare_fn, "FCIUB", EW, discontinuous=True, sample=_compare_sample, hlo=_compare_hlo)


def _select_sample(g, o):
    a = g.pick(o)
    if a is None:
        return None
    v = g.value(a)
    pred = g.pick_or_fresh(v.shape, "bool", None)
    return [pred, a, g.pick_or_fresh(v.shape, v.dtype, o)], {}


op("select", lambda p, c, x, y: _lax()[1].select(c, x, y), "FCIUB", EW, sample=_select_sample,
   hlo=lambda p, a, t, r: [f'"stablehlo.select"({", ".join(a)}) : ({", ".join(t)}) -> {r}'])
op("clamp", lambda p, lo, x, hi: _lax()[1].clamp(lo, x, hi), "FIU", EW,
   sample=same_type_operands(3),
   hlo=lambda p, a, t, r: [f'"stablehlo.clamp"({", ".join(a)}) : ({", ".join(t)}) -> {r}'])


def _convert_sample(g, o):
    a = g.pick(o)
    if a is None:
        return None
    src = g.value(a).dtype
    targets = [d for d in g.dtypes if d != src and not (kind(src) == COMPLEX and kind(d) != COMPLEX)]
    if not targets:
        return None
    to = g.choice(targets)
    if kind(src) == FLOAT and kind(to) in (SINT, UINT, BOOL) and not g.exact(a):
        return None  # float-to-int is discontinuous
    return [a], {"to": to}


def _convert_fn(p, x):
    jax, lax, jnp = _lax()
    from .program import dtype
    return lax.convert_element_type(x, dtype(p["to"]))


op("convert", _convert_fn, "FCIUB", EW, sample=_convert_sample,
   hlo=lambda p, a, t, r: [f'"stablehlo.convert"({a[0]}) : ({t[0]}) -> {r}'])


def _bitcast_sample(g, o):
    a = g.pick(o)
    if a is None:
        return None
    src = g.value(a).dtype
    from .program import dtype
    width = dtype(src).itemsize
    targets = [d for d in g.dtypes if d != src and dtype(d).itemsize == width
               and kind(d) not in (BOOL, COMPLEX)]
    # Reading a float's bits exposes NaN payloads, which implementations choose freely:
    # only inputs' bits are read.
    if not targets or (kind(src) == FLOAT and not g.is_input(a)):
        return None
    return [a], {"to": g.choice(targets)}


def _bitcast_fn(p, x):
    jax, lax, jnp = _lax()
    from .program import dtype
    return lax.bitcast_convert_type(x, dtype(p["to"]))


op("bitcast", _bitcast_fn, "FIU", EW, sample=_bitcast_sample, discontinuous=True,
   hlo=lambda p, a, t, r: [f'"stablehlo.bitcast_convert"({a[0]}) : ({t[0]}) -> {r}'])


def _reduce_precision_sample(g, o):
    a = g.pick(o)
    if a is None:
        return None
    return [a], {"exp": int(g.rng.integers(2, 9)), "man": int(g.rng.integers(1, 11))}


op("reduce_precision", lambda p, x: _lax()[1].reduce_precision(x, p["exp"], p["man"]), "F",
   "elementwise lowp hlo", sample=_reduce_precision_sample, tol="round",
   hlo=lambda p, a, t, r: [f'"stablehlo.reduce_precision"({a[0]}) {{exponent_bits = {p["exp"]} : i32, '
                           f'mantissa_bits = {p["man"]} : i32}} : ({t[0]}) -> {r}'])


def _int_pow_sample(g, o):
    a = g.pick(o)
    if a is None:
        return None
    low = kind(g.value(a).dtype) in (SINT, UINT)
    return [a], {"n": int(g.rng.integers(0 if low else -3, 6))}


op("integer_pow", lambda p, x: _lax()[1].integer_pow(x, p["n"]), "FCI",
   "elementwise inplace", sample=_int_pow_sample, tol="transcendental")


def _const_sample(g, o):
    a = g.pick(o)
    if a is None:
        return None
    k = kind(g.value(a).dtype)
    c = int(g.rng.integers(-3, 4)) if k in (SINT, FLOAT, COMPLEX) else int(g.rng.integers(0, 4))
    return [a], {"c": c, "op": g.choice(["add", "mul", "sub"])}


def _const_fn(p, x):
    jax, lax, jnp = _lax()
    c = jnp.asarray(p["c"]).astype(x.dtype)
    return {"add": lax.add, "mul": lax.mul, "sub": lax.sub}[p["op"]](x, jnp.broadcast_to(c, x.shape))


def _const_hlo(p, a, t, r):
    k = elem(t[0])
    v = (f"({p['c']}.0, 0.0)" if k.startswith("complex") else f"{p['c']}.0"
         if k.startswith(("f", "bf")) else str(p["c"]))
    name = {"add": "add", "mul": "multiply", "sub": "subtract"}[p["op"]]
    return [f"%TMP = stablehlo.constant dense<{v}> : {t[0]}",
            f'"stablehlo.{name}"({a[0]}, %TMP) : ({t[0]}, {t[0]}) -> {r}']


op("const_op", _const_fn, "FCIU", EW, sample=_const_sample, tol="round", hlo=_const_hlo)
