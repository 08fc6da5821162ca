"""Tiling and vectorization schedules for the CPU, chosen per linalg op kind and shape.

A schedule is a list of tile-size levels (one size per loop of the op, 0 = not
tiled) followed by vectorization of the innermost tile. `mlxc-apply-cpu-schedules`
turns the schedules into a transform-dialect script and applies it on tensors,
before bufferization, so that the hoisting of loop-invariant reads and writes (the
matmul accumulator kept in registers across the reduction loop) works on SSA values.

The sizes target AVX-512 (16 f32 per register, 32 registers):
- contractions: an 8x32 register tile of the result (16 accumulator registers), the
  reduction one step at a time as broadcast + FMA; around it a 64x256x256 cache tile,
  so that a 256x256 block of the right-hand side (256 KiB) stays in L2;
- convolutions: tiled to one output row, one filter tap and 8 input channels, then
  decomposed to a 1-D convolution that the vectorizer handles: 8 output pixels x 32
  output channels accumulate in registers across the taps and channels (a whole
  filter row and all channels unrolled made LLVM take seconds);
- reductions along the contiguous dimension (row sums and maxima, full reductions):
  each row tiled to 1, then the reduction split into 64-element chunks combined
  lane by lane into a 64-element accumulator (four AVX-512 registers: four
  independent dependency chains) kept in registers across the whole reduction; one
  horizontal reduction per row at the end instead of one per chunk;
- transposes (an op reading along one loop and writing along another): 8x8 tiles
  (other sides where a dimension does not divide by 8), transposed in registers, so
  that reads and writes both run along rows;
- everything else (elementwise, broadcasts, column reductions, fills): every loop
  tiled to 1 except the one along the contiguous dimension, which becomes a vector of
  up to 64 elements (a column reduction then keeps its vector of partial sums in
  registers across the rows).

Outside contractions (whose cache tiles are the threads'), the outermost loop that a
schedule tiles and whose tiles are independent (rows, images, column blocks) is an
`scf.forall`: `mlxc-parallelize-tile-loops` runs it on the thread pool when the op is
large enough, and it is a plain loop otherwise.

Ops whose shape or body does not fit a schedule stay scalar loops, which is correct,
only slower.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

from ..._mlir import ir
from . import library_calls

VECTOR = 64        # elements per vector of an elementwise or reduction op
REG_M, REG_N = 8, 32
CACHE_M, CACHE_N, CACHE_K = 64, 256, 256
MAX_VECTOR = 1024   # a longer innermost dim with no good divisor is not vectorized
COLUMN_VECTOR = 256  # accumulator lanes of a column reduction: 16 of the 32 registers
# Transpose tiles: 8 per side where the extent divides by 8 (an 8x8 f32 tile is one
# 64-lane shuffle, which LLVM lowers to few permutes and compiles fast; 16x16 tiles
# took 64 two-source shuffles and a quarter of a decoder's LLVM time). A side that
# does not divide by 8 is tiled whole up to ODD_TILE elements (31, 12: no partial
# tiles), else by 4 where it divides; the tile must hold MIN_TRANSPOSE_TILE elements.
TRANSPOSE_TILE = 8
ODD_TILE = 32
MIN_TRANSPOSE_TILE = 32
MIN_ACCUMULATOR = 8  # a reduction with no chunk size between this and VECTOR keeps one chunk per row

# Combiners with a neutral element (what tile_reduction_using_for fills the
# accumulator with): a body ending in one of these, fed by the output element, can
# be reduced lane by lane.
_COMBINERS = ("arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf", "arith.maxnumf",
              "arith.minnumf", "arith.addi", "arith.muli", "arith.ori", "arith.andi",
              "arith.xori", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui")

# Named ops with a schedule of their own; mlxc-apply-cpu-schedules turns every other
# named op into a linalg.generic first.
NAMED = ("linalg.generic", "linalg.fill", "linalg.matmul", "linalg.batch_matmul",
         "linalg.conv_2d_nhwc_hwcf", "linalg.conv_1d_nwc_wcf")

# Loops of the named ops above (generics and fills read theirs from the op).
_NAMED_ITERATORS = {
    "linalg.matmul": ["parallel"] * 2 + ["reduction"],
    "linalg.batch_matmul": ["parallel"] * 3 + ["reduction"],
    "linalg.conv_2d_nhwc_hwcf": ["parallel"] * 4 + ["reduction"] * 3,
    "linalg.conv_1d_nwc_wcf": ["parallel"] * 3 + ["reduction"] * 2,
}
# A contraction with no schedule is still vectorized whole by mlxc-apply-cpu-schedules:
# with an operand above this many elements it is tiled to single elements instead (an
# int8 matmul of 128x256x256 became one 8M-element vector, and LLVM never finished).
MAX_WHOLE_VECTOR = 4096


@dataclass
class Schedule:
    kind: str                   # contraction, convolution, elementwise
    levels: list[list[int]]     # tile sizes per loop, outermost level first
    decompose: bool = False     # 2-D convolution to 1-D after tiling
    parallel_levels: int = 0    # the first levels tile with scf.forall (independent tiles)
    # After the levels: tile_reduction_using_for sizes (a lane-wise accumulator of
    # that shape carried across the reduction loops), or None.
    reduction: Optional[list[int]] = None

    def describe(self) -> str:
        levels = self.levels + ([self.reduction] if self.reduction else [])
        return f"{self.kind} tiles {' -> '.join(str(l) for l in levels)}"


def fit(size: int, want: int) -> int:
    """The largest tile size <= want that divides size: tiles stay full, vectors static."""
    for t in range(min(size, want), 0, -1):
        if size % t == 0:
            return t
    return 1


def vector_lanes(size: int, want: int = VECTOR) -> int:
    """Lanes of a vector along a dimension of `size`: a divisor (full tiles, static
    vectors) that fills whole registers when one exists (1000 -> 40 = 2.5 AVX-512
    registers rather than 50 = 3 registers and 2 lanes), else `fit`."""
    for multiple in (16, 8):
        for t in range(min(size, want) // multiple * multiple, 0, -multiple):
            if size % t == 0:
                return t
    return fit(size, want)


def _static_shape(t: ir.Type) -> Optional[list[int]]:
    if not isinstance(t, ir.RankedTensorType):
        return [] if not isinstance(t, ir.ShapedType) else None
    if not t.has_static_shape:
        return None
    return list(t.shape)


def _body_ok(op) -> bool:
    # Gathers (tensor.extract in the body) are left to the elementwise schedule.
    for block in op.regions[0].blocks:
        for inner in block.operations:
            if inner.name in ("tensor.extract",) or len(inner.regions):
                return False
    return True


def _generic_ranges(op) -> Optional[list[int]]:
    """Loop ranges of a linalg.generic from its indexing maps and operand shapes."""
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    ranges: list[Optional[int]] = [None] * maps[0].n_dims
    for operand, amap in zip(op.operands, maps):
        shape = _static_shape(operand.type)
        if shape is None:
            return None
        for size, expr in zip(shape, amap.results):
            if not isinstance(expr, (ir.AffineDimExpr, ir.AffineConstantExpr)):
                # e.g. a reversal (d0, 2 - d1): its tiles would not be static slices
                return None
            if isinstance(expr, ir.AffineDimExpr):
                ranges[expr.position] = size
    if any(r is None for r in ranges):
        return None
    return ranges


def _is_float(t: ir.Type) -> bool:
    et = t.element_type if isinstance(t, ir.ShapedType) else t
    return isinstance(et, (ir.F32Type, ir.F64Type))


def _contractible(t: ir.Type) -> bool:
    # Integer products (int8 operands widened to an int32 result in the body) take the
    # same register tile as f32: as loops an int8 matmul ran 20x slower than XLA.
    et = t.element_type if isinstance(t, ir.ShapedType) else t
    if isinstance(et, ir.IntegerType):
        return et.width in (8, 16, 32)
    return _is_float(t)


def has_sub_byte(op) -> bool:
    """Whether the op reads or writes elements narrower than a byte (i1, i4, f4, ...)."""
    for t in [v.type for v in op.operands] + [r.type for r in op.results]:
        et = t.element_type if isinstance(t, ir.ShapedType) else None
        if isinstance(et, (ir.IntegerType, ir.FloatType)) and et.width < 8:
            return True
    return False


def _sub_byte_along(op, dim: int) -> bool:
    """Whether a vector along loop `dim` would load or store several elements narrower
    than a byte: an operand of such a type whose indexing map uses `dim`. A mask read
    once per vector (its map without `dim`) is a single element, broadcast."""
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    for operand, amap in zip(op.operands, maps):
        t = operand.type
        et = t.element_type if isinstance(t, ir.ShapedType) else None
        if isinstance(et, (ir.IntegerType, ir.FloatType)) and et.width < 8 and any(
                isinstance(e, ir.AffineDimExpr) and e.position == dim for e in amap.results):
            return True
    return False


def _vector_dim(op, ranges: list[int]) -> int:
    """The loop to vectorize: the one running along the contiguous (last) dimension of
    the biggest operand, so vector loads are contiguous. For a sum over rows that is
    the parallel loop, not the reduction (which would read a column: a gather)."""
    if op.name != "linalg.generic":
        return len(ranges) - 1
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    best, best_size = len(ranges) - 1, -1
    for operand, amap in zip(op.operands, maps):
        shape = _static_shape(operand.type) or []
        size = 1
        for d in shape:
            size *= d
        if shape and amap.results and size > best_size:
            last = amap.results[len(shape) - 1]
            if isinstance(last, ir.AffineDimExpr) and shape[-1] > 1:
                best, best_size = last.position, size
    return best


def _transposed_loop(amap, t, dim: int) -> Optional[int]:
    """The loop along an operand's contiguous (last) dimension, if that is a plain loop
    of more than one element other than `dim`, and the operand is read along `dim` too
    (one that is not, `max[:, None]` in `x - max[:, None]`, is a broadcast along the
    vector, not a transpose)."""
    shape = _static_shape(t) or []
    if not amap.results or not shape or shape[-1] == 1:
        return None
    last = amap.results[len(amap.results) - 1]
    if not isinstance(last, ir.AffineDimExpr) or last.position == dim:
        return None
    along = any(isinstance(e, ir.AffineDimExpr) and e.position == dim for e in amap.results)
    return last.position if along else None


def _transposed_dim(op, ranges: list[int], dim: int) -> Optional[int]:
    """For an op that reads or writes one operand along another loop than `dim` (a
    transpose, or an elementwise op with a transposed operand: `x + y.T`), the loop
    along that operand's contiguous dimension, when both loops can be tiled by
    _transpose_tile and every element is 32 bits (one register holds a tile row).
    The result's loop first; else the first input's that differs."""
    if op.name != "linalg.generic" or len(op.results) != 1 or \
            any(it != "parallel" for it in _iterators(op)):
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    out_type = op.operands[len(op.operands) - 1].type
    loops = [_transposed_loop(m, v.type, dim) for m, v in zip(maps, op.operands)]
    out_dim = next((d for d in [loops[-1]] + loops[:-1] if d is not None), None)
    if out_dim is None:
        return None
    sides = [_transpose_tile(ranges[d]) for d in (dim, out_dim)]
    # At least one side of 8: two odd sides (4 x 4, 4 x 500) ran slower than one vector.
    if None in sides or TRANSPOSE_TILE not in sides or sides[0] * sides[1] < MIN_TRANSPOSE_TILE:
        return None
    for t in [v.type for v in op.operands] + [out_type]:
        et = t.element_type if isinstance(t, ir.ShapedType) else t
        if not isinstance(et, (ir.F32Type, ir.IntegerType)) or \
                (isinstance(et, ir.IntegerType) and et.width != 32):
            return None
    return out_dim


def _transpose_tile(extent: int) -> Optional[int]:
    """The side of a transpose tile along a loop of `extent` iterations (None: no
    tile without a partial one)."""
    if extent % TRANSPOSE_TILE == 0:
        return TRANSPOSE_TILE
    if extent <= ODD_TILE:
        return extent
    if extent % 4 == 0:
        return 4
    return None


def _innermost(ranges: list[int], scalar: bool = False, dim: Optional[int] = None,
               transposed: Optional[int] = None, lanes: int = VECTOR) -> Optional[Schedule]:
    if not ranges or 0 in ranges:
        return None
    tiles = [1] * len(ranges)
    if scalar:
        # Booleans (and i4, f4, ...) are bytes in memory but packed bits in an LLVM
        # vector: a vector load or store would mix them up. One element per tile.
        return Schedule("scalar", [[0 if r == 1 else 1 for r in ranges]])
    d = len(ranges) - 1 if dim is None else dim
    if transposed is not None:
        # A tile read along one loop and written along the other, transposed
        # in registers: both sides stay contiguous (a column of 64 elements written
        # one by one, 4 KiB apart, missed the cache on every store).
        tiles[d] = _transpose_tile(ranges[d])
        tiles[transposed] = _transpose_tile(ranges[transposed])
        return Schedule("transpose", [tiles])
    tiles[d] = vector_lanes(ranges[d], lanes)
    if tiles[d] < 8 and ranges[d] <= MAX_VECTOR:
        # e.g. 1000 = 8 x 125 or a prime: one whole row is a better vector
        tiles[d] = ranges[d]
    return Schedule("elementwise", [[0 if t == r else t for t, r in zip(tiles, ranges)]])


def _iterators(op) -> list[str]:
    return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]


# Combiners whose neutral element is an infinity, and the float types that have none
# (LLVM's names end in FN, FNUZ or FNU: f8E4M3FN, f6E2M3FN, ...), in which upstream's
# neutral element of a max is NaN: a max of f8E4M3FN values came out NaN.
_INFINITE_NEUTRALS = ("arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf")


def _finite_only(t: ir.Type) -> bool:
    return str(t).endswith(("FN", "FNUZ", "FNU"))


def _lane_wise_combiner(op) -> bool:
    """Whether the body of a one-result generic ends in `out = combiner(out, value)` with
    the output element used nowhere else: then partial results per lane combine
    exactly as the whole reduction would."""
    if len(op.results) != 1:
        return False
    block = op.regions[0].blocks[0]
    out = block.arguments[len(block.arguments) - 1]
    ops = list(block.operations)
    yielded = ops[-1].operands[0]
    combiner = yielded.owner
    if isinstance(combiner, ir.Block) or combiner.name not in _COMBINERS:
        return False
    if combiner.name in _INFINITE_NEUTRALS and _finite_only(yielded.type):
        return False  # the accumulator would start at +-inf, which is NaN there
    uses = [u.owner for u in out.uses]
    return len(uses) == 1 and uses[0] == combiner and out in list(combiner.operands)


def _row_reduction(op, ranges: list[int], dim: int) -> Optional[Schedule]:
    """Reductions whose contiguous (vector) loop is a reduction: one row at a time, the
    reduction loops accumulated lane-wise into a vector, reduced horizontally once."""
    iterators = _iterators(op)
    if iterators[dim] != "reduction" or not _body_ok(op) or not _lane_wise_combiner(op):
        return None
    lanes = vector_lanes(ranges[dim])
    if lanes % 16 and ranges[dim] % 8 == 0:
        # Registers filled only in part (1000 -> 40 = 16 + 16 + 8): one 8-lane register
        # per chunk ran faster (rows of 1000: sum 1.1x -> 0.7x XLA's time, max 1.7x ->
        # 1.2x; rows of 72, 120, 200, 3000 as fast or faster).
        lanes = 8
    if lanes < MIN_ACCUMULATOR:
        return None
    reduced = 1
    for r, it in zip(ranges, iterators):
        reduced *= r if it == "reduction" else 1
    if reduced <= lanes:
        return None  # one chunk: nothing to carry
    rows = [1 if it == "parallel" and r > 1 else 0 for r, it in zip(ranges, iterators)]
    chunks = [0 if it == "parallel" else (lanes if d == dim else 1)
              for d, it in enumerate(iterators)]
    return Schedule("reduction", [rows], reduction=chunks)


def _contraction(ranges: list[int], m: list[int], n: list[int], k: list[int],
                 batch: list[int]) -> Optional[Schedule]:
    if not (m and n and k):
        return None
    cache = [0] * len(ranges)
    reg = [0] * len(ranges)
    for d in batch:
        cache[d] = 1
    for group in (m, n, k):
        for d in group[:-1]:
            cache[d] = 1
    mi, ni, ki = m[-1], n[-1], k[-1]
    cache[mi], cache[ni], cache[ki] = (fit(ranges[mi], CACHE_M),
                                       vector_lanes(ranges[ni], CACHE_N),
                                       fit(ranges[ki], CACHE_K))
    reg[mi] = fit(cache[mi] or ranges[mi], REG_M)
    reg[ni] = _register_columns(cache[ni] or ranges[ni])
    reg[ki] = 1
    if reg[mi] * reg[ni] > 512:
        return None
    cache = [0 if c == r else c for c, r in zip(cache, ranges)]
    outer = [0 if d in k else c for d, c in enumerate(cache)]
    inner = [c if d in k else 0 for d, c in enumerate(cache)]
    levels = [outer, inner, reg] if any(outer) else [inner, reg]
    return Schedule("contraction", levels, parallel_levels=1 if any(outer) else 0)


def _register_columns(size: int) -> int:
    """Columns of the contraction's register tile: 32, 16 or 8 lanes when one divides
    `size`, else the largest divisor up to REG_N. Other widths are pathological: with
    40 columns (1000's cache tile of 200) a [1152, 64] x [64, 1000] product ran 16x
    slower than with 8, and 25 as slow."""
    for t in (32, 16, 8):
        if size % t == 0:
            return t
    return fit(size, REG_N)


def _threaded(sched: Optional[Schedule], iterators: list[str]) -> Optional[Schedule]:
    """The outermost loop that the first level tiles and whose tiles are independent
    (a parallel loop) becomes a level of its own, tiled with scf.forall: the tiles can
    run on several threads. mlxc-parallelize-tile-loops decides, after bufferization,
    whether the work is worth it; otherwise the forall becomes a plain loop again."""
    if sched is None or sched.parallel_levels or not sched.levels:
        return sched
    first = sched.levels[0]
    for d, (size, iterator) in enumerate(zip(first, iterators)):
        if size and iterator == "parallel":
            outer = [size if i == d else 0 for i in range(len(first))]
            rest = [0 if i == d else t for i, t in enumerate(first)]
            levels = [outer] + ([rest] if any(rest) else []) + sched.levels[1:]
            return replace(sched, levels=levels, parallel_levels=1)
    return sched


def choose(op) -> Optional[Schedule]:
    """The schedule for one linalg op on tensors, or None to leave it as loops."""
    if library_calls.is_set_aside(op):
        return None  # mlxc-library-matmuls makes it a call to the runtime's kernel
    sched = _choose(op)
    if sched is None:
        return _single_elements(op)
    if sched.parallel_levels:
        return sched
    if op.name == "linalg.generic":
        iterators = _iterators(op)
    elif op.name.startswith("linalg.conv"):
        iterators = _NAMED_ITERATORS[op.name]
    elif op.name == "linalg.fill":
        iterators = ["parallel"] * len(sched.levels[0])
    else:
        return sched
    return _threaded(sched, iterators)


def _single_elements(op) -> Optional[Schedule]:
    """Every loop tiled to 1 for a large op with no schedule that the vectorizer would
    make one vector of its whole iteration space (contractions and 1-D convolutions of
    other types): scalar code, but code that compiles. Ops it cannot vectorize (2-D
    and grouped convolutions, pooling) stay loop nests that LLVM vectorizes: tiled to
    1 they ran 6x slower (a depthwise convolution)."""
    if op.name not in ("linalg.matmul", "linalg.batch_matmul", "linalg.conv_1d_nwc_wcf"):
        return None
    if any(_static_shape(v.type) is None for v in op.operands):
        return None
    if max(math.prod(_static_shape(v.type)) for v in op.operands) <= MAX_WHOLE_VECTOR:
        return None
    return Schedule("single elements", [[1] * len(_NAMED_ITERATORS[op.name])])


def _choose(op) -> Optional[Schedule]:
    from ..._mlir import linalg

    name = op.name
    if any(_static_shape(v.type) is None for v in op.operands):
        return None
    shapes = [_static_shape(v.type) for v in op.operands]
    if name == "linalg.fill":
        return _innermost(shapes[-1], has_sub_byte(op))
    if name == "linalg.conv_2d_nhwc_hwcf":
        if not all(_is_float(v.type) for v in op.operands[:2]):
            return None
        (n, oh, ow, f), (kh, kw, c, _) = shapes[2], shapes[1]
        if 0 in (n, oh, ow, f, kh, kw, c):
            return None
        return Schedule("convolution", [[1, 1, fit(ow, 8), fit(f, REG_N), 1, 1, fit(c, 8)]],
                        decompose=True)
    if name == "linalg.conv_2d_nhwc_hwcf":
        return None
    if name == "linalg.conv_1d_nwc_wcf" and all(_is_float(v.type) for v in op.operands[:2]):
        # What a 2-D convolution is decomposed to: the same register tile of 8 output
        # positions x 32 output channels, one tap and 8 input channels at a time.
        (n, ow, f), (kw, c, _) = shapes[2], shapes[1]
        if 0 in (n, ow, f, kw, c):
            return None
        return Schedule("convolution", [[1, fit(ow, 8), fit(f, REG_N), 1, fit(c, 8)]])
    if name in ("linalg.matmul", "linalg.batch_matmul", "linalg.generic") and \
            linalg.isa_contraction_op(op):
        if name == "linalg.matmul":
            (mm, kk), (_, nn) = shapes[0], shapes[1]
            ranges, dims = [mm, nn, kk], ([0], [1], [2], [])
        elif name == "linalg.batch_matmul":
            (bb, mm, kk), (_, _, nn) = shapes[0], shapes[1]
            ranges, dims = [bb, mm, nn, kk], ([1], [2], [3], [0])
        else:
            if not _body_ok(op):
                return None
            ranges = _generic_ranges(op)
            if ranges is None:
                return None
            cd = linalg.infer_contraction_dimensions(op)
            dims = (list(cd.m), list(cd.n), list(cd.k), list(cd.batch))
        if 0 in ranges:
            return None
        if all(_contractible(v.type) for v in op.operands):
            sched = _contraction(ranges, *dims)
            if sched is not None:
                return sched
    if name == "linalg.generic":
        ranges = _generic_ranges(op)
        if ranges is None:
            return None
        dim = _vector_dim(op, ranges)
        if ranges and 0 not in ranges and not has_sub_byte(op):
            sched = _row_reduction(op, ranges, dim)
            if sched is not None:
                return sched
        if has_sub_byte(op) or not _body_ok(op):
            return _innermost(ranges, has_sub_byte(op) and _sub_byte_along(op, dim), dim)
        # A column reduction (its vector runs along a parallel loop, its accumulator
        # stays in registers across the reduction loops): a wider vector reads longer
        # runs of each row.
        lanes = COLUMN_VECTOR if "reduction" in _iterators(op) else VECTOR
        return _innermost(ranges, False, dim, _transposed_dim(op, ranges, dim), lanes)
    return None
