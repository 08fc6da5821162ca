"""mlxc-blocked-transposes: transposes that move the contiguous dimension, in blocks of 8.

The CPU schedule of an elementwise linalg op (a transpose among them) vectorizes along
the input's contiguous dimension, so a transpose that moves that dimension elsewhere
writes one element per output row for each vector lane. With a whole row of lanes
(say 256), the rows written are a power-of-two stride apart, all fall in the same few
L1 cache sets and evict each other before the next input row fills them in: a
512x256 f32 transpose took 1.6 ms, XLA 0.13 ms. Splitting that dimension into
[L/8, 8] (an expand_shape before and a collapse_shape after, both free) makes the
vector 8 lanes wide and puts the L/8 loop outside: 8 output rows are written at a
time, which stay in cache while the following input rows complete their lines
(0.13 ms).

It runs on linalg after fusion: on StableHLO, the fusion's reshape propagation
carried the split into the transposes' producers and consumers (a contraction then
got an 8-wide register tile). Transposes the CPU schedules give tiles transposed
in registers (32-bit elements, 8x8 or with a short side whole: see
schedules._transpose_tile) are faster that way and left to them; the blocks serve
the others (f64: 1 ms -> 0.07 ms for 512x256).
"""

from __future__ import annotations

from .. import irutil
from .._mlir import ir, tensor
from . import PythonPass

BLOCK = 8
# Output rows closer than this are written fast enough whole: 16 f32 (64 bytes, a cache
# line) apart, splitting made an NCHW -> NHWC transpose 2x slower.
MIN_STRIDE_BYTES = 256


def _permutation(op) -> list[int] | None:
    """For a linalg.generic that only copies its input to its output through a
    permutation, the loop that indexes each input dimension; otherwise None."""
    if op.name != "linalg.generic" or len(op.operands) != 2 or len(op.results) != 1:
        return None
    body = op.regions[0].blocks[0]
    ops = list(body.operations)
    if len(ops) != 1 or ops[0].operands[0] != body.arguments[0]:
        return None
    if any(str(it) != "#linalg.iterator_type<parallel>" for it in op.attributes["iterator_types"]):
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if not maps[1].is_permutation or maps[1] != ir.AffineMap.get_identity(maps[1].n_dims):
        return None
    loops = []
    for expr in maps[0].results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        loops.append(ir.AffineDimExpr(expr).position)
    return loops if sorted(loops) == list(range(maps[0].n_dims)) else None


def _block(op, loops: list[int]) -> int:
    """The block to split the input's last dimension by, or 0 to leave `op` alone."""
    t = op.operands[0].type
    if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
        return 0
    t = ir.RankedTensorType(t)
    element = t.element_type
    width = element.width if isinstance(element, (ir.IntegerType, ir.FloatType)) else 0
    if width < 8:
        return 0  # sub-byte elements are scheduled one at a time anyway
    last, q = t.rank - 1, loops[-1]
    if t.rank < 2 or q == last:
        return 0  # the contiguous dimension stays contiguous: a plain vector copy
    if t.shape[last] <= BLOCK:
        return 0  # already at most 8 rows written at a time
    out = ir.RankedTensorType(op.results[0].type).shape
    stride = 1
    for d in range(q + 1, len(out)):
        stride *= out[d]
    if stride * width < 8 * MIN_STRIDE_BYTES:
        return 0  # rows this close share few cache sets
    for block in (BLOCK, 4):
        if t.shape[last] % block == 0:
            return block
    return 0


def _groups(rank: int, split: int) -> ir.ArrayAttr:
    """Reassociation of a rank-`rank` shape into one whose dim `split` is two dims."""
    i64 = ir.IntegerType.get_signless(64)
    groups = []
    for d in range(rank):
        dims = [d] if d < split else [d + 1] if d > split else [d, d + 1]
        groups.append(ir.ArrayAttr.get([ir.IntegerAttr.get(i64, x) for x in dims]))
    return ir.ArrayAttr.get(groups)


def _rewrite(op, loops: list[int], block: int) -> None:
    src = ir.RankedTensorType(op.operands[0].type)
    out = ir.RankedTensorType(op.results[0].type)
    element, last, q = src.element_type, src.rank - 1, loops[-1]
    src_shape = list(src.shape[:last]) + [src.shape[last] // block, block]
    out_shape = list(out.shape[:q]) + [out.shape[q] // block, block] + list(out.shape[q + 1:])
    # Loops after q move one place out; the split dimension is loops q (blocks) and q+1.
    shifted = [loop + 1 if loop > q else loop for loop in loops[:-1]] + [q, q + 1]
    n = len(out_shape)
    maps = [ir.AffineMap.get(n, 0, [ir.AffineDimExpr.get(d) for d in shifted]),
            ir.AffineMap.get_identity(n)]
    attrs = {name: op.attributes[name] for name in op.attributes}
    attrs["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    parallel = list(op.attributes["iterator_types"])[0]
    attrs["iterator_types"] = ir.ArrayAttr.get([parallel] * n)
    with op.location, ir.InsertionPoint(op):
        x = tensor.ExpandShapeOp(ir.RankedTensorType.get(src_shape, element), op.operands[0],
                                 _groups(src.rank, last), [], src_shape).result
        init = tensor.EmptyOp(out_shape, element).result
        new = ir.Operation.create("linalg.generic",
                                  results=[ir.RankedTensorType.get(out_shape, element)],
                                  operands=[x, init], attributes=attrs, regions=1)
        body = new.regions[0].blocks.append(element, element)
        with ir.InsertionPoint(body):
            ir.Operation.create("linalg.yield", operands=[body.arguments[0]])
        y = tensor.CollapseShapeOp(out, new.results[0], _groups(out.rank, q)).result
    op.results[0].replace_all_uses_with(y)
    op.erase()


def _register_tiled(op) -> bool:
    from ..targets.cpu import schedules

    chosen = schedules.choose(op)
    return chosen is not None and chosen.kind == "transpose"


def run(module) -> None:
    targets = []
    for op in irutil.walk(module):
        loops = _permutation(op)
        if loops is not None and not _register_tiled(op):
            block = _block(op, loops)
            if block:
                targets.append((op, loops, block))
    for op, loops, block in targets:
        _rewrite(op, loops, block)


PASS = PythonPass(
    argument="mlxc-blocked-transposes",
    summary="linalg transposes that move the contiguous dimension split it into blocks of 8, "
            "so the CPU schedule writes 8 output rows at a time",
    run=run,
)
