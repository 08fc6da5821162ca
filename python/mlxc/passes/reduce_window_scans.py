"""mlxc-reduce-window-scans: a reduce_window that is a prefix scan becomes log2(n) shifts.

JAX exports `jnp.cumsum`, `cumprod`, `cummax` and `cummin` on the CPU as a
reduce_window whose window spans the whole scanned dimension, padded by n - 1 on one
side with the combiner's identity. Lowered as written that is a pooling of n * n
steps per row (cumsum of 256x1024: 270M scalar adds, 112x XLA's time). As XLA does,
we compute the scan in log2(n) steps instead (Hillis-Steele): x = x op shift(x, s)
for s = 1, 2, 4, ..., each step an elementwise op on shifted copies that the CPU
schedules vectorize. Float sums and products are then combined in a tree, not left
to right: a different rounding (of log2(n) ulps), so short ones keep the written order.
"""

from __future__ import annotations

import math

from .. import irutil
from .._mlir import ir
from . import PythonPass

# Float sums and products shorter than this keep the left-to-right order (the
# StableHLO interpreter's, to the last ulp): n * n steps cost little there. Integer
# scans and max/min are exact in any order.
MIN_FLOAT_TREE = 64

_COMBINERS = ("stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum")


def _dense_i64(op, name: str, rank: int, default: int) -> list[int]:
    if name not in op.attributes:
        return [default] * rank
    attr = op.attributes[name]
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return list(attr)
    return [int(v) for v in ir.DenseIntElementsAttr(attr)]


def _padding(op, rank: int) -> list[tuple[int, int]]:
    if "padding" not in op.attributes:
        return [(0, 0)] * rank
    flat = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["padding"])]
    return list(zip(flat[0::2], flat[1::2]))


def _constant(value) -> float | int | None:
    """The scalar a rank-0 constant (possibly through a rank-0 broadcast) holds."""
    owner = value.owner
    while not isinstance(owner, ir.Block) and owner.name == "stablehlo.broadcast_in_dim" and \
            ir.RankedTensorType(owner.operands[0].type).rank == 0:
        owner = owner.operands[0].owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.constant":
        return None
    try:
        attr = owner.attributes["value"]
        if isinstance(attr, ir.DenseFPElementsAttr):
            return float(attr[0]) if len(attr) == 1 else None
        if isinstance(attr, ir.DenseIntElementsAttr):
            return int(attr[0]) if len(attr) == 1 else None
    except (TypeError, ValueError):
        pass  # complex, bf16, f16, ...: the bindings cannot read them; left as they are
    return None


def _is_identity(combiner: str, value, element_type) -> bool:
    if value is None:
        return False
    if combiner == "stablehlo.add":
        return value == 0
    if combiner == "stablehlo.multiply":
        return value == 1
    lowest = combiner == "stablehlo.maximum"
    if isinstance(element_type, ir.IntegerType):
        width = element_type.width
        if element_type.is_unsigned:
            return value == (0 if lowest else (1 << width) - 1)
        return value == (-(1 << (width - 1)) if lowest else (1 << (width - 1)) - 1)
    return value == (-math.inf if lowest else math.inf)


def _scan(op):
    """(combiner, dim, n, reverse) when `op` is an inclusive prefix scan, else None."""
    if op.name != "stablehlo.reduce_window" or len(op.operands) != 2 or len(op.results) != 1:
        return None
    t = op.operands[0].type
    if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
        return None
    t = ir.RankedTensorType(t)
    body = list(op.regions[0].blocks[0].operations)
    args = list(op.regions[0].blocks[0].arguments)
    if len(body) != 2 or body[0].name not in _COMBINERS or \
            set(body[0].operands) != set(args) or len(args) != 2 or \
            list(body[1].operands) != [body[0].result]:
        return None
    combiner = body[0].name
    if body[0].name != "stablehlo.add" and t.element_type == ir.IntegerType.get_signless(1):
        return None
    rank = t.rank
    window = _dense_i64(op, "window_dimensions", rank, 1)
    if any(s != 1 for s in _dense_i64(op, "window_strides", rank, 1)) or \
            any(s != 1 for s in _dense_i64(op, "base_dilations", rank, 1)) or \
            any(s != 1 for s in _dense_i64(op, "window_dilations", rank, 1)):
        return None
    dims = [d for d, w in enumerate(window) if w != 1]
    if len(dims) != 1:
        return None
    d = dims[0]
    n = t.shape[d]
    pads = _padding(op, rank)
    if window[d] != n or n < 2 or any(p != (0, 0) for i, p in enumerate(pads) if i != d):
        return None
    if pads[d] not in ((n - 1, 0), (0, n - 1)):
        return None
    if combiner in ("stablehlo.add", "stablehlo.multiply") and \
            not isinstance(t.element_type, ir.IntegerType) and n < MIN_FLOAT_TREE:
        return None
    if not _is_identity(combiner, _constant(op.operands[1]), t.element_type):
        return None
    return combiner, d, n, pads[d] == (0, n - 1)


def _shifted(x, init, d: int, s: int, reverse: bool):
    """x moved s places along d (towards higher indices, or lower when reverse), the
    vacated places holding init."""
    t = ir.RankedTensorType(x.type)
    start, limit = [0] * t.rank, list(t.shape)
    if reverse:
        start[d] = s
    else:
        limit[d] = t.shape[d] - s
    part_shape = [hi - lo for lo, hi in zip(start, limit)]
    part = ir.Operation.create(
        "stablehlo.slice", results=[ir.RankedTensorType.get(part_shape, t.element_type)],
        operands=[x], attributes={"start_indices": ir.DenseI64ArrayAttr.get(start),
                                  "limit_indices": ir.DenseI64ArrayAttr.get(limit),
                                  "strides": ir.DenseI64ArrayAttr.get([1] * t.rank)}).result
    low, high = [0] * t.rank, [0] * t.rank
    (high if reverse else low)[d] = s
    return ir.Operation.create(
        "stablehlo.pad", results=[t], operands=[part, init],
        attributes={"edge_padding_low": ir.DenseI64ArrayAttr.get(low),
                    "edge_padding_high": ir.DenseI64ArrayAttr.get(high),
                    "interior_padding": ir.DenseI64ArrayAttr.get([0] * t.rank)}).result


def _rewrite(op, combiner: str, d: int, n: int, reverse: bool) -> None:
    def build():
        x, init = op.operands[0], op.operands[1]
        s = 1
        while s < n:
            x = ir.Operation.create(combiner, results=[x.type],
                                    operands=[x, _shifted(x, init, d, s, reverse)]).result
            s *= 2
        return x

    irutil.replace_op(op, build)


def run(module) -> None:
    # Only the reduce_windows are held: replacing one frees the ops of its body, and a
    # scan's body (a combiner and a return) holds no other reduce_window.
    for op in irutil.ops_named(module, "stablehlo.reduce_window"):
        scan = _scan(op)
        if scan is not None:
            _rewrite(op, *scan)


PASS = PythonPass(
    argument="mlxc-reduce-window-scans",
    summary="reduce_windows that are prefix scans (cumsum, cumprod, cummax, cummin) as "
            "log2(n) shifted elementwise steps",
    run=run,
)
