"""mlxc-expand-small-float-casts: extf/truncf of fp8, fp6 and fp4 types as integer code.

Arithmetic on the small float types (f8E4M3FN, f8E5M2, ..., f6E2M3FN, f4E2M1FN) runs
in f32 (`arith-emulate-unsupported-floats` extends the operands and truncates the
result), but LLVM has no conversions for them, so the `arith.extf`/`arith.truncf` left
behind would never lower. We expand them:

- extf: a table of the 2^bits values (from ml_dtypes) in the result's type (f32 for
  f64), indexed by the operand's bits.
- truncf: round to nearest even at the target's precision, computed exactly in the
  source type (f32 for an f16/bf16 source, extended exactly; the rounding unit is a
  power of two), then encode sign, exponent and
  mantissa. Overflow, infinities and NaN give what ml_dtypes gives (NaN for
  f8E4M3FN, infinity for f8E5M2, the largest value for the finite-only fp6/fp4).

f8E8M0FNU (powers of two only, no sign, no zero) has its own rounding. Vectors (from
the CPU schedules) convert one element at a time. Runs after
arith-emulate-unsupported-floats.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np

from .. import irutil
from .._mlir import ir
from ..errors import CompileError
from . import PythonPass

_FORMATS = {
    "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E4M3": ml_dtypes.float8_e4m3, "f8E3M4": ml_dtypes.float8_e3m4,
    "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
    "f8E4M3B11FNUZ": ml_dtypes.float8_e4m3b11fnuz, "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
    "f6E2M3FN": ml_dtypes.float6_e2m3fn, "f6E3M2FN": ml_dtypes.float6_e3m2fn,
    "f4E2M1FN": ml_dtypes.float4_e2m1fn,
}
# arith.cmpf / arith.cmpi predicates.
_OGT, _OGE, _UNO = 2, 3, 14
_EQ, _SGT = 0, 4


class _Format:
    def __init__(self, name: str):
        self.name = name
        self.dtype = np.dtype(_FORMATS[name])
        info = ml_dtypes.finfo(self.dtype)
        self.bits, self.mantissa, self.emin = info.bits, info.nmant, info.minexp
        self.bias = 1 - self.emin
        self.max = float(info.max)

    def encode(self, value: float) -> int:
        """ml_dtypes' bits for `value` (for NaN, infinities and overflow)."""
        return int(np.array(value, np.float64).astype(self.dtype).view(np.uint8)) & ((1 << self.bits) - 1)

    def table(self, out: str) -> np.ndarray:
        """Every value of the format in `out` (f16, bf16 or f32), rounded as ml_dtypes does."""
        codes = np.arange(1 << self.bits, dtype=np.uint8)
        with np.errstate(over="ignore"):
            return codes.view(self.dtype).astype(np.float32).astype(_TABLE_TYPES[out])


# The types a table of values is kept in (f64 results are extended from the f32 table).
_TABLE_TYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}


class _Builder:
    def __init__(self):
        self.cache: dict = {}

    @staticmethod
    def op(op_name: str, t: ir.Type, *operands, **attrs) -> ir.Value:
        return ir.Operation.create(op_name, results=[t], operands=list(operands),
                                   attributes=attrs).result

    def const(self, t: ir.Type, value) -> ir.Value:
        if isinstance(t, ir.IntegerType):
            width = ir.IntegerType(t).width
            value = int(value) & ((1 << width) - 1)
            if value >= 1 << (width - 1):
                value -= 1 << width
            attr = ir.IntegerAttr.get(t, value)
        else:
            attr = ir.FloatAttr.get(t, float(value))
        return self.op("arith.constant", t, value=attr)

    def cmpf(self, predicate: int, a, b) -> ir.Value:
        return self.op("arith.cmpf", ir.IntegerType.get_signless(1), a, b,
                       predicate=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), predicate))

    def cmpi(self, predicate: int, a, b) -> ir.Value:
        return self.op("arith.cmpi", ir.IntegerType.get_signless(1), a, b,
                       predicate=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), predicate))

    def select(self, c, a, b) -> ir.Value:
        return self.op("arith.select", a.type, c, a, b)


def _table_global(module, fmt: _Format, out: ir.Type) -> str:
    name = f"__mlxc_{fmt.name}_{out}_values"
    existing = {ir.StringAttr(op.attributes["sym_name"]).value
                for op in irutil.top_level_ops(module) if "sym_name" in op.attributes}
    if name not in existing:
        mtype = ir.MemRefType.get([1 << fmt.bits], out)
        table = fmt.table(str(out))
        bits = table.view(np.uint16) if table.dtype.itemsize == 2 else table  # (bf16: as bits)
        values = ir.DenseElementsAttr.get(bits, type=out, shape=[1 << fmt.bits])
        body = module.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
            ir.Operation.create("memref.global", attributes={
                "sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("private"),
                "type": ir.TypeAttr.get(mtype), "initial_value": values,
                "constant": ir.UnitAttr.get()})
    return name


def _extf(module, x: ir.Value, out: ir.Type, fmt: _Format, b: _Builder) -> ir.Value:
    """The value of `x`'s bits in a table of the format's values, kept in `out`'s type
    (f64 results extend the f32 table: exact)."""
    kept = ir.F32Type.get() if str(out) == "f64" else out
    index = ir.IndexType.get()
    name = _table_global(module, fmt, kept)
    mtype = ir.MemRefType.get([1 << fmt.bits], kept)
    code = b.op("arith.bitcast", ir.IntegerType.get_signless(fmt.bits), x)
    wide = b.op("arith.extui", ir.IntegerType.get_signless(32), code)
    table = b.op("memref.get_global", mtype, name=ir.FlatSymbolRefAttr.get(name))
    value = ir.Operation.create("memref.load", results=[kept],
                                operands=[table, b.op("arith.index_cast", index, wide)]).result
    return value if kept == out else b.op("arith.extf", out, value)


def _truncf(x: ir.Value, out: ir.Type, fmt: _Format, b: _Builder) -> ir.Value:
    src = x.type
    p, bias_src, width = (23, 127, 32) if str(src) == "f32" else (52, 1023, 64)
    i = ir.IntegerType.get_signless(width)
    small = ir.IntegerType.get_signless(fmt.bits)
    m = fmt.mantissa
    a = b.op("math.absf", src, x)
    a_bits = b.op("arith.bitcast", i, a)
    exponent = b.op("arith.subi", i, b.op("arith.shrui", i, a_bits, b.const(i, p)),
                    b.const(i, bias_src))
    exponent = b.op("arith.maxsi", i, exponent, b.const(i, fmt.emin))
    # The rounding unit 2^(exponent - m), built from its bits; a normal number in the
    # source type for every format here.
    ulp_bits = b.op("arith.shli", i, b.op("arith.addi", i, exponent, b.const(i, bias_src - m)),
                    b.const(i, p))
    ulp = b.op("arith.bitcast", src, ulp_bits)
    r = b.op("arith.mulf", src, b.op("math.roundeven", src, b.op("arith.divf", src, a, ulp)), ulp)
    # Encode r: normal numbers rebias the exponent and keep the top m mantissa bits;
    # subnormals are r / 2^(emin - m), an integer below 2^m.
    r_bits = b.op("arith.bitcast", i, r)
    r_exp = b.op("arith.shrui", i, r_bits, b.const(i, p))
    r_man = b.op("arith.andi", i, r_bits, b.const(i, (1 << p) - 1))
    normal = b.op("arith.ori", i,
                  b.op("arith.shli", i, b.op("arith.addi", i, r_exp, b.const(i, fmt.bias - bias_src)),
                       b.const(i, m)),
                  b.op("arith.shrui", i, r_man, b.const(i, p - m)))
    sub_scale = b.const(src, 2.0 ** (m - fmt.emin))
    subnormal = b.op("arith.fptoui", i, b.op("arith.mulf", src, r, sub_scale))
    is_normal = b.cmpf(_OGE, r, b.const(src, 2.0 ** fmt.emin))
    magnitude = b.op("arith.trunci", small, b.select(is_normal, normal, subnormal))
    negative = b.op("arith.trunci", ir.IntegerType.get_signless(1),
                    b.op("arith.shrui", i, b.op("arith.bitcast", i, x), b.const(i, width - 1)))
    sign_bit = b.const(small, 1 << (fmt.bits - 1))
    signed = b.op("arith.ori", small, magnitude, sign_bit)
    if fmt.encode(-0.0) == 0:  # no negative zero (the *FNUZ types): -0 is +0
        signed = b.select(b.cmpi(_EQ, magnitude, b.const(small, 0)), magnitude, signed)
    result = b.select(negative, signed, magnitude)

    def special(condition, positive: float, negative_value: float):
        return b.select(condition, b.select(negative, b.const(small, fmt.encode(negative_value)),
                                            b.const(small, fmt.encode(positive))), result)

    result = special(b.cmpf(_OGT, r, b.const(src, fmt.max)), fmt.max * 4, -fmt.max * 4)
    result = special(b.cmpf(_OGE, a, b.const(src, float("inf"))), float("inf"), float("-inf"))
    result = special(b.cmpf(_UNO, x, x), float("nan"), -float("nan"))
    return b.op("arith.bitcast", out, result)


def _truncf_e8m0(x: ir.Value, out: ir.Type, b: _Builder) -> ir.Value:
    """f8E8M0FNU holds 2^-127 .. 2^127 only (code = exponent + 127, 0xFF is NaN): round
    to the nearest power of two on the linear scale (1.5 * 2^k goes up), tiny positive
    values to 2^-127, and zero, negatives, overflow, infinities and NaN to NaN."""
    src = x.type
    p, bias_src, width = (23, 127, 32) if str(src) == "f32" else (52, 1023, 64)
    i = ir.IntegerType.get_signless(width)
    i8 = ir.IntegerType.get_signless(8)
    bits = b.op("arith.bitcast", i, x)
    exponent = b.op("arith.subi", i, b.op("arith.shrui", i, bits, b.const(i, p)), b.const(i, bias_src))
    # Below the source type's normal range (f32 only) exponent bits say nothing: compare.
    floor = -126 if width == 32 else -1022
    exponent = b.op("arith.maxsi", i, exponent, b.const(i, max(floor, -127)))
    unit = b.op("arith.bitcast", src, b.op("arith.shli", i, b.op("arith.addi", i, exponent,
                                                                   b.const(i, bias_src)), b.const(i, p)))
    up = b.op("arith.fptosi", i, b.op("math.roundeven", src, b.op("arith.divf", src, x, unit)))
    code = b.op("arith.addi", i, b.op("arith.addi", i, exponent, b.const(i, 127)),
                b.op("arith.subi", i, up, b.const(i, 1)))
    code = b.op("arith.maxsi", i, code, b.const(i, 0))
    if width == 32:  # [2^-127, 2^-126): 2^-127 below 1.5 * 2^-127, else 2^-126
        tiny = b.select(b.cmpf(_OGE, x, b.const(src, 1.5 * 2.0 ** -127)), b.const(i, 1), b.const(i, 0))
        code = b.select(b.cmpf(_OGE, x, b.const(src, 2.0 ** -126)), code, tiny)
    nan = b.const(i, 0xFF)
    code = b.select(b.cmpi(_SGT, code, b.const(i, 254)), nan, code)
    # Not (x > 0 and x finite): zero, negatives, infinities and NaN.
    bad = b.op("arith.ori", ir.IntegerType.get_signless(1),
               b.op("arith.xori", ir.IntegerType.get_signless(1), b.cmpf(_OGT, x, b.const(src, 0.0)),
                    b.const(ir.IntegerType.get_signless(1), 1)),
               b.cmpf(_OGE, x, b.const(src, float("inf"))))
    code = b.select(bad, nan, code)
    return b.op("arith.bitcast", out, b.op("arith.trunci", i8, code))


def _convert(module, op, fmt: _Format, b: _Builder) -> ir.Value:
    """The expansion of `op`; a vector (left by vectorization) one element at a time."""
    x, out = op.operands[0], op.result.type
    scalar = _extf if op.name == "arith.extf" else _truncf

    def one(value, out_element):
        if scalar is _extf:
            return _extf(module, value, out_element, fmt, b)
        if str(value.type) in ("f16", "bf16"):  # exactly in f32 first: one rounding
            value = b.op("arith.extf", ir.F32Type.get(), value)
        if fmt.mantissa == 0:
            return _truncf_e8m0(value, out_element, b)
        return _truncf(value, out_element, fmt, b)

    if not isinstance(out, ir.VectorType):
        return one(x, out)
    vtype = ir.VectorType(out)
    in_element = irutil.element_type(x.type)
    result = b.op("ub.poison", vtype, value=ir.Attribute.parse("#ub.poison"))
    for index in itertools.product(*(range(d) for d in vtype.shape)):
        position = ir.DenseI64ArrayAttr.get(list(index))
        item = b.op("vector.extract", in_element, x, static_position=position)
        result = ir.Operation.create("vector.insert", results=[vtype],
                                     operands=[one(item, vtype.element_type), result],
                                     attributes={"static_position": position}).result
    return result


def run(module) -> None:
    b = _Builder()
    for op in irutil.ops_named(module, "arith.extf", "arith.truncf"):
        narrow, wide = ((op.operands[0], op.result) if op.name == "arith.extf"
                        else (op.result, op.operands[0]))
        small_t, other_t = irutil.element_type(narrow.type), irutil.element_type(wide.type)
        if str(small_t) not in _FORMATS:
            continue
        if str(other_t) not in ("f16", "bf16", "f32", "f64"):
            raise CompileError.at(op, f"mlxc-expand-small-float-casts: {op.name} between "
                                      f"{small_t} and {other_t} is not supported")
        fmt = _Format(str(small_t))
        irutil.replace_op(op, lambda: _convert(module, op, fmt, b))


PASS = PythonPass(
    argument="mlxc-expand-small-float-casts",
    summary="extf/truncf of fp8/fp6/fp4 types as table lookups and integer rounding code",
    run=run,
)
