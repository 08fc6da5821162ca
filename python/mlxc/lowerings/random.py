"""Random numbers: stablehlo.rng_bit_generator's PHILOX, and stablehlo.rng (UNIFORM and
NORMAL) from ThreeFry bits.

`stablehlo-legalize-to-linalg` lowers rng_bit_generator itself, bit-identical to XLA
for THREE_FRY. Its PHILOX (and DEFAULT, which XLA's CPU compiler takes as PHILOX)
ignores the third word of a three-word state (key, counter low, counter high:
TensorFlow's stateless ops pass one) and drops the carry out of the counter's low
word, so PHILOX is expanded here, as XLA's RngBitGeneratorExpander does.
"""

from __future__ import annotations

import math

from .. import irutil
from .._mlir import ir
from . import lowering
from .from_text import replace_with_text
from .text import Emitter, i64_array, tensor_type

# Philox 4x32-10 constants (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
_MUL_A, _MUL_B = 0xD2511F53, 0xCD9E8D57
_KEY_STEP_A, _KEY_STEP_B = 0x9E3779B9, 0xBB67AE85
_ROUNDS = 10


@lowering("stablehlo.rng_bit_generator")
def rng_bit_generator(op) -> None:
    algorithm = str(op.attributes["rng_algorithm"]).rstrip(">").split()[-1]
    words = ir.RankedTensorType(op.operands[0].type).shape[0]
    out = ir.RankedTensorType(op.results[1].type)
    shape, elem = list(out.shape), str(out.element_type)
    if math.prod(shape) == 0:
        # Nothing drawn, the counter unmoved. (Upstream aborts the process on an empty
        # THREE_FRY output and cannot slice an empty PHILOX one.)
        e = Emitter(state=f"tensor<{words}xui64>")
        e.line(f"return %state, {e.constant('', tensor_type(shape, elem))} : "
               f"tensor<{words}xui64>, {tensor_type(shape, elem)}")
        replace_with_text(op, e.text(), ["state"])
        return
    if algorithm == "THREE_FRY":
        return  # upstream's lowering is bit-identical to XLA's
    # XLA on the CPU takes DEFAULT to be PHILOX.
    _philox(op, words, shape, elem, ir.IntegerType(out.element_type).width)


def _philox(op, words: int, shape: list, elem: str, width: int) -> None:
    # The state is [key, counter low, counter high], or [key, counter low] with the
    # key doubling as the counter's high word (XLA's RngBitGeneratorExpander).
    state_t = f"tensor<{words}xui64>"
    e = Emitter(state=state_t)
    count = math.prod(shape)
    needed = count * 2 if width == 64 else count  # 32-bit words
    blocks = -(-needed // 4)  # each Philox call makes four words
    vec64, vec32 = tensor_type([blocks], "ui64"), tensor_type([blocks], "ui32")
    u64 = "tensor<ui64>"

    def word(i: int) -> str:
        piece = e.op("stablehlo.slice", ["%state"], "tensor<1xui64>",
                     f"start_indices = {i64_array([i])}, limit_indices = {i64_array([i + 1])}, "
                     f"strides = {i64_array([1])}")
        return e.op("stablehlo.reshape", [piece], u64)

    def splat(value: str, t: str) -> str:
        return e.op("stablehlo.broadcast_in_dim", [value], t, "broadcast_dimensions = array<i64>")

    def low32(x: str, t: str) -> str:
        return e.op("stablehlo.convert", [x], t)

    def high32(x: str, t64: str, t32: str) -> str:
        return low32(e.op("stablehlo.shift_right_logical", [x, e.constant("32", t64)], t64), t32)

    def add_u128(lo: str, hi: str, delta: str, t: str) -> tuple[str, str]:
        new_lo = e.op("stablehlo.add", [lo, delta], t)
        carried = e.op("stablehlo.compare", [new_lo, lo], t.replace("ui64", "i1"),
                       "comparison_direction = #stablehlo<comparison_direction LT>, "
                       "compare_type = #stablehlo<comparison_type UNSIGNED>")
        bumped = e.op("stablehlo.add", [hi, e.constant("1", t)], t)
        return new_lo, e.op("stablehlo.select", [carried, bumped, hi], t)

    key, counter_lo = word(0), word(1)
    counter_hi = word(2) if words == 3 else key
    # Counters counter + 0 ... counter + blocks - 1, as 128-bit integers.
    index = e.op("stablehlo.iota", [], vec64, "iota_dimension = 0 : i64")
    lo, hi = add_u128(splat(counter_lo, vec64), splat(counter_hi, vec64), index, vec64)
    x = [low32(lo, vec32), high32(lo, vec64, vec32), low32(hi, vec32), high32(hi, vec64, vec32)]
    k = [low32(key, "tensor<ui32>"), high32(key, u64, "tensor<ui32>")]
    k = [splat(k[0], vec32), splat(k[1], vec32)]
    for _ in range(_ROUNDS):
        products = []
        for factor, operand in ((_MUL_A, x[0]), (_MUL_B, x[2])):
            wide = e.op("stablehlo.multiply", [e.op("stablehlo.convert", [operand], vec64),
                                               e.constant(str(factor), vec64)], vec64)
            products.append((high32(wide, vec64, vec32), low32(wide, vec32)))
        (hi_a, lo_a), (hi_b, lo_b) = products
        x = [e.op("stablehlo.xor", [e.op("stablehlo.xor", [hi_b, x[1]], vec32), k[0]], vec32),
             lo_b,
             e.op("stablehlo.xor", [e.op("stablehlo.xor", [hi_a, x[3]], vec32), k[1]], vec32),
             lo_a]
        k = [e.op("stablehlo.add", [k[0], e.constant(str(_KEY_STEP_A), vec32)], vec32),
             e.op("stablehlo.add", [k[1], e.constant(str(_KEY_STEP_B), vec32)], vec32)]

    # Block i gives words 4i ... 4i+3 (two 64-bit numbers: low word first).
    if width == 64:
        x = [e.op("stablehlo.or", [e.op("stablehlo.convert", [x[lo_i]], vec64), e.op(
                "stablehlo.shift_left", [e.op("stablehlo.convert", [x[lo_i + 1]], vec64),
                                         e.constant("32", vec64)], vec64)], vec64)
             for lo_i in (0, 2)]
    lane = "ui64" if width == 64 else "ui32"
    columns = [e.op("stablehlo.reshape", [v], tensor_type([blocks, 1], lane)) for v in x]
    table = e.op("stablehlo.concatenate", columns, tensor_type([blocks, len(x)], lane),
                 "dimension = 1 : i64")
    flat = e.op("stablehlo.reshape", [table], tensor_type([blocks * len(x)], lane))
    flat = e.op("stablehlo.slice", [flat], tensor_type([count], lane),
                f"start_indices = {i64_array([0])}, limit_indices = {i64_array([count])}, "
                f"strides = {i64_array([1])}")
    unsigned = elem if elem.startswith("ui") else "u" + elem
    if unsigned != lane:  # narrow outputs keep the low bits of 32-bit words
        flat = e.op("stablehlo.convert", [flat], tensor_type([count], unsigned))
    if elem != unsigned:
        flat = e.op("stablehlo.bitcast_convert", [flat], tensor_type([count], elem))
    bits = e.op("stablehlo.reshape", [flat], tensor_type(shape, elem))

    new_lo, new_hi = add_u128(counter_lo, counter_hi, e.constant(str(blocks), u64), u64)
    kept = (key, new_lo, new_hi)[:words]
    parts = [e.op("stablehlo.reshape", [v], "tensor<1xui64>") for v in kept]
    state = e.op("stablehlo.concatenate", parts, state_t, "dimension = 0 : i64")
    e.line(f"return {state}, {bits} : {state_t}, {tensor_type(shape, elem)}")
    replace_with_text(op, e.text(), ["state"])


@lowering("stablehlo.rng")
def rng(op) -> None:
    # Upstream lowers UNIFORM (floats only) to a linear congruence of the element
    # index: evenly spread, but neighbours and halves are strongly correlated (0.85),
    # and it has no NORMAL. Both distributions are built here from ThreeFry bits
    # instead. As upstream, mlxc keeps no state between calls: each rng op yields the
    # same numbers on every call, and distinct ops in a program distinct streams.
    distribution = str(op.attributes["rng_distribution"]).rstrip(">").split()[-1]
    out = ir.RankedTensorType(op.results[0].type)
    shape, elem = list(out.shape), str(out.element_type)
    e = Emitter(a=str(op.operands[0].type), b=str(op.operands[1].type),
                shape=str(op.operands[2].type))
    t = tensor_type(shape, elem)
    if math.prod(shape) == 0:
        e.line(f"return {e.constant('', t)} : {t}")
        replace_with_text(op, e.text(), ["a", "b", "shape"])
        return
    a = e.op("stablehlo.broadcast_in_dim", ["%a"], t, "broadcast_dimensions = array<i64>")
    b = e.op("stablehlo.broadcast_in_dim", ["%b"], t, "broadcast_dimensions = array<i64>")
    seed = _index_among_rng_ops(op)
    if elem.startswith(("i", "ui")):
        if distribution == "NORMAL":
            return  # not a valid program: the verifier rejects NORMAL integers
        result = _uniform_int(e, shape, elem, a, b, seed)
    elif distribution == "UNIFORM":
        u = _unit_floats(e, shape, elem, seed)
        span = e.op("stablehlo.subtract", [b, a], t)
        result = e.op("stablehlo.add", [e.op("stablehlo.multiply", [u, span], t), a], t)
    else:
        result = _normal(e, shape, elem, a, b, seed)
    e.line(f"return {result} : {t}")
    replace_with_text(op, e.text(), ["a", "b", "shape"])


def _index_among_rng_ops(op) -> int:
    # The mlxc-lower-extra-ops walk rewrites later ops first, so the rng ops before
    # this one are all still in place: their count is a stable, distinct seed.
    root = op.operation
    while root.parent is not None:
        root = root.parent
    index = 0
    for other in irutil.walk(root):
        if other == op.operation:
            return index
        if other.name == "stablehlo.rng":
            index += 1
    return index


def _bits(e: Emitter, shape: list, lane: str, seed: int) -> str:
    # ThreeFry with a fixed key per op (the golden ratio, so that seed 0 is not a zero
    # key), which upstream's rng_bit_generator lowering expands.
    state = e.constant(f"[{0x9E3779B97F4A7C15 ^ seed}, 0]", "tensor<2xui64>")
    e.line(f"%rng_state{seed}, %rng_bits{seed} = \"stablehlo.rng_bit_generator\"({state}) "
           "{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : "
           f"(tensor<2xui64>) -> (tensor<2xui64>, {tensor_type(shape, lane)})",
           **{f"rng_bits{seed}": tensor_type(shape, lane)})
    return f"%rng_bits{seed}"


def _unit_floats(e: Emitter, shape: list, elem: str, seed: int) -> str:
    """Uniform in [0, 1): the top mantissa-width bits of random words, times 2^-m, as
    XLA converts bits to floats; every value is exact in `elem`, so none rounds to 1."""
    mantissa = {"f64": 52, "f32": 23, "f16": 10, "bf16": 7}[elem]
    lane = "ui64" if elem == "f64" else "ui32"
    width = 64 if elem == "f64" else 32
    lane_t = tensor_type(shape, lane)
    bits = _bits(e, shape, lane, seed)
    top = e.op("stablehlo.shift_right_logical", [bits, e.constant(str(width - mantissa), lane_t)],
               lane_t)
    t = tensor_type(shape, elem)
    return e.op("stablehlo.multiply", [e.op("stablehlo.convert", [top], t),
                                       e.constant(repr(2.0 ** -mantissa), t)], t)


def _normal(e: Emitter, shape: list, elem: str, mu: str, sigma: str, seed: int) -> str:
    # Box-Muller in f32 (f64 for f64): z = sqrt(-2 ln u1) cos(2 pi u2) with u1 in (0, 1].
    work = "f64" if elem == "f64" else "f32"
    wt = tensor_type(shape, work)
    u1 = e.op("stablehlo.subtract", [e.constant("1.0", wt), _unit_floats(e, shape, work, seed)], wt)
    u2 = _unit_floats(e, shape, work, seed + (1 << 32))
    radius = e.op("stablehlo.sqrt", [e.op("stablehlo.multiply", [
        e.constant("-2.0", wt), e.op("stablehlo.log", [u1], wt)], wt)], wt)
    angle = e.op("stablehlo.multiply", [e.constant(repr(2 * math.pi), wt), u2], wt)
    z = e.op("stablehlo.multiply", [radius, e.op("stablehlo.cosine", [angle], wt)], wt)
    t = tensor_type(shape, elem)
    if work != elem:
        z = e.op("stablehlo.convert", [z], t)
    return e.op("stablehlo.add", [e.op("stablehlo.multiply", [z, sigma], t), mu], t)


def _uniform_int(e: Emitter, shape: list, elem: str, low: str, high: str, seed: int) -> str:
    """Uniform in [low, high): low + (bits mod (high - low)), as XLA, the range and the
    sum taken unsigned so that no step overflows."""
    width = int(elem.lstrip("ui"))
    unsigned = f"ui{width}"
    lane = "ui64" if width == 64 else "ui32"
    ut, t, lt = tensor_type(shape, unsigned), tensor_type(shape, elem), tensor_type(shape, lane)

    def as_unsigned(x: str) -> str:
        return x if elem == unsigned else e.op("stablehlo.bitcast_convert", [x], ut)

    span = e.op("stablehlo.subtract", [as_unsigned(high), as_unsigned(low)], ut)
    if lane != unsigned:
        # The remainder of a 32-bit word: far less bias toward small values than the
        # remainder of an 8- or 16-bit one.
        span = e.op("stablehlo.convert", [span], lt)
    # An empty range (high <= low) gives low, not a remainder by zero, which traps.
    empty = e.op("stablehlo.compare", [span, e.constant("0", lt)], tensor_type(shape, "i1"),
                 "comparison_direction = #stablehlo<comparison_direction EQ>")
    span = e.op("stablehlo.select", [empty, e.constant("1", lt), span], lt)
    offset = e.op("stablehlo.remainder", [_bits(e, shape, lane, seed), span], lt)
    if lane != unsigned:
        offset = e.op("stablehlo.convert", [offset], ut)
    result = e.op("stablehlo.add", [as_unsigned(low), offset], ut)
    return result if elem == unsigned else e.op("stablehlo.bitcast_convert", [result], t)
